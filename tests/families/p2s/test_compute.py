"""The build's property stage: journaled, resumed to the same bytes, parallel, guarded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require_module

from chemgauge.errors import ConfigError
from chemgauge.eval.executors import ExecutorConfig
from chemgauge.families.p2s.build import MANIFEST, BuildResult, build_benchmark
from chemgauge.families.p2s.compute import PROPERTY_JOURNAL, ComputeExecution
from chemgauge.families.p2s.config import BuildConfig
from chemgauge.families.p2s.engine.guard import ComputeLimits, GuardedCompute, close_calculators
from chemgauge.families.p2s.engine.properties import PropertyResult, TableProvider
from chemgauge.families.p2s.release import private_dir

from .conftest import DIRECTORIES, SECRET, SOURCES, write_table

CONFIG = BuildConfig(directories=DIRECTORIES, candidates=4, counterfactuals_per_record=2)


def build(*args: Any, **kwargs: Any) -> BuildResult:
    """A build with the fixtures' secret, so builds into two folders give the same files."""
    return build_benchmark(*args, secret=SECRET, **kwargs)


SERIAL = ComputeExecution(executor=ExecutorConfig(kind="serial", jobs=1, chunk_size=3))


def released(folder: Path) -> dict[str, bytes]:
    """Every file a build wrote except its journal, the manifest's timing block removed."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != PROPERTY_JOURNAL:
            data = path.read_bytes()
            if path.name == MANIFEST:
                manifest = json.loads(data)
                manifest.pop("timing")
                data = json.dumps(manifest, sort_keys=True).encode()
            files[str(path.relative_to(folder))] = data
    return files


@pytest.fixture
def table_build(tmp_path: Path) -> dict[str, Path]:
    sources = tmp_path / "sources.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    table = tmp_path / "table.jsonl"
    write_table(sources, table, CONFIG)
    clean = tmp_path / "clean"
    build(sources, clean, TableProvider(table), CONFIG, execution=SERIAL)
    return {"sources": sources, "table": table, "clean": clean}


class Interrupted(TableProvider):
    """The real table provider, interrupted (like Ctrl-C) after ``stop_after`` molecules."""

    def __init__(self, path: Path, stop_after: int) -> None:
        super().__init__(path)
        self.stop_after = stop_after

    def _compute(self, batch: list[str]) -> list[PropertyResult]:
        if self.computed + len(batch) > self.stop_after:
            raise KeyboardInterrupt
        return super()._compute(batch)


def test_interrupted_build_resumes_to_identical_files(
    table_build: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "resumed"
    with pytest.raises(KeyboardInterrupt):
        build(
            table_build["sources"], out, Interrupted(table_build["table"], 6), CONFIG,
            execution=SERIAL,
        )  # fmt: skip
    assert not (out / MANIFEST).exists()
    journal = (private_dir(out) / PROPERTY_JOURNAL).read_text().splitlines()
    assert len(journal) == 1 + 6  # header and the two chunks of three finished before the stop
    provider = TableProvider(table_build["table"])
    result = build(table_build["sources"], out, provider, CONFIG, execution=SERIAL)
    assert result.resumed_molecules == 6
    assert provider.computed == result.provider_molecules - 6  # the journal was not redone
    assert released(out) == released(table_build["clean"])
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["timing"]["molecules_from_journal"] == 6


def test_torn_journal_line_is_recomputed(table_build: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "torn"
    build(
        table_build["sources"], out, TableProvider(table_build["table"]), CONFIG, execution=SERIAL
    )
    journal = private_dir(out) / PROPERTY_JOURNAL
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:5]) + lines[5][:20])  # a kill in the middle of a line
    result = build(
        table_build["sources"], out, TableProvider(table_build["table"]), CONFIG, execution=SERIAL
    )
    assert result.resumed_molecules == 4
    assert released(out) == released(table_build["clean"])


def test_timeouts_and_crashes_are_retried_on_resume(
    table_build: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "retry"
    build(
        table_build["sources"], out, TableProvider(table_build["table"]), CONFIG, execution=SERIAL
    )
    journal = private_dir(out) / PROPERTY_JOURNAL
    lines = journal.read_text().splitlines()
    rows = [json.loads(line) for line in lines[1:]]
    rows[0].update(values={}, error="timeout: over 600 s")  # the run's outcome: retried
    rows[1].update(values={}, error="calculator_crashed: exit code -9")  # retried
    rows[2].update(values={}, error="xTB failed: SCF did not converge")  # the molecule's: kept
    journal.write_text("\n".join([lines[0], *map(json.dumps, rows)]) + "\n")
    provider = TableProvider(table_build["table"])
    result = build(table_build["sources"], out, provider, CONFIG, execution=SERIAL)
    assert provider.computed == 2
    assert result.resumed_molecules == result.provider_molecules - 2
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["property_failures"] == {"xTB failed": 1}


def test_process_pool_build_equals_serial(table_build: dict[str, Path], tmp_path: Path) -> None:
    pool = ComputeExecution(executor=ExecutorConfig(kind="local", jobs=2, chunk_size=2))
    out = tmp_path / "pool"
    build(table_build["sources"], out, TableProvider(table_build["table"]), CONFIG, execution=pool)
    assert released(out) == released(table_build["clean"])


def test_an_audit_worker_that_dies_is_attacked_again_in_the_parent(
    table_build: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit attacks directories on the pool; a worker that dies mid-attack costs its
    directory a second attack in the building process, never an unaudited release."""
    import os

    from chemgauge.families.p2s import build as build_module

    parent = os.getpid()
    attack = build_module._attack_units
    attacked_here: list[str] = []

    def dies_in_a_worker(units):  # type: ignore[no-untyped-def]
        if os.getpid() != parent and units[0][0] == "gap":
            os._exit(9)  # a crash the pool cannot report as an exception
        if os.getpid() == parent:
            attacked_here.extend(unit[0] for unit in units)
        return attack(units)

    monkeypatch.setattr(build_module, "_attack_units", dies_in_a_worker)
    pool = ComputeExecution(executor=ExecutorConfig(kind="local", jobs=2, chunk_size=2))
    out = tmp_path / "pool"
    build(table_build["sources"], out, TableProvider(table_build["table"]), CONFIG, execution=pool)
    # (a worker's death also fails the other chunks in flight on its pool, which the executor
    # retries; those may end up attacked here too)
    assert "gap" in attacked_here
    assert released(out) == released(table_build["clean"])


