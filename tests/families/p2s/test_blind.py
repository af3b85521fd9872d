"""Blind runs: the system cannot tell a task's view, so a property-blind system earns no claim.

The chat back-end is driven against a local fake OpenAI-compatible server (loopback only)
that never reads the property but plays every public trick it can: it looks the request's
record id up in the release's task files to learn the view, then answers its structural
prior on the correct view, the prior shifted by one on the shuffled view (wrong on purpose)
and the prior shifted by one plus the file ordinal on the counterfactual view.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.families.p2s.claim import claim_report, prediction_paths, run_presentation
from chemgauge.families.p2s.config import RunConfig
from chemgauge.families.p2s.embedded import DEFAULT_DIRECTORIES, default_data
from chemgauge.families.p2s.engine.models import ModelOptions, P2SModel, StructureOnlyBaseline
from chemgauge.families.p2s.engine.properties import TableProvider
from chemgauge.families.p2s.engine.registry import get_model
from chemgauge.families.p2s.prompts import renderer
from chemgauge.families.p2s.release import ID_PATTERN
from chemgauge.families.p2s.runner import run_model
from chemgauge.families.p2s.spec import CONDITIONS

runner = CliRunner()


def task_ids(data: Path, directory: str) -> dict[str, set[str]]:
    return {
        c: {
            json.loads(x)["record_id"]
            for x in (data / directory / f"{c}.jsonl").read_text().split()
        }
        for c in CONDITIONS
    }


class Recording(P2SModel):
    """Answers 0 and records every task object it was sent."""

    name = "recording"

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[dict[str, Any]]] = []

    def _predict(self, batch: list[Any]) -> list[dict[str, Any]]:
        self.batches.append([dict(t) for t in batch])
        return [{"record_id": t["record_id"], "selected_candidate_index": 0} for t in batch]


def test_a_blind_request_names_no_view(built: dict[str, Path], tmp_path: Path) -> None:
    model = Recording()
    run_model(built["data"], tmp_path, lambda d: model, RunConfig(property=("dipole",)))
    sent = [t for batch in model.batches for t in batch]
    ids = task_ids(built["data"], "dipole")
    assert len(sent) == sum(len(v) for v in ids.values())
    seen = [t["record_id"] for t in sent]
    assert len(set(seen)) == len(seen) and all(ID_PATTERN.match(r) for r in seen)
    assert set(seen).isdisjoint(set().union(*ids.values()))  # fresh ids, not the files'
    render = renderer("dipole")
    for task in sent:
        text = json.dumps(render(task)).lower()
        assert not any(word in text for word in ("correct", "shuffled", "counterfactual"))
    # the views are interleaved: some batch holds tasks with and without a shared graph twin
    graphs = [(t["masked_smiles"], tuple(t["candidate_completed_smiles"])) for t in sent]
    first = graphs.index(graphs[0], 1) if graphs.count(graphs[0]) > 1 else None
    assert first is not None and first < len(sent) - 1
    assert run_presentation(tmp_path / "recording") == "blind"


@pytest.mark.parametrize("model", ["structure_only", "property_oracle", "random"])
def test_blind_and_per_view_runs_give_the_same_answers(
    built: dict[str, Path], tmp_path: Path, model: str
) -> None:
    options = ModelOptions(provider=TableProvider(built["table"]))
    folders = {}
    for per_view in (False, True):
        out = tmp_path / ("per_view" if per_view else "blind")
        run_model(
            built["data"],
            out,
            lambda d: get_model(model, options),
            RunConfig(per_view=per_view, batch_size=3),
        )
        folders[per_view] = out / model
    for directory in ("dipole", "gap", "electronic"):
        for condition in CONDITIONS:
            name = f"{directory}/{condition}.jsonl"
            assert (folders[False] / name).read_bytes() == (folders[True] / name).read_bytes()
    assert run_presentation(folders[True]) == "per_view"
    report = json.loads((folders[False] / "report.json").read_text())
    assert report["config"]["presentation"] == "blind"


# ---- a property-blind chat endpoint that tries every public trick ------------------------

_ID = re.compile(r"record_id: (\S+)")
_MASKED = re.compile(r"masked_smiles: (\S+)")
_CANDIDATE = re.compile(r"^(\d+): (\S+)$", re.M)


class TrickServer:
    """A fake chat endpoint: structural prior, view looked up from the release files."""

    def __init__(self, data: Path, directories: tuple[str, ...] = DEFAULT_DIRECTORIES) -> None:
        self.view: dict[str, str] = {}
        self.ordinal: dict[str, int] = {}
        for directory in directories:
            for condition, ids in task_ids(data, directory).items():
                self.view.update(dict.fromkeys(ids, condition))
            seen: dict[str, int] = {}
            for line in (data / directory / "counterfactual.jsonl").read_text().split("\n"):
                if line:
                    task = json.loads(line)
                    key = task["masked_smiles"] + "".join(task["candidate_completed_smiles"])
                    self.ordinal[task["record_id"]] = seen.get(key, 0)
                    seen[key] = seen.get(key, 0) + 1
        self.requests = 0
        self.unknown = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                content = server.answer(body["messages"][-1]["content"])
                reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def answer(self, text: str) -> str:
        self.requests += 1
        rid = _ID.search(text)
        masked = _MASKED.search(text)
        candidates = [c for _, c in sorted((int(i), c) for i, c in _CANDIDATE.findall(text))]
        assert rid and masked and candidates
        task = {
            "record_id": rid.group(1),
            "masked_smiles": masked.group(1),
            "candidate_completed_smiles": candidates,
            "properties": {},
            "mask": {},
        }
        prior = StructureOnlyBaseline().predict([task])[0]["selected_candidate_index"]
        view = self.view.get(rid.group(1))
        self.unknown += view is None
        shift = {"shuffled": 1, "counterfactual": 1 + self.ordinal.get(rid.group(1), 0)}
        pick = (prior + shift.get(view or "", 0)) % len(candidates)
        return json.dumps({"record_id": rid.group(1), "selected_candidate_index": pick})


@pytest.fixture
def trick_server() -> Iterator[TrickServer]:
    server = TrickServer(default_data())
    server.thread.start()
    yield server
    server.http.shutdown()
    server.http.server_close()


@pytest.mark.slow
@pytest.mark.parametrize("per_view", [False, True])
def test_a_property_blind_chat_endpoint_earns_no_claim(
    trick_server: TrickServer, tmp_path: Path, per_view: bool
) -> None:
    args = ["p2s", "run", "-m", "chat", "-o", str(tmp_path), "-q", "--batch-size", "32"]
    args += ["--base-url", trick_server.url, "--chat-model", "tricks", "--api-key-env", ""]
    args += ["--per-view"] if per_view else []
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    total = sum(
        len(ids) for d in DEFAULT_DIRECTORIES for ids in task_ids(default_data(), d).values()
    )
    assert trick_server.requests == total
    # blind: no id it was sent is in the release; per view: it found every one
    assert trick_server.unknown == (total if not per_view else 0)
    for directory in DEFAULT_DIRECTORIES:
        report = claim_report(
            default_data(), directory, prediction_paths(tmp_path / "chat", directory), model="chat"
        )
        assert report["use_claim"] is False, (
            directory,
            report["shuffle_drop"],
            report["counterfactual_flip"],
        )
    claim = runner.invoke(
        app, ["p2s", "claim", "--property", "dipole", "--run", str(tmp_path / "chat")]
    )
    assert "use claim: no" in claim.output
    assert ("per-view files" if per_view else "from: blind run") in claim.output


def picks(path: Path) -> dict[str, int]:
    rows = [json.loads(x) for x in path.read_text().split("\n") if x]
    return {r["record_id"]: r["selected_candidate_index"] for r in rows}


def test_blind_streams_for_outside_systems_score_like_a_blind_run(
    built: dict[str, Path], tmp_path: Path
) -> None:
    streams, key = tmp_path / "streams", tmp_path / "private" / "key.json"
    result = runner.invoke(
        app,
        ["p2s", "blind", str(built["data"]), "-o", str(streams), "--key", str(key), "-p", "dipole"],
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in (streams / "dipole.jsonl").read_text().split("\n") if x]
    ids = task_ids(built["data"], "dipole")
    assert len(lines) == sum(len(v) for v in ids.values())
    assert all(ID_PATTERN.match(t["record_id"]) for t in lines)
    assert {t["record_id"] for t in lines}.isdisjoint(set().union(*ids.values()))
    # an outside system: the structural prior, answered over the stream
    answers = StructureOnlyBaseline().predict(lines)
    predictions = tmp_path / "answers.jsonl"
    predictions.write_text("".join(json.dumps(a) + "\n" for a in answers))
    run = tmp_path / "outside"
    args = ["p2s", "score", "--data", str(built["data"]), "--blind-key", str(key)]
    args += ["--property", "dipole", "--predictions", str(predictions), "--out", str(run), "-q"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    inside = tmp_path / "inside"
    run_model(
        built["data"],
        inside,
        lambda d: get_model("structure_only"),
        RunConfig(property=("dipole",)),
    )
    for condition in CONDITIONS:
        mine = picks(run / "dipole" / f"{condition}.jsonl")
        assert mine == picks(inside / "structure_only" / "dipole" / f"{condition}.jsonl")
    assert run_presentation(run) == "blind"
