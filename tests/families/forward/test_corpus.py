"""Corpus schema 1: counters, identity vs group key, dedup, conflicts, splits, --strict."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chemgauge.errors import DataQualityError, InputFileError
from chemgauge.eval.splits import assign_split
from chemgauge.families.forward.corpus import (
    CORPUS_COUNTERS,
    BenchReaction,
    CorpusStream,
    InvalidRecord,
    group_key_of,
    load_corpus,
    open_corpus,
    reaction_identity,
)

from .conftest import FIXTURE_CORPUS, corpus_line


def test_every_counter_is_reported_even_when_zero(write_corpus: Any) -> None:
    corpus = load_corpus(write_corpus([corpus_line("a", ["CCO"], [["CC=O"]])]))
    assert tuple(corpus.stats.counters()) == CORPUS_COUNTERS
    assert set(corpus.stats.counters().values()) == {0}
    assert corpus.stats.records_accepted == 1


def test_blank_lines_are_skipped_silently_and_malformed_json_gives_no_row(
    write_corpus: Any,
) -> None:
    path = write_corpus(
        [
            "",
            "   ",
            "{broken",
            "[1, 2]",
            json.dumps(
                {
                    "schema_version": 1,
                    "reaction_id": "x",
                    "reactants": "CCO",
                    "accepted_products": [["C"]],
                }
            ),
            json.dumps(
                {
                    "schema_version": "1",
                    "reaction_id": "y",
                    "reactants": ["C"],
                    "accepted_products": [["C"]],
                }
            ),
            json.dumps({"schema_version": 1, "reactants": ["C"], "accepted_products": [["C"]]}),
            corpus_line("ok", ["CCO"], [["CC=O"]]),
        ]
    )
    corpus = load_corpus(path)
    assert corpus.stats.blank_lines == 2
    assert corpus.stats.counts["malformed_json"] == 5
    assert [e.reaction_id for e in corpus.entries] == ["ok"]
    assert {w.line for w in corpus.stats.warnings} == {3, 4, 5, 6, 7}


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (corpus_line("w", ["CCO"], [["C"]], schema_version=2), "wrong_schema_version"),
        (corpus_line("e1", [], [["C"]]), "empty_reactants_or_products"),
        (corpus_line("e2", ["CCO"], []), "empty_reactants_or_products"),
        (corpus_line("e3", ["CCO"], [["C"], []]), "empty_reactants_or_products"),
        (corpus_line("e4", ["CCO", " "], [["C"]]), "empty_reactants_or_products"),
        (corpus_line("u1", ["C1CC"], [["C"]]), "unparseable_smiles"),
        (corpus_line("u2", ["CCO"], [["C(C)(C)(C)(C)C"]]), "unparseable_smiles"),
    ],
)
def test_rejected_lines_with_an_id_become_invalid_records(
    write_corpus: Any, line: str, code: str
) -> None:
    corpus = load_corpus(write_corpus([line]))
    assert corpus.stats.counts[code] == 1
    [entry] = corpus.entries
    assert isinstance(entry, InvalidRecord) and entry.reason == code and entry.source_line == 1


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("{broken", "{broken"),
        (corpus_line("u", ["C1CC"], [["C"]]), "C1CC"),
        (corpus_line("w", ["C"], [["C"]], schema_version=3), "schema_version"),
        (corpus_line("e", ["CCO"], []), "accepted_products"),
    ],
)
def test_strict_names_file_line_and_value(write_corpus: Any, line: str, value: str) -> None:
    path = write_corpus([corpus_line("ok", ["CCO"], [["CC=O"]]), line])
    with pytest.raises(DataQualityError) as info:
        load_corpus(path, strict=True)
    message = str(info.value)
    assert f"{path}, line 2" in message and value in message


def test_strict_refuses_conflicts_but_not_duplicates(write_corpus: Any) -> None:
    dup = [corpus_line("a", ["CCO"], [["CC=O"]]), corpus_line("b", ["OCC"], [["O=CC"]])]
    assert load_corpus(write_corpus(dup), strict=True).stats.counts["duplicate_records_merged"] == 1
    reused = [corpus_line("a", ["CCO"], [["CC=O"]]), corpus_line("a", ["CCN"], [["CC=O"]])]
    with pytest.raises(DataQualityError, match="line 2"):
        load_corpus(write_corpus(reused), strict=True)
    keys = [
        corpus_line("a", ["CCO"], [["CC=O"]], group_key="P1"),
        corpus_line("b", ["CCO"], [["CC=O"]], group_key="P2"),
    ]
    with pytest.raises(DataQualityError, match="conflicting group_key"):
        load_corpus(write_corpus(keys), strict=True)


def test_missing_corpus_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"nope\.jsonl"):
        load_corpus(tmp_path / "nope.jsonl")


def test_identity_uses_canonical_sorted_sides_and_dedups_keeping_first(
    write_corpus: Any,
) -> None:
    path = write_corpus(
        [
            corpus_line(
                "first", ["OC(C)=O", "NCc1ccccc1"], [["CC(=O)NCc1ccccc1"]], reaction_class="amide"
            ),
            corpus_line(
                "second", ["NCc1ccccc1.CC(O)=O"], [["O=C(C)NCc1ccccc1"]], reaction_class="other"
            ),
        ]
    )
    corpus = load_corpus(path)
    [reaction] = corpus.reactions
    assert reaction.reaction_id == "first" and reaction.reaction_class == "amide"
    assert reaction.reactants_original == ("OC(C)=O", "NCc1ccccc1")
    assert reaction.reactants_canonical == ("CC(=O)O", "NCc1ccccc1")
    assert corpus.stats.counts["duplicate_records_merged"] == 1
    assert reaction.identity == reaction_identity(
        ("NCc1ccccc1", "CC(=O)O"), (("CC(=O)NCc1ccccc1",),)
    )


def test_accepted_products_dedup_outer_list_only(write_corpus: Any) -> None:
    path = write_corpus(
        [corpus_line("a", ["CCO"], [["CC=O", "O"], ["O", "O=CC"], ["O", "O", "CC=O"]])]
    )
    [reaction] = load_corpus(path).reactions
    assert reaction.accepted_products_canonical == (("CC=O", "O"), ("CC=O", "O", "O"))


def test_group_key_excludes_products_and_prefers_the_explicit_key(write_corpus: Any) -> None:
    path = write_corpus(
        [
            corpus_line("a", ["CCO"], [["CC=O"]]),
            corpus_line("b", ["OCC"], [["CC(=O)O"]]),
            corpus_line("c", ["CCO"], [["C=C"]], group_key="US123"),
        ]
    )
    a, b, c = load_corpus(path).reactions
    assert a.identity != b.identity
    assert a.group_key == b.group_key == group_key_of(None, ("CCO",))
    assert a.split == b.split == assign_split(a.group_key)
    assert c.group_key == "US123" and c.split == assign_split("US123")
    assert group_key_of("", ("CCO",)) == a.group_key


def test_a_split_in_the_corpus_is_never_trusted(write_corpus: Any) -> None:
    key = next(f"k{i}" for i in range(100) if assign_split(f"k{i}") == "train")
    path = write_corpus([corpus_line("a", ["CCO"], [["CC=O"]], group_key=key, split="test")])
    [reaction] = load_corpus(path).reactions
    assert reaction.split == "train"


def test_reused_reaction_id_for_another_reaction_is_rejected(write_corpus: Any) -> None:
    path = write_corpus(
        [
            corpus_line("a", ["CCO"], [["CC=O"]]),
            corpus_line("a", ["CCO"], [["CC(=O)O"]]),
            corpus_line("a", ["OCC"], [["CC=O"]]),
        ]
    )
    corpus = load_corpus(path)
    first, second = corpus.entries
    assert isinstance(first, BenchReaction)
    assert isinstance(second, InvalidRecord) and second.reason == "conflicting_reaction_id"
    assert corpus.stats.counts["conflicting_reaction_ids"] == 1
    assert corpus.stats.counts["duplicate_records_merged"] == 1


def test_conflicting_explicit_group_keys_reject_the_whole_reaction(write_corpus: Any) -> None:
    path = write_corpus(
        [
            corpus_line("a", ["CCO"], [["CC=O"]], group_key="P1"),
            corpus_line("b", ["CCO"], [["CC=O"]]),
            corpus_line("c", ["CCO"], [["CC=O"]], group_key="P2"),
            corpus_line("d", ["CCN"], [["CC=N"]], group_key="P1"),
        ]
    )
    corpus = load_corpus(path)
    kinds = [(type(e).__name__, e.source_line) for e in corpus.entries]
    assert kinds == [("InvalidRecord", 1), ("InvalidRecord", 3), ("BenchReaction", 4)]
    assert all(
        e.reason == "conflicting_group_key" for e in corpus.entries if isinstance(e, InvalidRecord)
    )
    assert corpus.stats.counts["conflicting_group_keys"] == 2  # both copies
    assert corpus.stats.counts["duplicate_records_merged"] == 1
    stats = corpus.stats
    assert stats.lines_read == stats.blank_lines + stats.records_accepted + sum(
        stats.counts.values()
    )  # every line accepted, merged or rejected once


def test_stereo_presence_is_detected_from_canonical_text(write_corpus: Any) -> None:
    path = write_corpus(
        [
            corpus_line("a", ["C[C@H](N)C(=O)O"], [["C"]]),
            corpus_line("b", ["C/C=C/C"], [["C"]]),
            corpus_line("c", ["CC(N)C(=O)O"], [["C"]]),
        ]
    )
    flags = [r.has_stereochemistry for r in load_corpus(path).reactions]
    assert flags == [True, True, False]


def test_warnings_are_bounded_but_counts_exact(write_corpus: Any) -> None:
    corpus = load_corpus(write_corpus(["{bad"] * 120 + [corpus_line("a", ["CCO"], [["CC=O"]])]))
    assert corpus.stats.counts["malformed_json"] == 120
    assert len(corpus.stats.warnings) == 50


def test_the_stream_yields_as_it_reads_and_rejects_conflicts_in_hindsight() -> None:
    """Entries come out before later lines are read; a first occurrence whose duplicate
    disagrees on the group key is yielded as a reaction, then overridden."""
    lines = [
        corpus_line("a", ["CCO"], [["CC=O"]], group_key="P1"),
        corpus_line("b", ["CCN"], [["CC=N"]]),
        corpus_line("c", ["OCC"], [["O=CC"]], group_key="P2"),
    ]
    read: list[int] = []

    def records() -> Iterator[tuple[int, str]]:
        for number, text in enumerate(lines, start=1):
            read.append(number)
            yield number, text

    stream = CorpusStream(records(), path="mem", sha256="0" * 64)
    entries = iter(stream)
    first = next(entries)
    assert isinstance(first, BenchReaction) and read == [1]
    rest = list(entries)
    assert [(type(e).__name__, e.source_line) for e in rest] == [
        ("BenchReaction", 2),
        ("InvalidRecord", 3),
    ]
    assert stream.exhausted and stream.entries == 3
    assert set(stream.overrides) == {1}
    assert stream.overrides[1].reason == "conflicting_group_key"
    assert stream.stats.records_accepted == 1  # line 1 no longer counts


def test_load_corpus_equals_the_stream_with_its_overrides() -> None:
    corpus = load_corpus(FIXTURE_CORPUS)
    with open_corpus(FIXTURE_CORPUS) as stream:
        streamed = [stream.overrides.get(e.source_line, e) for e in list(stream)]
    assert streamed == corpus.entries
    assert stream.stats.to_dict() == corpus.stats.to_dict()
    assert stream.sha256 == corpus.sha256


def test_a_late_group_key_conflict_rejects_the_whole_reaction(write_corpus: Any) -> None:
    """First copy without a key, later copies with famA then famB: the keys still conflict."""
    lines = [
        corpus_line("a", ["CCO"], [["CC=O"]]),
        corpus_line("b", ["OCC"], [["CC=O"]], group_key="famA"),
        corpus_line("c", ["CCO"], [["O=CC"]], group_key="famB"),
        corpus_line("d", ["CCN"], [["CC=N"]]),
    ]
    corpus = load_corpus(write_corpus(lines))
    kinds = [(type(e).__name__, e.source_line) for e in corpus.entries]
    assert kinds == [("InvalidRecord", 1), ("InvalidRecord", 3), ("BenchReaction", 4)]
    assert corpus.stats.counts["conflicting_group_keys"] == 2
    assert corpus.stats.counts["duplicate_records_merged"] == 1
    assert corpus.stats.records_accepted == 1
    conflict = next(w for w in corpus.stats.warnings if w.code == "conflicting_group_keys")
    assert "'famA'" in conflict.message and "line 2" in conflict.message
    with pytest.raises(DataQualityError, match=r"conflicting group_key.*'famA'.*'famB'"):
        load_corpus(write_corpus(lines), strict=True)


def test_a_duplicate_of_a_rejected_reaction_never_says_first_kept(write_corpus: Any) -> None:
    """The duplicate on line 2 is merged into line 1, which line 3 rejects in hindsight."""
    lines = [
        corpus_line("a", ["CCO"], [["CC=O"]], group_key="P1"),
        corpus_line("b", ["OCC"], [["CC=O"]]),
        corpus_line("c", ["CCO"], [["CC=O"]], group_key="P2"),
        corpus_line("d", ["CCO"], [["CC=O"]]),
    ]
    corpus = load_corpus(write_corpus(lines))
    merged = [w for w in corpus.stats.warnings if w.code == "duplicate_records_merged"]
    assert [w.line for w in merged] == [2, 4]
    for warning in merged:
        assert "kept" not in warning.message
        assert "line 1" in warning.message and "rejected" in warning.message
    plain = load_corpus(write_corpus(lines[:2], name="plain.jsonl")).stats.warnings
    assert [w.message for w in plain] == ["same reaction as line 1; merged into it"]


def test_invalid_reasons_name_one_conflict_each_in_the_singular(write_corpus: Any) -> None:
    lines = [
        corpus_line("a", ["CCO"], [["CC=O"]], group_key="P1"),
        corpus_line("a", ["CCN"], [["CC=N"]]),
        corpus_line("c", ["CCO"], [["CC=O"]], group_key="P2"),
    ]
    reasons = {
        e.reason for e in load_corpus(write_corpus(lines)).entries if isinstance(e, InvalidRecord)
    }
    assert reasons == {"conflicting_reaction_id", "conflicting_group_key"}


def test_group_key_source_is_recorded(write_corpus: Any) -> None:
    lines = [
        corpus_line("a", ["CCO"], [["CC=O"]]),
        corpus_line("b", ["CCN"], [["CC=N"]], group_key="US1"),
    ]
    a, b = load_corpus(write_corpus(lines)).reactions
    assert (a.group_key_source, b.group_key_source) == ("fallback", "explicit")
