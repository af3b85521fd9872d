"""The OPSIN runner: real OPSIN answers, refusals, order across JVMs, restarts, OPSIN's own pairs.

Alignment guards are also driven by a stand-in `java` (the injected boundary) that
answers in the line-server protocol but shifts, doubles, hangs or dies on cue.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest
from rdkit import Chem, RDLogger
from tests.conftest import missing, require_program

from chemgauge.errors import BackendError, ConfigError
from chemgauge.families.names.engine.runner import (
    OpsinConfig,
    OpsinResult,
    OpsinRunner,
    OpsinStatus,
    _ServerProtocol,
)

external = pytest.mark.external

FAKE_JAVA = """\
import sys, time
if "-version" in sys.argv:
    sys.stderr.write('fake version "0"\\n')
    sys.exit(0)
print("#chemgauge-opsin-server\\t1\\tfake", flush=True)
seq = 0
while line := sys.stdin.readline():
    name, seq = line.rstrip("\\n"), seq + 1
    if name.startswith("die"):
        sys.stderr.write("dying on purpose\\n")
        sys.exit(3)
    if name.startswith("hang"):
        time.sleep(60)
    echo = "something else" if name == "shift" else name
    if name == "double":
        print(f"{seq}\\tSUCCESS\\tC\\t\\t{echo}")
    print(f"{seq}\\tSUCCESS\\tC\\t\\t{echo}", flush=True)
"""

RDLogger.DisableLog("rdApp.*")

REPO = Path(__file__).resolve().parents[4]
SHARED_DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data"))
PAIRS_DIR = SHARED_DATA / "opsin" / "name_to_inchi"
SLOW_NAME = "methyl" * 3000 + "benzene"  # OPSIN needs more than 20 s for this one


def canonical(smiles: str | None) -> str | None:
    """Canonical isomeric SMILES via RDKit, so tests do not depend on OPSIN's atom order."""
    if smiles is None:
        return None
    mol = Chem.MolFromSmiles(smiles)
    return None if mol is None else Chem.MolToSmiles(mol)


def standard_inchi(smiles: str | None) -> str | None:
    """Standard InChI of a SMILES (None when RDKit cannot read it)."""
    mol = None if smiles is None else Chem.MolFromSmiles(smiles)
    return None if mol is None else Chem.MolToInchi(mol)


