"""Baselines, property distances, prompts and the resumable runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chemgauge.errors import ConfigError, UnknownNameError
from chemgauge.families.p2s.claim import claim_report, prediction_paths
from chemgauge.families.p2s.config import RunConfig
from chemgauge.families.p2s.engine.distance import combined_distances, property_distance
from chemgauge.families.p2s.engine.models import ModelOptions, P2SModel
from chemgauge.families.p2s.engine.properties import TableProvider
from chemgauge.families.p2s.engine.registry import (
    P2S_SYSTEMS,
    PROPERTY_PROVIDERS,
    get_model,
    get_provider,
)
from chemgauge.families.p2s.prompts import NO_PROPERTY_TEXT, prompt_kind, render_messages
from chemgauge.families.p2s.runner import run_model
from chemgauge.families.p2s.spec import PROPERTY_DIRECTORIES


def task(properties: dict[str, Any], rid: str = "r1") -> dict[str, Any]:
    return {
        "record_id": rid,
        "masked_smiles": "c1ccc([*:1])cc1",
        "mask": {"token": "[*:1]", "masked_heavy_atoms": 1, "attachment_points": [{}]},
        "properties": properties,
        "candidate_completed_smiles": ["Oc1ccccc1", "Cc1ccccc1", "Nc1ccccc1"],
    }


def test_structure_only_never_reads_the_property() -> None:
    model = get_model("structure_only")
    picks = {
        json.dumps(props): model.predict([task(props)])[0]["selected_candidate_index"]
        for props in ({}, {"dipole": {"value": 1.0, "unit": "D"}}, {"gap": "not even valid"})
    }
    assert set(picks.values()) == {1}  # toluene: no heteroatom
    broken = task({})
    broken["candidate_completed_smiles"] = ["C1CC", "Oc1ccccc1", "Nc1ccccc1"]
    # phenol and aniline tie on every count, so the lower index wins; the broken one never does
    assert model.predict([broken])[0]["selected_candidate_index"] == 1


def test_random_is_seeded_per_graph_and_in_range() -> None:
    tasks = [{**task({}, f"r{i}"), "masked_smiles": "C" * (i + 1) + "[*:1]"} for i in range(60)]
    first = [p["selected_candidate_index"] for p in get_model("random").predict(tasks)]
    again = [p["selected_candidate_index"] for p in get_model("random").predict(tasks[::-1])]
    other = get_model("random", ModelOptions(seed=1)).predict(tasks)
    assert first == again[::-1]  # order of the batch does not matter
    assert set(first) == {0, 1, 2}
    assert first != [p["selected_candidate_index"] for p in other]
    # the same graph under another id (a blind run's opaque id) gets the same pick
    renamed = [{**t, "record_id": f"p2s-{i:016x}"} for i, t in enumerate(tasks)]
    assert [p["selected_candidate_index"] for p in get_model("random").predict(renamed)] == first


def test_property_oracle_picks_the_nearest(tmp_path: Path) -> None:
    table = tmp_path / "t.jsonl"
    rows = [("Oc1ccccc1", 1.3), ("Cc1ccccc1", 0.4), ("Nc1ccccc1", 1.6)]
    table.write_text(
        "".join(
            json.dumps({"smiles": s, "properties": {"dipole": {"value": v, "unit": "D"}}}) + "\n"
            for s, v in rows
        )
    )
    oracle = get_model("property_oracle", ModelOptions(provider=TableProvider(table)))
    for value, expected in ((1.31, 0), (0.0, 1), (1.5, 2), (1.45, 0)):
        out = oracle.predict([task({"dipole": {"value": value, "unit": "D"}})])
        assert out[0]["selected_candidate_index"] == expected, value
    assert oracle.predict([task({})])[0]["invalid"] is True
    with pytest.raises(ConfigError, match="needs a property provider"):
        get_model("property_oracle")


def test_distances() -> None:
    assert property_distance("dipole", {"value": 1.5}, {"value": 1.0}) == 0.5
    ir = {"unit": "cm-1", "peaks": [{"position": 1700.0, "intensity": 1.0}]}
    near = {"unit": "cm-1", "peaks": [{"position": 1710.0, "intensity": 1.0}]}
    far = {"unit": "cm-1", "peaks": [{"position": 2250.0, "intensity": 1.0}]}
    assert property_distance("infrared", ir, ir) == pytest.approx(0.0, abs=1e-12)
    assert 0 < property_distance("infrared", ir, near) < property_distance("infrared", ir, far)
    # each property is scaled by its largest distance, so units do not decide a bundle
    supplied = {"dipole": {"value": 0.0}, "gap": {"value": 0.0}}
    cands = [
        {"dipole": {"value": 1.0}, "gap": {"value": 0.0}},
        {"dipole": {"value": 0.0}, "gap": {"value": 100.0}},
        None,
    ]
    assert combined_distances(supplied, cands) == [1.0, 1.0, float("inf")]


def test_unknown_names_suggest() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'random'"):
        get_model("randon")
    with pytest.raises(UnknownNameError, match="Did you mean 'table'"):
        get_provider("tabel")


def test_models_are_the_family_systems_and_providers_keep_their_registry() -> None:
    """One Systems registry for what --model names (kind and plugin group spelled as in every
    family); a factory that returns something else than a P2SModel is an error naming it."""
    assert (P2S_SYSTEMS.kind, P2S_SYSTEMS.group) == ("p2s system", "chemgauge.p2s_systems")
    assert P2S_SYSTEMS.names()[:4] == ["structure_only", "random", "property_oracle", "chat"]
    assert PROPERTY_PROVIDERS.kind == "property provider"
    P2S_SYSTEMS.register("test_not_a_model", lambda options: object(), replace=True)
    with pytest.raises(ConfigError, match="'test_not_a_model' returned object, not a P2SModel"):
        get_model("test_not_a_model")


def test_prompts_render_the_task_and_no_answer() -> None:
    kinds = {prompt_kind(d) for d in PROPERTY_DIRECTORIES}
    assert kinds == {"single_property", "property_bundle", "all_properties"}
    assert prompt_kind("electronic") == "property_bundle"
    t = task({"dipole": {"value": 1.25, "unit": "D"}})
    system, user = (m["content"] for m in render_messages("single_property", t))
    assert "selected_candidate_index" in system and "structural context" in system
    assert "0: Oc1ccccc1\n1: Cc1ccccc1\n2: Nc1ccccc1" in user
    assert '"value":1.25' in user and "c1ccc([*:1])cc1" in user and "$" not in user
    assert NO_PROPERTY_TEXT in render_messages("all_properties", task({}))[1]["content"]


class Counting(P2SModel):
    name = "counting"

    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__()
        self.seen: list[str] = []
        self.fail_after = fail_after

    def _predict(self, batch: list[Any]) -> list[dict[str, Any]]:
        out = []
        for t in batch:
            if self.fail_after is not None and len(self.seen) >= self.fail_after:
                raise KeyboardInterrupt
            self.seen.append(t["record_id"])
            out.append({"record_id": t["record_id"], "selected_candidate_index": 0})
        return out


def test_runner_resumes_and_is_deterministic(built: dict[str, Path], tmp_path: Path) -> None:
    config = RunConfig(property=("dipole",), condition=("correct",), batch_size=2)
    out = tmp_path / "runs"
    crashing = Counting(fail_after=4)
    with pytest.raises(KeyboardInterrupt):
        run_model(built["data"], out, lambda d: crashing, config)
    resumed = Counting()
    run_model(built["data"], out, lambda d: resumed, config)
    fresh = Counting()
    run_model(built["data"], tmp_path / "fresh", lambda d: fresh, config)
    assert set(crashing.seen).isdisjoint(resumed.seen)
    # blind: the model saw opaque ids (the resumed run reuses the folder's key; a fresh
    # folder draws its own), never the ids of the task file
    in_file = {
        json.loads(x)["record_id"]
        for x in (built["data"] / "dipole" / "correct.jsonl").read_text().split()
    }
    assert len(crashing.seen) + len(resumed.seen) == len(fresh.seen) == len(in_file)
    assert in_file.isdisjoint(crashing.seen + resumed.seen + fresh.seen)
    target = "counting/dipole/correct.jsonl"
    assert (out / target).read_bytes() == (tmp_path / "fresh" / target).read_bytes()


def test_runner_refuses_a_journal_from_another_config(
    built: dict[str, Path], tmp_path: Path
) -> None:
    config = RunConfig(property=("dipole",), condition=("correct",))
    run_model(built["data"], tmp_path, lambda d: get_model("random"), config)
    with pytest.raises(ConfigError, match="another configuration"):
        run_model(
            built["data"], tmp_path, lambda d: get_model("random", ModelOptions(seed=5)), config
        )
    run_model(
        built["data"],
        tmp_path,
        lambda d: get_model("random", ModelOptions(seed=5)),
        RunConfig(property=("dipole",), condition=("correct",), restart=True),
    )


def test_baselines_on_the_built_benchmark(built: dict[str, Path], tmp_path: Path) -> None:
    provider = TableProvider(built["table"])
    options = ModelOptions(provider=provider)
    reports = {}
    for name in ("structure_only", "random", "property_oracle"):
        run_model(built["data"], tmp_path, lambda d, n=name: get_model(n, options), RunConfig())
        reports[name] = claim_report(
            built["data"], "dipole", prediction_paths(tmp_path / name, "dipole"), model=name
        )
    oracle = reports["property_oracle"]
    assert oracle["accuracy"]["correct"]["value"] == 1.0
    assert oracle["counterfactual_flip"]["flip_rate"]["value"] == 1.0
    assert oracle["use_claim"] is True
    for name in ("structure_only", "random"):
        assert reports[name]["shuffle_drop"]["difference"]["value"] == 0.0
        assert reports[name]["use_claim"] is False
    # the structure-only run with properties omitted gives the same picks
    run_model(
        built["data"],
        tmp_path,
        lambda d: get_model("structure_only"),
        RunConfig(property=("dipole",), omit_properties=True),
    )
    for view in ("correct", "shuffled"):
        plain = (tmp_path / "structure_only" / "dipole" / f"{view}.jsonl").read_bytes()
        blind = (tmp_path / "structure_only@no_property" / "dipole" / f"{view}.jsonl").read_bytes()
        assert plain == blind
