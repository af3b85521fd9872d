"""Wall-clock limits hold for the http back-end as for commands: a server that keeps a
request alive by dripping bytes is cut at the per-attempt limit (``timeout``), and the
overall budget stops new attempts (``not_run`` with the reason).

Timing assertions are bounds with a wide margin derived from the limits, never tight.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.http import HttpRecognizer, HttpSpec
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.runner import run_attempts

#: Slack for a loaded two-core machine: far above any honest overhead, far below the 30 s
#: the slow server would otherwise keep a request alive.
MARGIN = 10.0


class DripServer:
    """A local server that answers 200 and then sends one byte every 0.2 s for 30 s, so no
    socket read ever waits long enough for a socket timeout."""

    def __init__(self) -> None:
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                server.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "1000")
                self.end_headers()
                try:
                    for _ in range(150):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(0.2)
                except (BrokenPipeError, ConnectionResetError):
                    return

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> DripServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_dripping_server_is_cut_at_the_attempt_limit(tmp_path: Path) -> None:
    image = tmp_path / "input.png"
    image.write_bytes(b"\x89PNG")
    with DripServer() as server:
        started = time.monotonic()
        result = HttpRecognizer(HttpSpec(server.url, "vision-1")).recognize(image, 1.0)
        wall = time.monotonic() - started
    assert result.output.status == "timeout"
    assert "1 s" in result.output.message
    assert wall < 1.0 + MARGIN


def test_slow_server_under_limit_and_budget(small_cohort: Manifest, tmp_path: Path) -> None:
    """The audit case: --per-workflow-seconds 1 --budget-seconds 5 against a slow server."""
    config = RunConfig(per_workflow_seconds=1.0, budget_seconds=5.0)
    with DripServer() as server:
        started = time.monotonic()
        rows = run_attempts(
            small_cohort, HttpRecognizer(HttpSpec(server.url, "vision-1")), config, tmp_path / "r"
        )
        wall = time.monotonic() - started
    statuses = {row["status"] for row in rows}
    assert statuses <= {"timeout", "not_run"} and "timeout" in statuses
    assert len(rows) == len(small_cohort.cases)
    ran = [row for row in rows if row["status"] == "timeout"]
    assert all(row["recognition"]["elapsed_seconds"] < 1.0 + MARGIN for row in ran)
    not_run = {row["not_run_reason"] for row in rows if row["status"] == "not_run"}
    assert not_run == {"overall budget (5 s) exhausted"}
    assert wall < 5.0 + MARGIN
    # No more attempts started than the budget allows at one second each (one may start
    # with a sliver of budget left).
    assert len(ran) <= 6


def test_a_python_callable_is_cut_at_the_attempt_limit(tmp_path: Path) -> None:
    from chemgauge.families.ocsr.engine.base import RECOGNIZERS
    from chemgauge.families.ocsr.engine.recognizers import PythonRecognizer

    release = threading.Event()
    RECOGNIZERS.register("never_answers", lambda image: release.wait(60) and "CCO", replace=True)
    image = tmp_path / "input.png"
    image.write_bytes(b"\x89PNG")
    started = time.monotonic()
    out = PythonRecognizer("never_answers").recognize(image, 0.5).output
    release.set()
    assert out.status == "timeout" and time.monotonic() - started < 0.5 + MARGIN