def test_audit_units_run_costliest_first_and_report_in_view_order(
    table_build: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build on several workers hands out the audit's units costliest first (a
    counterfactual view, never a shuffled one, comes first and the cheap shuffled work last),
    two units a directory so even a one-directory build splits, and the audit comes out in
    the view order of a serial build."""
    from chemgauge.eval.executors import SerialExecutor
    from chemgauge.families.p2s import build as build_module

    handed_out: list[tuple[str, tuple[str, ...]]] = []

    class Recording(SerialExecutor):
        def map(self, fn, items, *, chunk_size=None):  # type: ignore[no-untyped-def]
            items = list(items)
            handed_out.extend((unit[0], unit[3]) for unit in items)
            return super().map(fn, items, chunk_size=chunk_size)

    monkeypatch.setattr(build_module, "make_executor", lambda config: Recording(config))
    pool = ComputeExecution(executor=ExecutorConfig(kind="local", jobs=2, chunk_size=2))
    out = tmp_path / "pool"
    build(table_build["sources"], out, TableProvider(table_build["table"]), CONFIG, execution=pool)
    assert sorted(handed_out) == sorted(
        (d, views) for d in DIRECTORIES for views in (("correct", "shuffled"), ("counterfactual",))
    )
    assert handed_out[0][1] == ("counterfactual",)
    assert handed_out[-1][1] == ("correct", "shuffled")
    assert released(out) == released(table_build["clean"])

    handed_out.clear()
    one = BuildConfig(directories=("dipole",), candidates=4, counterfactuals_per_record=2)
    build(
        table_build["sources"], tmp_path / "one", TableProvider(table_build["table"]), one,
        execution=pool,
    )  # fmt: skip
    assert handed_out == [("dipole", ("counterfactual",)), ("dipole", ("correct", "shuffled"))]


def test_properties_start_before_the_selection_ends(
    table_build: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Selection streams into the property stage: the first molecules are computed while
    later records are still being chosen, and the release is the same bytes."""
    from chemgauge.families.p2s import selection

    events: list[str] = []
    chosen = selection.iter_records

    def noted(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        for record in chosen(*args, **kwargs):  # type: ignore[arg-type]
            events.append("record")
            yield record

    class Noting(TableProvider):
        def _compute(self, batch: list[str]) -> list[PropertyResult]:
            events.extend("molecule" for _ in batch)
            return super()._compute(batch)

    monkeypatch.setattr(selection, "iter_records", noted)
    out = tmp_path / "streamed"
    build(table_build["sources"], out, Noting(table_build["table"]), CONFIG, execution=SERIAL)
    assert released(out) == released(table_build["clean"])
    first_molecule, last_record = (
        events.index("molecule"),
        len(events) - events[::-1].index("record"),
    )
    assert first_molecule < last_record - 1


def test_a_fully_resumed_build_starts_no_executor(
    table_build: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every molecule in the journal: no pool and no cluster is started (a Ray build that
    resumes finished work must not need the cluster)."""
    from chemgauge.families.p2s import compute

    out = tmp_path / "again"
    provider = TableProvider(table_build["table"])
    build(table_build["sources"], out, provider, CONFIG, execution=SERIAL)

    def refuse(config: ExecutorConfig) -> None:
        raise AssertionError(f"an executor was started: {config}")

    monkeypatch.setattr(compute, "make_executor", refuse)
    result = build(table_build["sources"], out, provider, CONFIG, execution=SERIAL)
    assert result.resumed_molecules == result.provider_molecules > 0
    assert released(out) == released(table_build["clean"])


@pytest.mark.slow
@pytest.mark.external
def test_ray_build_equals_serial(table_build: dict[str, Path], tmp_path: Path) -> None:
    require_module("ray")
    ray = ComputeExecution(executor=ExecutorConfig(kind="ray", jobs=2, chunk_size=5))
    out = tmp_path / "ray"
    build(table_build["sources"], out, TableProvider(table_build["table"]), CONFIG, execution=ray)
    assert released(out) == released(table_build["clean"])


def test_journal_of_another_provider_or_limits_is_refused(
    table_build: dict[str, Path], tmp_path: Path
) -> None:
    out = table_build["clean"]
    tighter = ComputeExecution(executor=SERIAL.executor, limits=ComputeLimits(max_heavy_atoms=9))
    with pytest.raises(ConfigError, match=r"another provider or under other limits.*--restart"):
        build(
            table_build["sources"], out, TableProvider(table_build["table"]), CONFIG,
            execution=tighter,
        )  # fmt: skip
    # An edited table is another provider too: its values would be stale.
    table = table_build["table"]
    table.write_text(table.read_text().replace('"D"', '"D" '))
    with pytest.raises(ConfigError, match="--restart"):
        build(table_build["sources"], out, TableProvider(table), CONFIG, execution=SERIAL)
    restart = ComputeExecution(executor=SERIAL.executor, restart=True)
    result = build(table_build["sources"], out, TableProvider(table), CONFIG, execution=restart)
    assert result.resumed_molecules == 0


def test_size_limit_refuses_and_counts(table_build: dict[str, Path], tmp_path: Path) -> None:
    limited = ComputeExecution(executor=SERIAL.executor, limits=ComputeLimits(max_heavy_atoms=9))
    out = tmp_path / "limited"
    provider = TableProvider(table_build["table"])
    result = build(table_build["sources"], out, provider, CONFIG, execution=limited)
    manifest = json.loads((out / MANIFEST).read_text())
    refused = manifest["property_failures"]["too_large"]
    assert refused > 0 and provider.computed == result.provider_molecules - refused
    assert manifest["config"]["limits"] == {"max_heavy_atoms": 9, "time_limit_seconds": 600.0}
    assert result.skipped["dipole:source_without_property"] > 0


def test_a_2001_atom_molecule_is_refused_before_any_work(table_build: dict[str, Path]) -> None:
    provider = TableProvider(table_build["table"])
    (result,) = GuardedCompute(provider, ComputeLimits())(["C" * 2001])
    assert result.error == "too_large: 2001 heavy atoms (limit 100)"
    assert provider.calls == 0


@pytest.mark.slow
def test_time_limit_kills_the_calculator_and_goes_on() -> None:
    require_module("tblite.interface")
    from chemgauge.families.p2s.engine.xtb import XtbProvider

    # A 62-atom numerical Hessian takes seconds; water takes a fraction of one.
    work = GuardedCompute(XtbProvider(infrared=True), ComputeLimits(time_limit=1.0))
    try:
        slow, fast = work(["CCCCCCCCCCCCCCCCCCCC", "O"])
    finally:
        close_calculators()
    assert slow.error == "timeout: over 1 s" and not slow.values
    assert fast.error is None and "infrared" in fast.values


XTB_SOURCES = [s.split()[0] for s in SOURCES[:12]]


def _build_command(sources: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "chemgauge", "p2s", "build", str(sources), "-o", str(out),
        "-p", "dipole", "-p", "gap", "--provider", "xtb", "-q",
        "--secret-file", str(sources.with_name("secret")), *extra,
    ]  # fmt: skip


def _journal_rows(path: Path) -> int:
    try:
        return max(0, path.read_bytes().count(b"\n") - 1)
    except FileNotFoundError:
        return 0


@pytest.mark.slow
@pytest.mark.parametrize("executor", [["--executor", "serial"], ["--jobs", "2"]])
def test_sigkill_mid_build_resumes_to_identical_files(tmp_path: Path, executor: list[str]) -> None:
    require_module("tblite.interface")
    sources = tmp_path / "sources.smi"
    sources.write_text("\n".join(XTB_SOURCES) + "\n")
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    subprocess.run(_build_command(sources, clean, *executor), check=True, timeout=600)
    total = _journal_rows(private_dir(clean) / PROPERTY_JOURNAL)
    proc = subprocess.Popen(_build_command(sources, killed, *executor), start_new_session=True)
    deadline = time.monotonic() + 300
    while _journal_rows(private_dir(killed) / PROPERTY_JOURNAL) < 5 and proc.poll() is None:
        assert time.monotonic() < deadline, "the build journaled nothing in 300 s"
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)  # the whole session: CLI, pool workers, calculators
    proc.wait()
    done = _journal_rows(private_dir(killed) / PROPERTY_JOURNAL)
    assert 5 <= done < total, "the kill must land mid-build"
    assert not (killed / MANIFEST).exists()
    subprocess.run(_build_command(sources, killed, *executor), check=True, timeout=600)
    assert released(killed) == released(clean)
    manifest = json.loads((killed / MANIFEST).read_text())
    assert manifest["timing"]["molecules_from_journal"] >= done
