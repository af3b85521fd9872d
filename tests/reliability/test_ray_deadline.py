"""Joining a Ray cluster has a deadline: an unreachable address is a one-line error at once,
a port that never answers one after ``--ray-timeout``, and SIGTERM works while connecting
(before: over 10 minutes of silence, and SIGTERM ignored)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.reliability.commands import (
    forward_benchmark,
    ocsr_cohort,
    ocsr_run,
    p2s_build,
    p2s_build_inputs,
    retro_eval,
    retro_inputs,
)

pytestmark = pytest.mark.external


class SilentServer:
    """A TCP port that accepts connections and never says a word (not a Ray cluster);
    ``dialled`` is set once someone connects."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("0.0.0.0", 0))  # Ray may dial the node address, not 127.0.0.1
        self.socket.listen(64)
        self.port = int(self.socket.getsockname()[1])
        self.dialled = threading.Event()
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.held.append(connection)
            self.dialled.set()

    def close(self) -> None:
        for connection in self.held:
            connection.close()
        self.socket.close()


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()


def _command(tmp_path: Path, address: str, family: str) -> list[str]:
    """A command that takes ``--ray-address``, joining ``address`` with a 5 s deadline."""
    ray = ["--executor", "ray", "--ray-address", address, "--ray-timeout", "5"]
    if family == "canon":
        smiles = tmp_path / "in.smi"
        smiles.write_text("CCO\n")
        return ["canon", str(smiles), "-q", *ray]
    if family == "forward":
        return forward_benchmark(tmp_path / "forward", *ray)
    if family == "retro":
        on_ray = ("executor=ray", f"ray_address={address}", "ray_timeout=5")
        return retro_eval(*retro_inputs(tmp_path), tmp_path / "retro", *on_ray)
    if family == "ocsr":
        return ocsr_run(*ocsr_cohort(tmp_path, 2), tmp_path / "ocsr", *ray)
    return p2s_build(*p2s_build_inputs(tmp_path), tmp_path / "p2s-data", *ray)


@pytest.mark.parametrize("family", ["canon", "forward", "retro", "ocsr", "p2s"])
def test_an_unreachable_address_is_an_error_at_once(tmp_path: Path, family: str) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "chemgauge", *_command(tmp_path, "127.0.0.1:1", family)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert (
        "error: cannot reach the Ray cluster at 127.0.0.1:1 (Connection refused); "
        "check --ray-address"
    ) in done.stderr.splitlines()
    assert time.monotonic() - started < 120


def test_a_silent_cluster_times_out(tmp_path: Path, silent: SilentServer) -> None:
    address = f"127.0.0.1:{silent.port}"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "chemgauge", *_command(tmp_path, address, "canon")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    # Ray's own C++ warnings may come before or after chemgauge's one line
    assert (
        f"error: no Ray cluster answered at {address} within 5 s (--ray-timeout); "
        "check --ray-address, or start the cluster first"
    ) in done.stderr.splitlines()
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < 120


def test_sigterm_while_connecting(tmp_path: Path, silent: SilentServer) -> None:
    command = _command(tmp_path, f"127.0.0.1:{silent.port}", "canon")
    command[command.index("--ray-timeout") + 1] = "600"
    proc = subprocess.Popen(
        [sys.executable, "-m", "chemgauge", *command],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # connecting: the probe or Ray itself has dialled the silent port (no fixed sleep)
        assert silent.dialled.wait(240)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, err
    assert "interrupted (SIGTERM)" in err and "Traceback" not in err
