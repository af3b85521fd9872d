"""A scan of the test suite for tests that cannot fail: a test function with no check at all
(no ``assert``, no ``pytest.raises``/``fail``/``warns``, no call to a helper that checks), and
assertions that always hold (``assert True``, ``x == x``, a count or a time ``>= 0``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CHECKING_CALLS = {"raises", "fail", "warns", "deprecated_call", "approx"}
CHECKING_PREFIXES = ("assert", "check", "expect", "verify", "_assert", "_check", "_expect")


def _called_names(node: ast.AST) -> Iterator[str]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            if isinstance(func, ast.Name):
                yield func.id
            elif isinstance(func, ast.Attribute):
                yield func.attr


def _checks_directly(node: ast.AST) -> bool:
    return any(isinstance(sub, ast.Assert) for sub in ast.walk(node)) or any(
        name in CHECKING_CALLS or name.startswith(CHECKING_PREFIXES) for name in _called_names(node)
    )


def _checking_helpers(tree: ast.Module) -> set[str]:
    """Module-level functions that check, directly or through other such functions."""
    functions = {
        n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    checking = {name for name, fn in functions.items() if _checks_directly(fn)}
    changed = True
    while changed:
        changed = False
        for name, fn in functions.items():
            if name not in checking and checking & set(_called_names(fn)):
                checking.add(name)
                changed = True
    return checking


def _imported_helpers(tree: ast.Module) -> set[str]:
    """Names imported from other test modules (fixtures files, parity helpers): trusted to check
    when their name says so, and scanned in their own module."""
    return {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests")
        for alias in node.names
    }


def _always_true(test: ast.expr) -> str | None:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return next(filter(None, map(_always_true, test.values)), None)
    if isinstance(test, ast.Constant) and test.value:
        return "a truthy constant"
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        same = ast.dump(left) == ast.dump(right)
        pure = not any(isinstance(sub, ast.Call) for sub in ast.walk(left))  # not a rerun
        if same and pure and isinstance(op, ast.Eq | ast.GtE | ast.LtE | ast.Is):
            return "compares a value with itself"
        if isinstance(op, ast.GtE) and isinstance(right, ast.Constant) and right.value == 0:
            if isinstance(left, ast.Call) and getattr(left.func, "id", "") == "len":
                return "a length >= 0"
            return "a count or time >= 0 (true of any count, any clock reading)"
    truthy = [v for v in getattr(test, "values", []) if isinstance(v, ast.Constant) and v.value]
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) and truthy:
        return "or True"
    return None


def _unconditional_check(body: list[ast.stmt]) -> bool:
    """True if a statement of ``body`` checks outside any ``if`` (a loop or ``with`` counts)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            if (
                stmt.orelse
                and _unconditional_check(stmt.body)
                and _unconditional_check(stmt.orelse)
            ):
                return True
            continue
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if _checks_directly(stmt):
            return True
    return False


def scan(root: Path = TESTS) -> list[str]:
    """Every finding as ``path:line: what``."""
    findings = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        helpers = _checking_helpers(tree) | _imported_helpers(tree)
        where = path.relative_to(root)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert) and (reason := _always_true(node.test)):
                findings.append(f"{where}:{node.lineno}: assertion always holds: {reason}")
            if isinstance(node, ast.Attribute) and node.attr == "RUSAGE_SELF":
                findings.append(
                    f"{where}:{node.lineno}: an in-process ru_maxrss delta (the pytest process "
                    "has already grown: measure a child's peak)"
                )
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test"):
                continue
            if helpers & set(_called_names(node)):
                continue
            if not _checks_directly(node):
                findings.append(f"{where}:{node.lineno}: {node.name} checks nothing")
            elif not _unconditional_check(node.body):
                findings.append(f"{where}:{node.lineno}: {node.name} checks only under an if")
    return findings


def test_every_test_can_fail() -> None:
    findings = scan()
    assert findings == [], "\n".join(findings)


def test_the_scan_finds_what_it_is_for(tmp_path: Path) -> None:
    (tmp_path / "test_probe.py").write_text(
        "def helper(x):\n    return x\n\n"
        "def checks(x):\n    assert x\n\n"
        "def test_nothing():\n    helper(1)\n\n"
        "def test_through_a_helper():\n    checks(1)\n\n"
        "def test_tautologies(summary, rows):\n"
        "    assert summary.grouped >= 0\n    assert len(rows) >= 0\n    assert rows == rows\n\n"
        "def test_only_if(x):\n    if x:\n        assert x\n"
    )
    assert scan(tmp_path) == [
        "test_probe.py:14: assertion always holds: a count or time >= 0 (true of any count, "
        "any clock reading)",
        "test_probe.py:15: assertion always holds: a length >= 0",
        "test_probe.py:16: assertion always holds: compares a value with itself",
        "test_probe.py:7: test_nothing checks nothing",
        "test_probe.py:18: test_only_if checks only under an if",
    ]
