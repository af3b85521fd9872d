"""Recognizer back-ends: command (argument list, bounded output), http (a local server), osra."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require_program
from tests.families.ocsr.conftest import ChatServer, Reply

from chemgauge.errors import BackendError, ConfigError
from chemgauge.families.ocsr.engine.base import parse_structured_answer, run_bounded
from chemgauge.families.ocsr.engine.http import HttpRecognizer, HttpSpec
from chemgauge.families.ocsr.engine.recognizers import (
    CommandRecognizer,
    CommandSpec,
    OsraRecognizer,
)

PY = sys.executable


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "recognizer.py"
    path.write_text(body)
    return [PY, str(path), "{image}"]


@pytest.fixture
def image(tmp_path: Path) -> Path:
    path = tmp_path / "input.png"
    path.write_bytes(b"\x89PNG fake")
    return path


def test_command_smiles_molfile_and_statuses(tmp_path: Path, image: Path) -> None:
    args = _script(tmp_path, "import sys; print('CCO' if sys.argv[1].endswith('.png') else '')")
    started = time.perf_counter()
    result = CommandRecognizer(CommandSpec(tuple(args), fmt="smiles")).recognize(image, 30)
    wall = time.perf_counter() - started
    assert (result.output.status, result.output.text.strip()) == ("completed", "CCO")
    # A Python child takes milliseconds to start: its time is positive and inside the call's.
    assert result.backend == "command" and 0 < result.elapsed_seconds <= wall
    crashed = _script(tmp_path, "print('CCO'); raise SystemExit(3)")
    out = CommandRecognizer(CommandSpec(tuple(crashed))).recognize(image, 30).output
    assert (out.status, out.exit_code, out.message) == ("provisional", 3, "exit code 3")
    empty = _script(tmp_path, "pass")
    out = CommandRecognizer(CommandSpec(tuple(empty))).recognize(image, 30).output
    assert (out.status, out.message) == ("failure", "no structure in the output")


def _startup_seconds() -> float:
    """How long this machine takes to start a Python child that prints a line, now."""
    started = time.perf_counter()
    subprocess.run([PY, "-c", "print('CCO', flush=True)"], check=True, capture_output=True)
    return time.perf_counter() - started


def test_command_timeout_keeps_partial_output(tmp_path: Path, image: Path) -> None:
    args = _script(tmp_path, "import sys, time; print('CCO', flush=True); time.sleep(30)")
    budget = max(1.0, 10 * _startup_seconds())  # room to print first, on a loaded machine too
    out = CommandRecognizer(CommandSpec(tuple(args))).recognize(image, budget).output
    assert out.status == "provisional" and out.text.strip() == "CCO"
    silent = _script(tmp_path, "import time; time.sleep(30)")
    out = CommandRecognizer(CommandSpec(tuple(silent))).recognize(image, 0.5).output
    assert out.status == "timeout" and out.exit_code is None


def test_command_json_protocol_reports_clarification(tmp_path: Path, image: Path) -> None:
    answer = {"smiles": None, "clarification": "need a higher-resolution image"}
    args = _script(tmp_path, f"print({json.dumps(json.dumps(answer))})")
    out = CommandRecognizer(CommandSpec(tuple(args), fmt="json")).recognize(image, 30).output
    assert (out.status, out.message) == ("clarification", "need a higher-resolution image")


def test_output_is_bounded() -> None:
    result = run_bounded([PY, "-c", "print('C' * 100000)"], 30, 1000)
    assert len(result.stdout) == 1000 and result.truncated and result.exit_code == 0


def test_command_needs_image_placeholder_and_program() -> None:
    with pytest.raises(ConfigError, match=r"\{image\}"):
        CommandRecognizer(CommandSpec(("osra", "file.png")))
    with pytest.raises(BackendError, match="not found"):
        CommandRecognizer(CommandSpec(("no-such-program-xyz", "{image}"))).check()


def test_structured_answer_parsing() -> None:
    assert parse_structured_answer('Here: ```json\n{"smiles": "CCO"}\n```').text == "CCO"
    provisional = parse_structured_answer('{"status": "provisional", "smiles": "CC"}')
    assert provisional.status == "provisional"
    assert parse_structured_answer("no json here").status == "failure"
    assert parse_structured_answer('{"smiles": ""}').status == "failure"


def _completion(content: str, finish: str = "stop") -> Reply:
    return 200, {
        "model": "fake-vision-1",
        "choices": [{"message": {"content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


def test_http_backend_against_a_local_server(image: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "secret")
    replies = iter(
        [
            _completion('{"smiles": "CCO", "clarification": null}'),
            _completion('{"smiles": null, "clarification": "send a larger image"}'),
            _completion('{"smiles": "CC', finish="length"),
        ]
    )

    def respond(body: dict[str, Any]) -> Reply:
        return next(replies)

    with ChatServer(respond) as server:
        backend = HttpRecognizer(HttpSpec(server.url, "fake-vision-1", api_key_env="FAKE_KEY"))
        first = backend.recognize(image, 10)
        assert (first.output.status, first.output.text) == ("completed", "CCO")
        assert first.output.usage == {"prompt_tokens": 10, "completion_tokens": 5}
        second = backend.recognize(image, 10).output
        assert (second.status, second.message) == ("clarification", "send a larger image")
        assert backend.recognize(image, 10).output.status == "failure"  # cut at max_tokens
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions" and server.authorization[0] == "Bearer secret"
    content = request["body"]["messages"][0]["content"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "input.png" not in json.dumps(request["body"])  # no file name leaks
    assert "secret" not in json.dumps(backend.describe())


def test_http_connection_failure_is_a_failure(image: Path) -> None:
    backend = HttpRecognizer(HttpSpec("http://127.0.0.1:9", "m"))
    out = backend.recognize(image, 2).output
    assert out.status in {"failure", "timeout"} and out.message


@pytest.mark.external
@pytest.mark.slow
def test_osra_reads_an_rdkit_drawing(tmp_path: Path) -> None:
    require_program("osra")
    from chemgauge.chem import parse_smiles
    from chemgauge.chem.render import render_png
    from chemgauge.families.ocsr.scoring import compare_keys, graph_keys, text_keys

    backend = OsraRecognizer()
    assert backend.version().startswith("osra 2.")
    aspirin = parse_smiles("CC(=O)Oc1ccccc1C(=O)O")
    path = tmp_path / "input.png"
    path.write_bytes(render_png(aspirin))
    result = backend.recognize(path, 120)
    assert result.output.status == "completed" and result.output.fmt == "molfile"
    keys, reading = text_keys(result.output.text, "molfile")
    assert reading.accepted
    assert compare_keys(graph_keys(aspirin), keys)["exact"] == "match"


def test_command_provenance_hashes_the_program_and_its_script(tmp_path: Path) -> None:
    import hashlib

    args = _script(tmp_path, "print('CCO')")
    log = tmp_path / "calls.log"
    log.write_text("")
    described = CommandRecognizer(CommandSpec((*args, str(log)))).describe()
    script = Path(args[1])
    assert described["programs"] == {
        PY: hashlib.sha256(Path(PY).read_bytes()).hexdigest(),
        str(script): hashlib.sha256(script.read_bytes()).hexdigest(),
    }  # the log it may append to is data, not the recognizer
    assert CommandRecognizer(CommandSpec(("no-such-program-xyz", "{image}"))).programs() == {
        "no-such-program-xyz": "missing"
    }


@pytest.mark.external
def test_osra_provenance_is_its_executable_hash() -> None:
    import hashlib

    require_program("osra")
    described = OsraRecognizer().describe()
    executable = Path(str(shutil.which("osra"))).read_bytes()
    assert described["programs"] == {"osra": hashlib.sha256(executable).hexdigest()}
    assert described["version"].startswith("osra 2.")
