"""A small rendered cohort, a dict-backed recognizer (the injected boundary) and a real local
chat server for the ``http`` back-end."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from chemgauge.families.ocsr.cohort import COHORT, build_cohort
from chemgauge.families.ocsr.engine.base import RECOGNIZERS
from chemgauge.families.ocsr.manifest import Manifest

SMALL = tuple(e for e in COHORT if e.id in {"ethanol", "gly_l_ala", "boc_l_ala_sodium"})


@pytest.fixture(scope="session")
def small_cohort(tmp_path_factory: pytest.TempPathFactory) -> Manifest:
    return build_cohort(tmp_path_factory.mktemp("cohort"), SMALL)


@pytest.fixture
def answers(small_cohort: Manifest) -> Callable[[dict[str, Any]], str]:
    """Register a recognizer answering per case id (looked up by image hash); returns its name."""

    def install(table: dict[str, Any]) -> str:
        by_hash = {small_cohort.by_id[case_id].sha256: answer for case_id, answer in table.items()}
        seen: list[str] = []

        def recognize(image: Path) -> Any:
            seen.append(image.name)
            answer = by_hash.get(hashlib.sha256(image.read_bytes()).hexdigest(), "")
            if isinstance(answer, Exception):
                raise answer
            return answer

        recognize.seen = seen  # type: ignore[attr-defined]
        RECOGNIZERS.register("test_table", recognize, replace=True)
        return "test_table"

    return install


Reply = tuple[int, dict[str, Any]]


class ChatServer:
    """A real local OpenAI-compatible HTTP server (stdlib ``http.server`` in a thread).

    ``respond(body)`` gives each request's (HTTP status, JSON payload); every request body
    is kept in :attr:`requests`, its Authorization header in :attr:`authorization`.
    """

    def __init__(self, respond: Callable[[dict[str, Any]], Reply]) -> None:
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        self.authorization: list[str | None] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append({"path": self.path, "body": body})
                    server.authorization.append(self.headers.get("Authorization"))
                code, payload = server.respond(body)
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


def chat_answer(model: str, content: str, **served: Any) -> Reply:
    """A 200 chat completion from ``model`` (with any extra top-level fields it echoes)."""
    return 200, {
        "model": model,
        "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
        **served,
    }
