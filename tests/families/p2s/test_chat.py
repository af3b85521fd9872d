"""The chat runner against a scripted OpenAI-compatible server on 127.0.0.1.

The server answers a fixed script of responses (at most a few requests per test) and shuts
down with the test; nothing leaves the loopback interface.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from chemgauge.errors import BackendError, ConfigError
from chemgauge.families.p2s.engine.chat import ChatConfig, ChatModel, parse_answer
from chemgauge.families.p2s.prompts import renderer

pytestmark = pytest.mark.external

MAX_REQUESTS = 10


def reply(content: str) -> tuple[int, bytes]:
    body = {"choices": [{"message": {"role": "assistant", "content": content}}]}
    return 200, json.dumps(body).encode()


class FakeServer:
    """Serves scripted (status, body) pairs in order and records what it received."""

    def __init__(self, script: list[tuple[int, bytes]]) -> None:
        self.script = list(script)
        self.received: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                fake.received.append(json.loads(self.rfile.read(length)))
                fake.headers.append(dict(self.headers))
                status, body = fake.script.pop(0) if fake.script else (500, b"{}")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.server.timeout = 5
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        # Bounded: one request per scripted response, then the thread ends.
        for _ in range(min(len(self.script), MAX_REQUESTS)):
            self.server.handle_request()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[FakeServer] = []

    def start(script: list[tuple[int, bytes]]) -> FakeServer:
        server = FakeServer(script)
        server.thread.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.thread.join(timeout=10)
        server.server.server_close()


TASK = {
    "record_id": "p2s-abc",
    "masked_smiles": "c1ccc([*:1])cc1",
    "mask": {"token": "[*:1]", "masked_heavy_atoms": 1, "attachment_points": [{}]},
    "properties": {"dipole": {"value": 1.3, "unit": "D"}},
    "candidate_completed_smiles": ["Oc1ccccc1", "Cc1ccccc1", "Nc1ccccc1"],
}


def model(server: FakeServer, **kw: Any) -> tuple[ChatModel, list[float]]:
    waits: list[float] = []
    config = ChatConfig(base_url=server.url, model="fake-1", api_key_env="P2S_TEST_KEY", **kw)
    return ChatModel(config, renderer("dipole"), sleep=waits.append), waits


def test_answers_are_parsed_and_prompts_sent(serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("P2S_TEST_KEY", "sk-test")
    answer = {"record_id": "p2s-abc", "selected_candidate_index": 2, "reasoning": "NH2"}
    server = serve([reply("```json\n" + json.dumps(answer) + "\n```")])
    chat, _ = model(server)
    assert chat.predict([TASK]) == [answer]
    sent = server.received[0]
    assert sent["model"] == "fake-1" and sent["temperature"] == 0.0
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert "2: Nc1ccccc1" in sent["messages"][1]["content"]
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


def test_transient_errors_are_retried_with_backoff(serve: Any) -> None:
    answer = json.dumps({"record_id": "p2s-abc", "selected_candidate_index": 0})
    server = serve([(503, b"{}"), (429, b"{}"), (200, b"not json"), reply(answer)])
    chat, waits = model(server, backoff_s=0.5)
    assert chat.predict([TASK])[0]["selected_candidate_index"] == 0
    assert waits == [0.5, 1.0, 2.0] and chat.requests == 4


def test_unparsable_answers_are_invalid_not_errors(serve: Any) -> None:
    server = serve(
        [
            reply("I think it is the amine."),
            reply(json.dumps({"record_id": "other", "selected_candidate_index": 1})),
            reply(json.dumps({"record_id": "p2s-abc", "selected_candidate_index": "2"})),
            reply(json.dumps({"record_id": "p2s-abc", "selected_candidate_index": 7})),
        ]
    )
    chat, _ = model(server)
    out = chat.predict([TASK] * 4)
    assert [o.get("invalid", False) for o in out] == [True, True, True, False]
    assert "no JSON object" in out[0]["reasoning"] and "'other'" in out[1]["reasoning"]
    assert out[3]["selected_candidate_index"] == 7  # kept: the scorer counts it out of range


def test_permanent_errors_and_exhausted_retries_stop_the_run(serve: Any) -> None:
    server = serve([(401, b'{"error": "bad key"}')])
    chat, _ = model(server)
    with pytest.raises(BackendError, match="HTTP 401"):
        chat.predict([TASK])
    server = serve([(500, b"{}"), (502, b"{}")])
    chat, waits = model(server, max_attempts=2)
    with pytest.raises(BackendError, match="after 2 attempts"):
        chat.predict([TASK])
    assert len(waits) == 1


def test_parse_answer_and_config_checks() -> None:
    assert (
        parse_answer('text {"selected_candidate_index": 1} text', "r")["selected_candidate_index"]
        == 1
    )
    assert parse_answer('{"selected_candidate_index": true}', "r")["invalid"] is True
    with pytest.raises(ConfigError, match="http"):
        ChatConfig(base_url="127.0.0.1:8000", model="m")
