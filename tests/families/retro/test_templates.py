"""Template baseline on hand-made mapped reactions."""

from __future__ import annotations

from pathlib import Path

import pytest

from chemgauge.errors import ConfigError, InputFileError
from chemgauge.families.retro.engine.base import RetroModelOptions
from chemgauge.families.retro.engine.registry import build_retro_model
from chemgauge.families.retro.engine.templates import (
    TemplateRetroModel,
    TemplateSet,
    extract_template,
    extract_templates,
    unmap_leaving_groups,
)

AMIDE = "[CH3:1][C:2](=[O:3])[Cl:9].[NH2:4][CH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[NH:4][CH2:5][CH3:6]"
AMIDE_2 = (
    "[CH3:1][CH2:7][C:2](=[O:3])[Cl:9].[NH2:4][CH3:6]>>[CH3:1][CH2:7][C:2](=[O:3])[NH:4][CH3:6]"
)
ESTER = "[CH3:1][C:2](=[O:3])[OH:9].[OH:4][CH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[O:4][CH2:5][CH3:6]"


def _at(path: Path) -> RetroModelOptions:
    return RetroModelOptions(model_dir=path)


def test_unmap_leaving_groups_clears_only_atoms_absent_from_the_product() -> None:
    out = unmap_leaving_groups(AMIDE)
    reactants, _, products = out.split(">")
    assert "[Cl:9]" not in reactants and "Cl" in reactants
    assert ":4]" in reactants and products == AMIDE.split(">>")[1]
    assert unmap_leaving_groups("CC>>CC") == "CC>>CC"
    with pytest.raises(ValueError, match="unparsable"):
        unmap_leaving_groups("C(>>C")


def test_extracted_template_generalizes_and_ranks_by_frequency(tmp_path: Path) -> None:
    template = extract_template(AMIDE)
    assert template is not None and ">>" in template
    assert extract_template("C(>>C") is None
    templates = extract_templates([AMIDE, AMIDE_2, ESTER, AMIDE, "C(>>C"])
    assert templates.extraction_failures == 1 and templates.reactions_seen == 5
    assert [t.count for t in templates.templates] == [2, 1, 1]  # most frequent first
    model = TemplateRetroModel(templates)
    (out,) = model.predict(["CCCNC(C)=O"], 10)
    assert out.outputs == ("CC(=O)Cl.CCCN",)
    (ester,) = model.predict(["CCCOC(C)=O"], 10)
    assert ester.outputs == ("CC(=O)O.CCCO",)
    assert model.predict(["c1ccccc1"], 10)[0].outputs == ()
    saved = templates.save(tmp_path / "templates.jsonl")
    assert TemplateSet.load(saved).content_sha256() == templates.content_sha256()
    via_registry = build_retro_model("templates", _at(tmp_path))
    assert via_registry.predict(["CCCNC(C)=O"], 10)[0].outputs == out.outputs


def test_model_dir_errors_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"needs templates\.jsonl or exactly one"):
        build_retro_model("templates", _at(tmp_path))
    (tmp_path / "train.jsonl").write_text("")
    with pytest.raises(ConfigError, match="JSONL data is unmapped"):
        build_retro_model("templates", _at(tmp_path))
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"smarts": "[C:1]>>[C:1]", "count": 0}\n')
    with pytest.raises(InputFileError, match=r"t.jsonl, line 1: needs"):
        build_retro_model("templates", _at(bad))
