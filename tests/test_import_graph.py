"""The package's import graph: no cycle, dependencies pointing one way, families kept apart,
every module importable alone.

The framework is layered (``errors``/``registry`` < ``chem``/``eval`` < ``families`` (the
registry) < ``report`` < ``cli``); every top-level part must have a layer, so a new one cannot
slip past the check. Each family (``chemgauge.families.<name>``) may import the framework and
itself, never another family (the declared exceptions are
``chemgauge.families.DECLARED_CROSS_IMPORTS``), and no framework module imports a family.

Edges are every ``import`` of a chemgauge module anywhere in a file (function-level imports
included, ``if TYPE_CHECKING:`` blocks excluded): a lazy import that runs back up the layers is
still a cycle, it only fails later.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import chemgauge

ROOT = Path(chemgauge.__file__).resolve().parent

#: Layer of each top-level part of the framework; a module may import only its own layer or
#: lower ones. Family packages are not layered: the family rule below applies to them.
LAYERS = {
    "errors": 0,
    "registry": 0,
    "exports": 0,  # the lazy-export helper every package __init__ uses
    "examples": 0,  # the shared example input files, importing nothing
    "chem": 1,
    "eval": 1,
    "families": 2,  # the Family registry (chemgauge/families/__init__.py) only
    "report": 3,
    "cli": 4,
    "__main__": 5,
}
FAMILY_PREFIX = "chemgauge.families."


def _module_name(path: Path) -> str:
    parts = ["chemgauge", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[str]:
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.append(sub if sub in MODULES else node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [name for name in found if name == "chemgauge" or name.startswith("chemgauge.")]


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        targets = {t for t in _imports(ast.parse(path.read_text(encoding="utf-8"))) if t != name}
        graph[name] = {t for t in targets if t in MODULES}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _family(module: str) -> str | None:
    """The family a module belongs to (``chemgauge.families.forward.rows``: forward)."""
    if not module.startswith(FAMILY_PREFIX):
        return None
    return module.removeprefix(FAMILY_PREFIX).split(".")[0]


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2 or _family(module) is not None:
        return None
    if parts[1] not in LAYERS:
        raise AssertionError(f"{module}: top-level part {parts[1]!r} has no layer in LAYERS")
    return LAYERS[parts[1]]


def _family_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports that break the family rule (see the module docstring)."""
    from chemgauge.families import DECLARED_CROSS_IMPORTS

    bad = []
    for module, targets in graph.items():
        mine = _family(module)
        for target in targets:
            theirs = _family(target)
            if theirs is None or theirs == mine:
                continue
            allowed = mine is not None and any(
                mine == importer and (target == prefix or target.startswith(prefix + "."))
                for importer, prefix in DECLARED_CROSS_IMPORTS
            )
            if not allowed:
                where = "framework" if mine is None else f"family {mine}"
                bad.append(f"{module} ({where}) -> {target} (family {theirs})")
    return bad


def test_cycle_finder_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_import_graph_has_no_cycle() -> None:
    graph = _graph()
    # a package's __init__ may re-export its own modules; a module importing its own package's
    # __init__ back is then a cycle and is reported like any other
    assert _cycles(graph) == []


def test_dependencies_point_one_way() -> None:
    upward = []
    for module, targets in _graph().items():
        mine = _layer(module)
        for target in targets:
            theirs = _layer(target)
            if mine is not None and theirs is not None and theirs > mine:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_every_top_level_part_has_a_layer() -> None:
    parts = {name.split(".")[1] for name in MODULES if name.count(".") >= 1}
    assert sorted(parts - set(LAYERS)) == []


def test_families_import_only_the_framework_and_themselves() -> None:
    assert _family_violations(_graph()) == []


def test_a_planted_cross_family_import_is_caught() -> None:
    graph = {
        "chemgauge.families.p2s.runner": {
            "chemgauge.families.names.metrics",
            "chemgauge.eval.stats",
        },
        "chemgauge.families.retro.roundtrip": {"chemgauge.families.forward.engine.predictor"},
        "chemgauge.families.retro.runner": {"chemgauge.families.forward.rows"},
        "chemgauge.report.board": {"chemgauge.families.ocsr.adapter"},
        "chemgauge.families.ocsr.page": {"chemgauge.families.ocsr.adapter", "chemgauge.report"},
    }
    assert _family_violations(graph) == [
        "chemgauge.families.p2s.runner (family p2s) -> chemgauge.families.names.metrics "
        "(family names)",
        "chemgauge.families.retro.runner (family retro) -> chemgauge.families.forward.rows "
        "(family forward)",
        "chemgauge.report.board (framework) -> chemgauge.families.ocsr.adapter (family ocsr)",
    ]


def test_a_new_top_level_module_must_be_given_a_layer() -> None:
    with pytest.raises(AssertionError, match="has no layer"):
        _layer("chemgauge.newpart.thing")


def test_each_family_package_has_the_same_parts() -> None:
    from chemgauge.families import FAMILIES

    for name in FAMILIES.names():
        folder = ROOT / "families" / name
        parts = {p.name for p in folder.iterdir()}
        missing = {"__init__.py", "family.py", "cli.py", "adapter.py", "engine", "examples"} - parts
        assert not missing, f"{name}: {sorted(missing)}"
    loose = sorted(p.name for p in (ROOT / "families").glob("*.py") if p.name != "__init__.py")
    assert loose == []


@pytest.mark.slow
def test_every_module_imports_alone() -> None:
    """Each module imported into an interpreter holding no other chemgauge module (``__main__``
    aside: importing it runs the command line)."""
    script = (
        "import importlib, sys\n"
        "failed = []\n"
        f"for name in {sorted(set(MODULES) - {'chemgauge.__main__'})!r}:\n"
        "    for loaded in [m for m in sys.modules if m == 'chemgauge' or "
        "m.startswith('chemgauge.')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        failed.append(f'{name}: {type(exc).__name__}: {exc}')\n"
        "print('\\n'.join(failed))\n"
        "sys.exit(1 if failed else 0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
