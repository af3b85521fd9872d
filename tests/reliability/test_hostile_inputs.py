"""Every landed reader against hostile files: load with counted rejections, or a chemgauge
error naming the file. Anything else (a raw ValueError, RecursionError, csv.Error,
UnicodeError, a lost line) fails. Readers: foundation, names, p2s, forward (rule files,
corpus, template manifest), retro (SMI/CSV/JSONL data, predictions model) and OCSR
(manifest, image-set import).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.reliability.family_readers import all_readers
from tests.reliability.hostile import DIRECTORY, hostile_contents, materialize, mutate, try_reader
from tests.reliability.readers import Reader, landed_readers

READERS = {f"{r.family}:{r.name}": r for r in all_readers()}
VARIANTS = sorted(hostile_contents(b"x\n"))

# Known bugs in files this suite does not own, reported to their owners: each case fails
# today and is expected to; a fix turns it into an XPASS, which fails (strict) as a reminder.
KNOWN_BUGS: dict[tuple[str, str], str] = {}


def _cases() -> list[object]:
    cases: list[object] = []
    for reader in sorted(READERS):
        for variant in VARIANTS:
            bug = KNOWN_BUGS.get((reader, variant))
            marks = [pytest.mark.xfail(reason=bug, strict=True)] if bug else []
            cases.append(pytest.param(reader, variant, marks=marks, id=f"{reader}-{variant}"))
    return cases


@pytest.fixture(scope="module")
def p2s_readers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Reader]:
    from tests.families.p2s.conftest import SOURCES, write_table

    from chemgauge.families.p2s.build import build_benchmark
    from chemgauge.families.p2s.config import BuildConfig
    from chemgauge.families.p2s.engine.properties import TableProvider

    root = tmp_path_factory.mktemp("p2s_data")
    sources = root / "sources.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    config = BuildConfig(directories=("dipole",), candidates=4, counterfactuals_per_record=1)
    table = root / "table.jsonl"
    write_table(sources, table, config)
    build_benchmark(sources, root / "data", TableProvider(table), config)
    readers = landed_readers(root / "data")
    return {f"{r.family}:{r.name}": r for r in readers if r.family == "p2s" and not r.names_file}


def _names(reader: Reader, path: Path) -> str | None:
    """What a refusal must name: the file, or the folder the reader copied it into."""
    return None if reader.names_file else str(path.parent / f"data_{path.name}")


def _run(reader: Reader, variant: str, folder: Path) -> None:
    content = hostile_contents(reader.valid)[variant]
    path = materialize(folder / f"input_{variant}{reader.suffix}", content)
    outcome = try_reader(reader.read, path, _names(reader, path))
    assert outcome.kind != "uncaught", f"{reader.family}:{reader.name} on {variant}: {outcome}"
    if variant == "valid":
        assert outcome.kind == "loaded", outcome
    # (an empty image is recorded by ocsr import like any refused image: the run skips it)
    empty_refused = ("pairs_tsv", "pairs_csv", "data_csv", "manifest")
    if content is DIRECTORY or (variant == "empty" and reader.name in empty_refused):
        assert outcome.kind == "refused"


@pytest.mark.parametrize(("reader", "variant"), _cases())
def test_reader_survives_hostile_file(reader: str, variant: str, tmp_path: Path) -> None:
    _run(READERS[reader], variant, tmp_path)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("reader", ["p2s:task_file", "p2s:label_file"])
def test_p2s_views_survive_hostile_files(
    p2s_readers: dict[str, Reader], reader: str, variant: str, tmp_path: Path
) -> None:
    _run(p2s_readers[reader], variant, tmp_path)


def test_missing_file_is_named(tmp_path: Path) -> None:
    for reader in READERS.values():
        if not reader.names_file:  # the reader copies the file into a folder of its own
            continue
        path = tmp_path / f"missing{reader.suffix}"
        outcome = try_reader(reader.read, path)
        assert outcome.kind == "refused", (reader.name, outcome)


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**32 - 1), edits=st.integers(1, 12))
def test_reader_survives_random_mutations(
    reader: str, seed: int, edits: int, tmp_path: Path
) -> None:
    spec = READERS[reader]
    path = tmp_path / f"mutated{spec.suffix}"
    path.write_bytes(mutate(spec.valid, seed, edits))
    outcome = try_reader(spec.read, path, _names(spec, path))
    assert outcome.kind != "uncaught", f"{reader} seed {seed}: {outcome}"


JSONL_READERS = [
    "names:pairs_jsonl",
    "foundation:read_jsonl",
    "p2s:predictions",
    "forward:corpus",
    "retro:data_jsonl",
    "retro:predictions",
]
KEYS = [
    "smiles", "name", "id", "record_id", "selected_candidate_index", "invalid", "x",
    "schema_version", "reaction_id", "reactants", "accepted_products", "group_key",
    "reaction_class", "mapped_reaction", "products", "reagents", "class", "product",
    "predictions",
]  # fmt: skip


@pytest.mark.parametrize("reader", JSONL_READERS)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    values=st.lists(
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)
            ),
            max_leaves=8,
        ),
        min_size=1,
        max_size=6,
    )
)
def test_jsonl_readers_survive_wrong_types(
    reader: str, values: list[object], tmp_path: Path
) -> None:
    spec = READERS[reader]
    path = tmp_path / f"typed{spec.suffix}"
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    outcome = try_reader(spec.read, path)
    assert outcome.kind != "uncaught", f"{reader}: {outcome}"
