"""Output guards and run locks: no output clobbers an input or another output, no special
file is replaced, and two runs never write the same outputs at once (every family)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.reliability.commands import forward_benchmark, retro_eval, retro_inputs

from chemgauge.errors import OutputPathError, RunLockedError
from chemgauge.eval.outputs import Output, check_outputs
from chemgauge.eval.runlock import lock_path, run_lock

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chemgauge", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _refused(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


# --- the guard itself ----------------------------------------------------------------------


def test_output_equal_to_an_input_by_path_inode_or_symlink(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("x\n")
    (tmp_path / "hard.jsonl").hardlink_to(corpus)
    (tmp_path / "soft.jsonl").symlink_to(corpus)
    for alias in ("corpus.jsonl", "hard.jsonl", "soft.jsonl", "sub/../corpus.jsonl"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(
            OutputPathError,
            match=r"--output-rows is the same file as --corpus \(.*corpus\.jsonl\); choose",
        ):
            check_outputs([Output("--output-rows", tmp_path / alias)], [("--corpus", corpus)])
    assert corpus.read_text() == "x\n"


def test_two_outputs_on_one_file_and_derived_files(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    with pytest.raises(OutputPathError, match="--output-report is the same file as --output-rows"):
        check_outputs([Output("--output-rows", rows), Output("--output-report", rows)])
    journal = tmp_path / "rows.jsonl.journal"
    with pytest.raises(OutputPathError, match=r"--output-report is the same file as --output-rows"):
        check_outputs(
            [Output("--output-rows", rows, derived=(journal,)), Output("--output-report", journal)]
        )


def test_special_files_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    cases = {
        Path("/dev/stdout"): r"is a special file \(/dev/stdout\)",
        Path("/dev/null"): "is a special file",
        fifo: "is a FIFO",
        tmp_path: "is a directory",
    }
    for path, why in cases.items():
        with pytest.raises(OutputPathError, match=why):
            check_outputs([Output("--output-report", path)])
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputPathError, match="is a file, not a folder"):
        check_outputs([Output("--output-report", tmp_path / "file" / "report.json")])
    with pytest.raises(OutputPathError, match="is a file; give a folder"):
        check_outputs([Output("--out", tmp_path / "file", folder=True)])
    with pytest.raises(OutputPathError, match="must be a path"):
        check_outputs([Output("--output-rows", Path("-"))])


def test_folder_outputs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "predictions.jsonl").write_text("{}\n")
    with pytest.raises(OutputPathError, match="--out is the same folder as DATA"):
        check_outputs([Output("--out", data, folder=True)], [("DATA", data)])
    with pytest.raises(
        OutputPathError, match=r"results_dir \(predictions\.jsonl\) is the same file as model_dir"
    ):
        check_outputs(
            [Output("results_dir", data, files=("predictions.jsonl", "rows.jsonl"))],
            [("model_dir", data / "predictions.jsonl")],
        )
    check_outputs([Output("--out", tmp_path / "new" / "deeper", folder=True)], [("DATA", data)])


# --- the run lock --------------------------------------------------------------------------


def test_a_second_lock_on_the_same_output_is_refused_then_released(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    with run_lock([(rows, False)], "chemgauge forward benchmark"):
        with (
            (
                pytest.raises(RunLockedError, match=rf"another chemgauge run \(pid {os.getpid()}, ")
            ) as caught,
            run_lock([(rows, False)]),
        ):
            pass
        assert "is writing to" in str(caught.value) and "forward benchmark" in str(caught.value)
        assert lock_path(rows).exists()
    assert not lock_path(rows).exists()
    with run_lock([(rows, False)]):
        pass


_HOLDER = """
import sys, time
from pathlib import Path
from chemgauge.eval.runlock import run_lock
with run_lock([(Path(sys.argv[1]), True)], "holder"):
    print("locked", flush=True)
    time.sleep(600)
