"""Several providers as one: each property from its provider, partial failures counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import require_program

from chemgauge.errors import ConfigError
from chemgauge.families.p2s.build import MANIFEST, build_benchmark
from chemgauge.families.p2s.config import BuildConfig
from chemgauge.families.p2s.engine.composite import CompositeProvider, combine_providers
from chemgauge.families.p2s.engine.properties import TableProvider
from chemgauge.families.p2s.engine.registry import get_provider
from chemgauge.families.p2s.taskfile import load_directory

from .conftest import SOURCES, write_table


def test_one_provider_stays_itself_and_names_must_differ(tmp_path: Path) -> None:
    table = tmp_path / "t.jsonl"
    table.write_text('{"smiles": "CCO", "properties": {"dipole": {"value": 1, "unit": "D"}}}\n')
    provider = TableProvider(table)
    assert combine_providers([provider]) is provider
    with pytest.raises(ConfigError, match="named twice"):
        CompositeProvider([provider, TableProvider(table)])


@pytest.mark.external
def test_electronic_bundle_from_xtb_values_and_mopac_excitations(tmp_path: Path) -> None:
    require_program("mopac")
    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(SOURCES[:8]) + "\n")
    config = BuildConfig(directories=("electronic",))
    table = tmp_path / "t.jsonl"
    dropped = "Oc1ccc(Cl)cc1"  # the table lacks the first source: only mopac gives it values
    write_table(sources, table, config, drop={dropped})
    mopac = get_provider("mopac")
    both = CompositeProvider([mopac, TableProvider(table)])
    assert both.describe()["property_sources"] == {
        "dipole": "table",
        "gap": "table",
        "ultraviolet_visible": "mopac",
    }
    build_benchmark(sources, tmp_path / "data", both, config)
    manifest = json.loads((tmp_path / "data" / MANIFEST).read_text())
    assert manifest["property_failures"] == {"not in the table (table)": 1}
    assert manifest["skipped"]["electronic:source_without_property"] == 1
    correct = load_directory(tmp_path / "data", "electronic")["correct"]
    for task in correct.tasks:
        record_source = task.candidates[correct.labels[task.record_id].label]
        assert task.properties["ultraviolet_visible"] == dict(
            mopac.compute_one(record_source).values["ultraviolet_visible"]
        )
        assert (
            task.properties["dipole"]["unit"] == "D" and "method" not in task.properties["dipole"]
        )