def opsin_pairs() -> list[tuple[str, str, str]]:
    """(file stem, name, InChI) from OPSIN's own name-to-InChI test files."""
    if not PAIRS_DIR.is_dir():
        missing(f"OPSIN test pairs {PAIRS_DIR}", "part of ../shared/data")
    pairs = []
    for path in sorted(PAIRS_DIR.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                name, inchi = line.split("\t")
                pairs.append((path.stem, name, inchi))
    return pairs


@pytest.fixture(scope="module")
def opsin() -> Iterator[OpsinRunner]:
    with OpsinRunner(OpsinConfig(mode="server")) as runner:
        yield runner


@pytest.fixture(scope="module")
def some_names() -> list[str]:
    return [name for _, name, _ in opsin_pairs()][::14]


@pytest.fixture(scope="module")
def reference(opsin: OpsinRunner, some_names: list[str]) -> list[OpsinResult]:
    return opsin.names_to_smiles(some_names)


@external
def test_simple_names(opsin: OpsinRunner) -> None:
    expected = {"ethanol": "CCO", "benzene": "c1ccccc1", "acetic acid": "CC(=O)O"}
    results = opsin.names_to_smiles(list(expected))
    assert [r.name for r in results] == list(expected)
    assert [canonical(r.smiles) for r in results] == list(expected.values())
    assert all(r.status is OpsinStatus.SUCCESS and r.error is None for r in results)
    assert canonical(opsin.name_to_smiles("ethanol")) == "CCO"


@external
def test_stereo_names_keep_configuration(opsin: OpsinRunner) -> None:
    l_ala, s_ala, d_ala = opsin.names_to_smiles(
        ["L-alanine", "(2S)-2-aminopropanoic acid", "D-alanine"]
    )
    assert canonical(l_ala.smiles) == canonical(s_ala.smiles) == "C[C@H](N)C(=O)O"
    assert canonical(d_ala.smiles) == "C[C@@H](N)C(=O)O"
    trans, cis = opsin.names_to_smiles(["(E)-but-2-ene", "(Z)-but-2-ene"])
    assert (trans.smiles, cis.smiles) == (r"C\C=C\C", r"C\C=C/C")  # unescaped as OPSIN wrote
    assert (canonical(trans.smiles), canonical(cis.smiles)) == ("C/C=C/C", r"C/C=C\C")


@external
def test_optical_rotation_is_a_warning_not_a_failure(opsin: OpsinRunner) -> None:
    (camphor,) = opsin.names_to_smiles(["(+)-camphor"])
    assert camphor.status is OpsinStatus.WARNING and camphor.smiles is not None
    assert any("STEREOCHEMISTRY_IGNORED" in w for w in camphor.warnings)


@external
def test_radical_and_stereo_flags_change_what_opsin_accepts(opsin: OpsinRunner) -> None:
    radical, bad_stereo = opsin.names_to_smiles(["methyl", "(2R)-propan-2-ol"])
    assert radical.smiles is None and radical.status is OpsinStatus.FAILURE
    assert radical.error is not None and "substituent" in radical.error
    assert bad_stereo.smiles is None and bad_stereo.status is OpsinStatus.FAILURE
    lenient = OpsinConfig(mode="server", allow_radicals=True, allow_uninterpretable_stereo=True)
    with OpsinRunner(lenient) as runner:
        radical, bad_stereo = runner.names_to_smiles(["methyl", "(2R)-propan-2-ol"])
        options = runner.provenance()["options"]
    assert radical.smiles == "[CH3]"
    assert bad_stereo.status is OpsinStatus.WARNING and canonical(bad_stereo.smiles) == "CC(C)O"
    assert any("STEREOCHEMISTRY_IGNORED" in w for w in bad_stereo.warnings)
    assert options == {**asdict(lenient)}


@external
def test_unparsable_and_empty_names_fail_with_reasons(opsin: OpsinRunner) -> None:
    bad, empty, good = opsin.names_to_smiles(["foobarbazium", "", "ethanol"])
    assert bad.smiles is None and bad.status is OpsinStatus.FAILURE
    assert bad.error is not None and "foobarbazium" in bad.error
    assert empty.smiles is None and empty.error is not None and "blank" in empty.error
    assert canonical(good.smiles) == "CCO"


@external
def test_line_breaks_are_refused_and_never_shift_answers(opsin: OpsinRunner) -> None:
    before = opsin.stats().answered
    names = ["ethanol", "meth\nane", "benzene", "prop\rane", "acetic acid"]
    results = opsin.names_to_smiles(names)
    assert [r.name for r in results] == names
    assert [r.status for r in results][1::2] == [OpsinStatus.REFUSED] * 2
    assert [canonical(r.smiles) for r in results][::2] == ["CCO", "c1ccccc1", "CC(=O)O"]
    assert opsin.stats().answered - before == 3  # the refused names were never sent


@external
def test_tabs_backslashes_and_unicode_survive_the_round_trip(opsin: OpsinRunner) -> None:
    names = ["eth\tanol", "back\\slash", "α-D-glucopyranose", "ethanol", "ethanol", "a\u2028b\x85"]
    results = opsin.names_to_smiles(names)
    assert [r.name for r in results] == names
    assert results[1].status is OpsinStatus.FAILURE
    assert results[2].ok and results[2].smiles == opsin.name_to_smiles("alpha-D-glucopyranose")
    assert results[3] == results[4] and canonical(results[3].smiles) == "CCO"


@external
def test_two_jvms_keep_input_order(some_names: list[str], reference: list[OpsinResult]) -> None:
    with OpsinRunner(OpsinConfig(mode="server", jvms=2)) as pair:
        assert len([p for p in pair.pids if p is not None]) == 2
        spread = pair.names_to_smiles(some_names)
        assert pair.stats().answered == len(set(some_names))
    assert spread == reference
    assert [r.name for r in spread] == some_names


@external
def test_killed_jvm_is_restarted_and_the_batch_completes(
    opsin: OpsinRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kill in the middle of a batch is an event, not a race: it is sent from inside the
    # runner's read loop when the 10th answer is parsed, and the JVM's answer pipe is shrunk
    # to one page first, so the JVM cannot have written more than a page beyond what was
    # read: hundreds of names (tens of kB of answers) are still unanswered when it dies.
    names = [name for _, name, _ in opsin_pairs()][1::4]
    reference = opsin.names_to_smiles(names)
    assert sum(len(r.name) + len(r.smiles or "") for r in reference) > 4 * 4096
    starts, crashes = opsin.stats().starts, opsin.stats().crashes
    (pid,) = opsin.pids
    assert pid is not None
    os.kill(pid, signal.SIGKILL)  # between batches
    assert canonical(opsin.name_to_smiles("ethanol")) == "CCO"
    (pid,) = opsin.pids
    assert pid is not None
    (process,) = opsin._processes
    assert process._proc is not None and process._proc.stdout is not None
    fcntl.fcntl(process._proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, 4096)
    parsed = 0
    real_parse = _ServerProtocol.parse

    def parse_then_kill(self: _ServerProtocol, line: bytes, seq: int, name: str) -> OpsinResult:
        nonlocal parsed
        parsed += 1
        if parsed == 10:
            os.kill(pid, signal.SIGKILL)  # in the middle of a batch
        return real_parse(self, line, seq, name)

    monkeypatch.setattr(_ServerProtocol, "parse", parse_then_kill)
    results = opsin.names_to_smiles(names)
    assert results == reference
    assert opsin.stats().starts == starts + 2
    assert opsin.stats().crashes >= crashes + 1  # a kill not yet reaped shows up as a crash


@external
@pytest.mark.slow
def test_a_stalled_name_times_out_and_the_jvm_restarts() -> None:
    with OpsinRunner(OpsinConfig(mode="server", timeout_s=1.0)) as runner:
        slow, after = runner.names_to_smiles([SLOW_NAME, "ethanol"])
        stats = runner.stats()
    assert slow.status is OpsinStatus.TIMEOUT and slow.smiles is None
    assert slow.error is not None and "1 s" in slow.error
    assert canonical(after.smiles) == "CCO"
    assert stats.timeouts == 1 and stats.starts == 2


@external
def test_cli_mode_answers_and_refuses_tabs() -> None:
    with OpsinRunner(OpsinConfig(mode="cli")) as cli:
        good, bad, tabbed = cli.names_to_smiles(["benzene", "foobarbazium", "eth\tanol"])
        assert cli.provenance()["mode"] == "cli"
    assert canonical(good.smiles) == "c1ccccc1"
    assert bad.status is OpsinStatus.FAILURE and bad.error
    assert tabbed.status is OpsinStatus.REFUSED


@external
def test_provenance_records_the_jar(opsin: OpsinRunner) -> None:
    record = opsin.provenance()
    jar = Path(str(record["jar_path"]))
    assert hashlib.sha256(jar.read_bytes()).hexdigest() == record["jar_sha256"]
    assert record["opsin_version"] == record["opsin_runtime_version"] == "2.9.0"
    assert record["py2opsin_version"] == "1.2.0"
    assert record["mode"] == "server" and len(str(record["server_source_sha256"])) == 64


@external
def test_auto_mode_falls_back_to_the_cli_when_the_server_cannot_be_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("CHEMGAUGE_CACHE_DIR", str(blocker / "cache"))
    assert OpsinRunner(OpsinConfig(mode="auto")).provenance()["mode"] == "cli"
    with pytest.raises(BackendError, match="line server"):
        OpsinRunner(OpsinConfig(mode="server")).provenance()


def test_missing_java_names_what_to_install() -> None:
    runner = OpsinRunner(OpsinConfig(java="/nonexistent/bin/java"))
    with pytest.raises(BackendError, match="install"):
        runner.name_to_smiles("ethanol")


@pytest.mark.parametrize(
    "bad", [{"jvms": 0}, {"timeout_s": 0.0}, {"timeout_s": float("nan")}, {"mode": "jar"}]
)
def test_config_rejects_unworkable_values(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        OpsinConfig(**bad)  # type: ignore[arg-type]


@external
@pytest.mark.slow
def test_opsin_own_test_pairs_reproduce() -> None:
    """OPSIN 2.9.0 reproduces 1,047 of the 1,048 pairs with radicals on (measured)."""
    pairs = opsin_pairs()
    assert len(pairs) == 1048
    with OpsinRunner(OpsinConfig(mode="server", allow_radicals=True, jvms=2)) as runner:
        results = runner.names_to_smiles([name for _, name, _ in pairs])
    assert [r.name for r in results] == [name for _, name, _ in pairs]
    matched = [
        standard_inchi(result.smiles) == _standardized(inchi)
        for (_, _, inchi), result in zip(pairs, results, strict=True)
    ]
    assert sum(matched) >= 1045
    radicals = [name for stem, name, _ in pairs if stem == "radicals"]
    assert all(ok for (stem, _, _), ok in zip(pairs, matched, strict=True) if stem == "radicals")
    with OpsinRunner(OpsinConfig(mode="server")) as plain:
        assert all(r.smiles is None for r in plain.names_to_smiles(radicals))


def _standardized(inchi: str) -> str | None:
    """A standard InChI for an expected value that may be non-standard ("InChI=1/")."""
    if inchi.startswith("InChI=1S/"):
        return inchi
    mol = Chem.MolFromInchi(inchi)
    return None if mol is None else Chem.MolToInchi(mol)


@pytest.fixture
def fake_java(tmp_path: Path) -> str:
    """A stand-in `java` speaking the line-server protocol, with scripted misbehaviour."""
    require_program("javac")
    script = tmp_path / "java"
    script.write_text(f"#!{sys.executable}\n{FAKE_JAVA}")
    script.chmod(0o755)
    return str(script)


@pytest.fixture
def name_timeout(fake_java: str) -> float:
    """A per-name timeout for the fake JVM, derived from this machine: 50 times the slowest
    of 20 answers of a fresh fake (at least 0.2 s, at most 10 s, far below the 60 s a
    "hang" name sleeps), so a loaded machine's slow answer is never taken for a hang."""
    fake = subprocess.Popen(
        [fake_java], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )
    assert fake.stdin is not None and fake.stdout is not None
    try:
        assert fake.stdout.readline().startswith("#chemgauge-opsin-server")
        slowest = 0.0
        for i in range(20):
            started = time.monotonic()
            fake.stdin.write(f"n{i}\n")
            assert fake.stdout.readline().endswith(f"\tn{i}\n")
            slowest = max(slowest, time.monotonic() - started)
    finally:
        fake.kill()
        fake.wait()
    return min(10.0, max(0.2, 50 * slowest))


def test_a_shifted_answer_is_caught_and_never_lands_on_the_wrong_name(fake_java: str) -> None:
    with OpsinRunner(OpsinConfig(java=fake_java, mode="server")) as runner:
        first, shifted, last = runner.names_to_smiles(["a", "shift", "b"])
        stats = runner.stats()
    assert (first.smiles, last.smiles) == ("C", "C")
    assert shifted.smiles is None and shifted.status is OpsinStatus.CRASHED
    assert shifted.error is not None and "something else" in shifted.error
    assert stats.crashes == 2 and stats.starts == 3  # one retry in a fresh process


def test_an_extra_line_is_caught_and_the_next_name_redone(fake_java: str) -> None:
    with OpsinRunner(OpsinConfig(java=fake_java, mode="server")) as runner:
        results = runner.names_to_smiles(["a", "double", "b", "c"])
        assert runner.stats().crashes >= 1
    assert [(r.name, r.smiles) for r in results] == [(n, "C") for n in ["a", "double", "b", "c"]]


def test_a_dying_process_is_restarted_and_the_batch_continues(fake_java: str) -> None:
    with OpsinRunner(OpsinConfig(java=fake_java, mode="server", jvms=2)) as runner:
        names = [f"n{i}" for i in range(100)] + ["die"] + [f"m{i}" for i in range(100)]
        results = runner.names_to_smiles(names)
    assert [r.name for r in results] == names
    assert [r.status for r in results].count(OpsinStatus.CRASHED) == 1
    crashed = results[100]
    assert crashed.status is OpsinStatus.CRASHED and crashed.error is not None
    assert "exited with code 3; stderr ends: 'dying on purpose'" in crashed.error
    assert all(r.smiles == "C" for r in results[:100] + results[101:])


def test_a_hung_process_times_out_only_that_name(fake_java: str, name_timeout: float) -> None:
    config = OpsinConfig(java=fake_java, mode="server", timeout_s=name_timeout)
    with OpsinRunner(config) as runner:
        before, hung, after = runner.names_to_smiles(["a", "hang", "b"])
        assert runner.stats().timeouts == 1
    assert hung.status is OpsinStatus.TIMEOUT and (before.smiles, after.smiles) == ("C", "C")


def test_a_process_that_keeps_dying_is_an_error(fake_java: str) -> None:
    with (
        OpsinRunner(OpsinConfig(java=fake_java, mode="server")) as runner,
        pytest.raises(BackendError, match="in a row"),
    ):
        runner.names_to_smiles(["die1", "die2", "die3", "fine"])


def test_names_after_many_timeouts_in_a_row_are_skipped_not_each_waited_for(
    fake_java: str, name_timeout: float
) -> None:
    # A timeout restarts the JVM (about a second for the real one); when every name times
    # out (a --timeout far too small) the rest of the batch is skipped, with the reason,
    # instead of paying a restart per name. An answer in between resets the count.
    limit = 5
    hangs = [f"hang{i}" for i in range(2 * limit)]
    names = ["a", *hangs[: limit - 1], "b", *hangs[limit - 1 :], "c", "d"]
    config = OpsinConfig(java=fake_java, mode="server", timeout_s=name_timeout)
    with OpsinRunner(config) as runner:
        results = runner.names_to_smiles(names)
        stats = runner.stats()
        again = runner.names_to_smiles(["hang-again", "e"])
    statuses = [r.status for r in results]
    assert statuses[:5] == [OpsinStatus.SUCCESS, *[OpsinStatus.TIMEOUT] * 4]
    assert statuses[5] is OpsinStatus.SUCCESS  # "b" answered: the count starts again
    assert statuses[6:11] == [OpsinStatus.TIMEOUT] * limit
    assert statuses[11:] == [OpsinStatus.SKIPPED] * 3
    assert results[11].smiles is None and "5 names in a row" in str(results[11].error)
    assert stats.timeouts == 9
    # The next batch tries its first name again; still timing out, the rest is skipped.
    assert [r.status for r in again] == [OpsinStatus.TIMEOUT, OpsinStatus.SKIPPED]


def test_extra_jvms_start_only_once_enough_names_were_answered(fake_java: str) -> None:
    config = OpsinConfig(java=fake_java, mode="server", jvms=2, extra_jvms_after=30)
    with OpsinRunner(config) as runner:
        assert len(runner.pids) == 1
        first = runner.names_to_smiles([f"a{i}" for i in range(20)])
        assert len(runner.pids) == 1 and runner.stats().starts == 1
        second = runner.names_to_smiles([f"b{i}" for i in range(20)])  # 20 answered so far
        assert len(runner.pids) == 1
        names = [f"c{i}" for i in range(400)]
        third = runner.names_to_smiles(names)  # 40 answered: the second JVM joins
        assert runner.stats().starts == 2 and len(runner.pids) == 2
    assert [r.name for r in third] == names and all(r.smiles == "C" for r in third)
    assert len(first) == len(second) == 20
    with pytest.raises(ConfigError):
        OpsinConfig(extra_jvms_after=-1)
