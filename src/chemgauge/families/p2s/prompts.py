"""The benchmark's prompts (package data) and how a task is rendered into chat messages.

Single-property directories use the single-property prompt, the three family bundles the
bundle prompt and ``all_properties`` its own. A task whose properties are omitted (the
structure-only comparison) says so in place of the evidence, as the prompts instruct.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from importlib import resources
from string import Template
from typing import Any

from chemgauge.families.p2s.spec import BUNDLES, PROPERTY_KINDS

__all__ = ["NO_PROPERTY_TEXT", "load_prompt", "prompt_kind", "render_messages", "renderer"]

NO_PROPERTY_TEXT = "(no property supplied: use only the structural context)"


def prompt_kind(directory: str) -> str:
    """``single_property``, ``property_bundle`` or ``all_properties`` for a directory."""
    if directory == "all_properties":
        return "all_properties"
    if directory in BUNDLES:
        return "property_bundle"
    if directory in PROPERTY_KINDS:
        return "single_property"
    raise KeyError(directory)


def load_prompt(kind: str) -> tuple[str, str]:
    """(system text, user template) of one prompt kind, read from package data."""
    folder = resources.files("chemgauge.families.p2s").joinpath("prompts")
    system = folder.joinpath(f"{kind}_system.txt").read_text(encoding="utf-8")
    user = folder.joinpath(f"{kind}_user.txt").read_text(encoding="utf-8")
    return system.strip(), user


def _compact(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _properties_text(properties: Mapping[str, Any]) -> str:
    if not properties:
        return NO_PROPERTY_TEXT
    lines = []
    for name in sorted(properties):
        description = PROPERTY_KINDS[name][2] if name in PROPERTY_KINDS else name
        lines.append(f"- {name} ({description}): {_compact(properties[name])}")
    return "\n".join(lines)


def render_messages(kind: str, task: Mapping[str, Any]) -> list[dict[str, str]]:
    """System and user messages for one task object."""
    system, user = load_prompt(kind)
    candidates = "\n".join(
        f"{i}: {smiles}" for i, smiles in enumerate(task["candidate_completed_smiles"])
    )
    text = Template(user).substitute(
        record_id=task["record_id"],
        masked_smiles=task["masked_smiles"],
        mask=_compact(task["mask"]),
        candidates=candidates,
        properties=_properties_text(task["properties"]),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": text.strip()}]


def renderer(directory: str) -> Callable[[Mapping[str, Any]], list[dict[str, str]]]:
    """A render function bound to the prompt kind of ``directory``."""
    kind = prompt_kind(directory)
    return lambda task: render_messages(kind, task)
