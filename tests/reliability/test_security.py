"""Security: no shell strings, no code-executing formats on user data, no secret in outputs."""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.names.engine.namer import CommandNamer
from chemgauge.families.names.inputs import read_smiles_file

SRC = Path(__file__).resolve().parents[2] / "src" / "chemgauge"

FORBIDDEN = {
    "shell=True": re.compile(r"shell\s*=\s*True"),
    "os.system": re.compile(r"\bos\.system\s*\("),
    "os.popen": re.compile(r"\bos\.popen\s*\("),
    "pickle.load": re.compile(r"\b(c?pickle|dill|joblib|marshal|shelve)\.(loads?|open)\s*\("),
    "eval/exec": re.compile(r"(?<![\w.])(eval|exec)\("),
    "yaml.load": re.compile(r"\byaml\.(unsafe_)?load\s*\("),
    "numpy allow_pickle": re.compile(r"allow_pickle\s*=\s*True"),
    "torch.load": re.compile(r"\btorch\.load\s*\("),
}


# Reviewed exceptions: (check, file) -> why it is not user data.
ALLOWED = {
    ("pickle.load", "chem/graphdiff_worker.py"): (
        "IPC with chemgauge's own graph-diff worker over a private pipe: the parent pickles "
        "RDKit binaries it made itself; no file or network data is unpickled"
    ),
    ("pickle.load", "families/p2s/engine/guard.py"): (
        "IPC with chemgauge's own calculator child over a private pipe: the child unpickles "
        "the provider its parent pickled; no file or network data is unpickled"
    ),
}


def _sources() -> list[Path]:
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 50  # the scan must see the package
    return files


@pytest.mark.parametrize("name", sorted(FORBIDDEN))
def test_no_shell_strings_or_code_executing_loaders(name: str) -> None:
    pattern = FORBIDDEN[name]
    hits = [
        f"{path.relative_to(SRC)}:{number}: {line.strip()}"
        for path in _sources()
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if pattern.search(line)
        and not line.lstrip().startswith("#")
        and (name, str(path.relative_to(SRC))) not in ALLOWED
    ]
    assert hits == [], f"{name} in chemgauge sources:\n" + "\n".join(hits)


def test_scanner_catches_what_it_claims(tmp_path: Path) -> None:
    for line in (
        "subprocess.run(cmd, shell=True)",
        "os.system('ls')",
        "pickle.loads(b)",
        "x = eval(text)",
        "yaml.load(f)",
        "np.load(p, allow_pickle=True)",
    ):
        assert any(p.search(line) for p in FORBIDDEN.values()), line
    assert not any(p.search("model.evaluate(x)") for p in FORBIDDEN.values())


METACHARACTERS = [
    "$(touch PWNED_A)",
    "`touch PWNED_B`",
    "C; touch PWNED_C",
    "C | touch PWNED_D",
    "C && touch PWNED_E",
    "C > PWNED_F",
    "'\"$HOME\\",
    "C*?[]{}~!#",
]


def test_namer_sees_metacharacters_verbatim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "dir with spaces; $(touch PWNED_G) `x`"
    folder.mkdir()
    script = folder / "namer; rm -rf $HOME.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n")
    command = f"{sys.executable} {shlex_quote(str(script))} '$(touch PWNED_H)'"
    namer = CommandNamer.from_string(command, timeout_s=60)
    assert namer.argv[-1] == "$(touch PWNED_H)"
    assert namer.name(METACHARACTERS) == METACHARACTERS
    assert not list(tmp_path.glob("PWNED*")) and not list(folder.glob("PWNED*"))


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def test_file_names_with_metacharacters_are_plain_paths(tmp_path: Path) -> None:
    path = tmp_path / "$(touch PWNED); `id` | x & y.smi"
    path.write_text("CCO a\n$(touch PWNED) b\n")
    stats = RejectionStats()
    pairs = read_smiles_file(path, stats)
    assert [p.smiles for p in pairs] == ["CCO"] and stats.rejected == 1
    out = tmp_path / "out; rm -rf x.txt"
    result = CliRunner().invoke(
        app, ["canon", str(path), "-o", str(out), "-q", "--executor", "serial"]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text().splitlines()[0] == "CCO\ta"
    assert not list(tmp_path.glob("PWNED*"))


# -- secrets -------------------------------------------------------------------------------

PLANTED = "sk-chemgauge-planted-7f3a9c1e5b2d4068"


class _EchoServer:
    """A chat endpoint that answers index 0, and reports the Authorization header it got."""

    def __init__(self, echo_key: bool) -> None:
        self.seen: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                auth = self.headers.get("Authorization", "")
                outer.seen.append(auth)
                reasoning = f"you sent {auth}" if echo_key else "index 0 fits"
                content = json.dumps({"selected_candidate_index": 0, "reasoning": reasoning})
                body = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def echo_server() -> Iterator[_EchoServer]:
    server = _EchoServer(echo_key=False)
    server.thread.start()
    yield server
    server.server.shutdown()


@pytest.fixture(scope="module")
def p2s_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.families.p2s.conftest import SOURCES, write_table

    from chemgauge.families.p2s.build import build_benchmark
    from chemgauge.families.p2s.config import BuildConfig
    from chemgauge.families.p2s.engine.properties import TableProvider

    root = tmp_path_factory.mktemp("p2s_secret")
    sources = root / "sources.smi"
    sources.write_text("\n".join(SOURCES[:6]) + "\n")
    config = BuildConfig(directories=("dipole",), candidates=3, counterfactuals_per_record=1)
    table = root / "table.jsonl"
    write_table(sources, table, config)
    build_benchmark(sources, root / "data", TableProvider(table), config)
    return root / "data"


@pytest.mark.external
def test_planted_api_key_never_reaches_an_output_file(
    p2s_data: Path, tmp_path: Path, echo_server: _EchoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHEMGAUGE_TEST_KEY", PLANTED)
    out = tmp_path / "runs"
    args = [
        "p2s",
        "run",
        str(p2s_data),
        "-m",
        "chat",
        "--base-url",
        echo_server.url,
        "--chat-model",
        "m",
        "--api-key-env",
        "CHEMGAUGE_TEST_KEY",
        "-o",
        str(out),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert echo_server.seen and all(s == f"Bearer {PLANTED}" for s in echo_server.seen)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) >= 4
    for path in files:
        assert PLANTED.encode() not in path.read_bytes(), path
    assert PLANTED not in result.output