"""


def test_the_lock_of_a_dead_run_is_taken_over(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with (
            pytest.raises(RunLockedError, match=rf"pid {holder.pid}, started .*: holder"),
            run_lock([(tmp_path, True)]),
        ):
            pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
    assert lock_path(tmp_path, folder=True).exists()  # left behind by the killed run
    with run_lock([(tmp_path, True)]):
        pass


def test_a_forked_worker_never_holds_the_lock(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    read, write = os.pipe()
    with run_lock([(rows, False)]):
        child = os.fork()
        if child == 0:  # a worker: lives on after the parent's run ends
            os.close(write)
            os.read(read, 1)
            os._exit(0)
    try:
        assert os.waitpid(child, os.WNOHANG) == (0, 0)  # the worker is alive, yet:
        with run_lock([(rows, False)]):  # the parent released; the worker holds nothing
            pass
    finally:
        os.close(read)
        os.close(write)
        os.waitpid(child, 0)


# --- every family: aliasing refused before any work, inputs untouched ----------------------


def test_forward_aliasing(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(
        (REPO / "src/chemgauge/families/forward/data/demo_corpus.jsonl").read_bytes()
    )
    before = corpus.read_bytes()
    base = ["forward", "benchmark", "--corpus", corpus, "--executor", "serial", "-q"]
    named_like_rows = tmp_path / "in" / "rows.jsonl"
    named_like_rows.parent.mkdir()
    named_like_rows.write_bytes(before)
    _refused(
        _cli(*base[:3], named_like_rows, *base[4:], "--out", named_like_rows.parent),
        f"--out (rows.jsonl) is the same file as --corpus ({named_like_rows}); choose another",
    )
    _refused(_cli(*base, "--out", corpus), "is a file; give a folder")
    _refused(_cli(*base, "--out", "/dev/null"), "/dev/null")
    (tmp_path / "run" / "report.json").mkdir(parents=True)
    _refused(_cli(*base, "--out", tmp_path / "run"), "(report.json)")
    assert corpus.read_bytes() == before and named_like_rows.read_bytes() == before
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert written == ["corpus.jsonl", "in", "in/rows.jsonl", "run", "run/report.json"]
    _refused(
        _cli("forward", "enumerate", "--input", corpus, "--out", corpus),
        "--out is the same file as --input",
    )
    _refused(
        _cli("forward", "corpus-from-uspto", corpus, "--out", corpus),
        "--out is the same file as CSV_FILES",
    )
    assert corpus.read_bytes() == before


def test_retro_run_folder_holding_the_predictions_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "test.smi").write_text("CC(=O)O.CN>>CNC(C)=O\n")
    preds = tmp_path / "journal.jsonl"  # named like the run's journal, in the run folder
    preds.write_text('{"product": "CNC(C)=O", "predictions": ["CN.CC(=O)O"]}\n')
    before = preds.read_bytes()
    done = _cli(
        "retro",
        "eval",
        f"data_dir={tmp_path}",
        "model_class=predictions",
        "allow_missing=true",
        f"model_dir={preds}",
        f"results_dir={tmp_path}",  # syntheseus's spelling of --out
        "executor=serial",
    )
    _refused(done, "--out (journal.jsonl) is the same file as model_dir")
    assert preds.read_bytes() == before


def test_names_rows_over_the_input_is_refused(tmp_path: Path) -> None:
    pairs = tmp_path / "rows.jsonl"  # a pairs file named like the run's rows
    body = '{"smiles": "CCO", "name": "ethanol"}\n'
    pairs.write_text(body)
    done = _cli("names", "coverage", "--input", pairs, "--out", tmp_path)
    _refused(done, "--out (rows.jsonl) is the same file as --input")
    _refused(
        _cli("names", "coverage", "--input", pairs, "--out", pairs), "is a file; give a folder"
    )
    assert pairs.read_text() == body


def test_canon_output_over_its_source_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_text("OCC\n")
    _refused(_cli("canon", source, "--out", source), "--out is the same file as SOURCE")
    assert source.read_text() == "OCC\n"


def test_ocsr_outputs_over_inputs_are_refused(tmp_path: Path) -> None:
    manifest = tmp_path / "report.json"  # a manifest that happens to be named like an output
    manifest.write_text("{}")
    done = _cli("ocsr", "run", "--manifest", manifest, "--out", tmp_path, "--run")
    _refused(done, "--out (report.json) is the same file as --manifest")
    done = _cli("ocsr", "score", "--manifest", manifest, "--out", tmp_path)
    _refused(done, "--out (report.json) is the same file as --manifest")
    images = tmp_path / "images"
    images.mkdir()
    done = _cli(
        "ocsr",
        "import",
        "--images",
        images,
        "--references",
        images,
        "--out",
        images,
        "--name",
        "x",
        "--attribution",
        "a",
        "--licence",
        "l",
    )
    _refused(done, "--out", "is a directory")
    assert manifest.read_text() == "{}"


def test_p2s_outputs_over_inputs_are_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _refused(_cli("p2s", "run", data, "-m", "random", "--out", data), "same folder as DATA")
    sources = data / "build_manifest.json"
    sources.write_text("CCO\n")
    done = _cli("p2s", "build", sources, "--out", data, "-p", "dipole", "--provider", "table")
    _refused(done, "--out (build_manifest.json) is the same file as SOURCES")
    assert sources.read_text() == "CCO\n"


def test_report_compare_verify_outputs_over_the_run_are_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.json").write_text("{}")
    (run / "rows.jsonl").write_text("")
    _refused(_cli("report", run, "--out", run / "report.json"), "same file as RUN_DIR")
    _refused(_cli("verify", run, "--out", run / "rows.jsonl"), "same file as RUN_DIR")
    _refused(_cli("compare", run, run, "--out", run), "RUN_A")
    _refused(_cli("board", run, "--out", run), "RUN_OR_FOLDER")
    assert (run / "report.json").read_text() == "{}"


# --- every family: a second run into the same outputs stops at once ------------------------


def _family_commands(tmp_path: Path) -> dict[str, tuple[list[str | Path], Path, bool]]:
    """family -> (command, the locked output, whether it is a folder)."""
    demo = REPO / "src/chemgauge/families/forward/data/demo_corpus.jsonl"
    (tmp_path / "test.smi").write_text("CC(=O)O.CN>>CNC(C)=O\n")
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"product": "CNC(C)=O", "predictions": ["CN.CC(=O)O"]}\n')
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("smiles\tname\nCCO\tethanol\n")
    smiles = tmp_path / "in.smi"
    smiles.write_text("CCO\n")
    out = tmp_path / "out"
    rows = tmp_path / "rows.jsonl"
    return {
        "forward": (["forward", "benchmark", "--corpus", demo, "--out", out], out, True),
        "retro": (
            [
                "retro",
                "eval",
                f"data_dir={tmp_path}",
                "model_class=predictions",
                "allow_missing=true",
                f"model_dir={preds}",
                "--out",
                out,
            ],
            out,
            True,
        ),
        "names": (["names", "coverage", "--input", pairs, "--out", out], out, True),
        "ocsr": (["ocsr", "render", "--out", out], out, True),
        "p2s": (["p2s", "run", tmp_path, "-m", "random", "--out", out], out, True),
        "canon": (["canon", smiles, "--out", rows], rows, False),
        "report": (["report", tmp_path, "--out", out], out, False),
    }


@pytest.mark.parametrize("family", ["forward", "retro", "names", "ocsr", "p2s", "canon", "report"])
def test_a_second_run_into_the_same_outputs_stops_at_once(tmp_path: Path, family: str) -> None:
    command, output, folder = _family_commands(tmp_path)[family]
    with run_lock([(output, folder)], "the first run"):
        started = time.monotonic()
        done = _cli(*command)
        _refused(done, f"another chemgauge run (pid {os.getpid()}, started", "the first run")
    assert time.monotonic() - started < 120  # refused, not waiting
    assert not (output.is_file() and output.stat().st_size)  # nothing written


def _wait_for_rows(journal: Path, proc: subprocess.Popen[str], rows: int = 1) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and journal.read_bytes().count(b"\n") > rows:
            return
        time.sleep(0.02)
    raise AssertionError(f"no journal rows in {journal} (exit {proc.poll()})")


# The first run blocks before its second item until the test creates the file named by
# CHEMGAUGE_TEST_GO, so the second run certainly starts while the first is mid-way.
_HELD_RUN = """
import os, sys, time
from pathlib import Path
go = Path(os.environ["CHEMGAUGE_TEST_GO"])
calls = []
def hold():
    calls.append(1)
    while len(calls) > 1 and not go.exists():  # the first item is journaled, then wait
        time.sleep(0.02)
import chemgauge.families.forward.engine.predictor as forward
_forward = forward.predict_products_detailed
def _held_forward(*args, **kwargs):
    hold()
    return _forward(*args, **kwargs)
forward.predict_products_detailed = _held_forward
from chemgauge.families.retro.engine.registry import RetroModel
_retro = RetroModel.predict
def _held_retro(self, products, num_results):
    hold()
    return _retro(self, products, num_results)
RetroModel.predict = _held_retro
from chemgauge.cli.app import main
sys.argv[0] = "chemgauge"
main()
"""


@pytest.mark.parametrize("family", ["forward", "retro"])
def test_two_real_runs_into_one_folder(tmp_path: Path, family: str) -> None:
    """A second run started while the first is mid-way stops at once; the first finishes
    and its folder verifies (before: a traceback in one, mixed files in the other)."""
    out = tmp_path / "out"
    if family == "forward":
        args = forward_benchmark(out, "--chunk-size", "1")
        journal = out / "rows.jsonl.journal"
    else:
        data, preds = retro_inputs(tmp_path, copies=1)
        args = retro_eval(data, preds, out, "batch_size=1", "chunk_size=1")
        journal = out / "journal.jsonl"
    go = tmp_path / "go"
    env = {**os.environ, "CHEMGAUGE_TEST_GO": str(go)}
    command = [sys.executable, "-c", _HELD_RUN, *args]
    first = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        _wait_for_rows(journal, first)
        second = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=240, check=False
        )
        _refused(second, f"another chemgauge run (pid {first.pid}, started")
        go.touch()
        assert first.wait(timeout=300) == 0, first.stderr.read() if first.stderr else ""
    finally:
        go.touch()
        if first.poll() is None:
            first.kill()
            first.wait()
    verified = _cli("verify", out)
    assert verified.returncode == 0, verified.stdout + verified.stderr
