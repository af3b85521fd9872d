"""One schema-1 corpus line, type-checked: the fields a reaction needs, or the counter to bump.

:func:`parse_record` checks types and emptiness only; :func:`components` canonicalizes one
SMILES into its components. Both raise :class:`Reject`, naming the counter and, when the
line has a ``reaction_id``, the id its ``input_invalid`` row carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chemgauge.chem import Canonicalizer, describe_parse_failure
from chemgauge.chem.limits import LIMIT_FLAGS, structure_limits
from chemgauge.errors import Reject

__all__ = [
    "CORPUS_SCHEMA_VERSION",
    "EXCERPT",
    "ParsedRecord",
    "Reject",
    "components",
    "parse_record",
]

CORPUS_SCHEMA_VERSION = 1
# Characters of an offending value quoted in a message.
EXCERPT = 160


def _optional_str(obj: dict[str, Any], key: str, reaction_id: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Reject("malformed_json", f"field {key!r} must be a string or null: {value!r}")
    return value


def _string_list(value: Any, name: str, reaction_id: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise Reject("malformed_json", f"{name} must be an array of SMILES strings: {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class ParsedRecord:
    reaction_id: str
    reactants: tuple[str, ...]
    accepted: list[list[str]]
    reaction_class: str | None
    group_key: str | None
    mapped_reaction: str | None


def parse_record(obj: Any) -> ParsedRecord:
    """Type-check one record; raises :class:`Reject` with the counter to bump."""
    if not isinstance(obj, dict):
        raise Reject("malformed_json", "line is not a JSON object")
    reaction_id = obj.get("reaction_id")
    if not isinstance(reaction_id, str) or not reaction_id:
        raise Reject("malformed_json", f"reaction_id must be a non-empty string: {reaction_id!r}")
    version = obj.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise Reject("malformed_json", f"schema_version must be an integer: {version!r}")
    if version != CORPUS_SCHEMA_VERSION:
        raise Reject(
            "wrong_schema_version",
            f"schema_version {version} != {CORPUS_SCHEMA_VERSION}",
            reaction_id,
        )
    if "reactants" not in obj or "accepted_products" not in obj:
        raise Reject("malformed_json", "missing reactants or accepted_products")
    reactants = _string_list(obj["reactants"], "reactants", reaction_id)
    raw_accepted = obj["accepted_products"]
    if not isinstance(raw_accepted, list):
        raise Reject("malformed_json", f"accepted_products must be an array: {raw_accepted!r}")
    cap = structure_limits().max_alternatives
    if len(raw_accepted) > cap:
        raise Reject(
            "record_too_large",
            f"accepted_products lists {len(raw_accepted):,} entries, over the limit of {cap:,} "
            f"(raise it with {LIMIT_FLAGS['max_alternatives']})",
            reaction_id,
        )
    accepted = [_string_list(p, "each accepted_products entry", reaction_id) for p in raw_accepted]
    reaction_class = _optional_str(obj, "reaction_class", reaction_id)
    group_key = _optional_str(obj, "group_key", reaction_id)
    mapped = _optional_str(obj, "mapped_reaction", reaction_id)
    if (
        not reactants
        or not accepted
        or any(not p for p in accepted)
        or any(not s.strip() for s in reactants)
        or any(not s.strip() for p in accepted for s in p)
    ):
        raise Reject(
            "empty_reactants_or_products",
            "reactants, accepted_products and every accepted entry must be non-empty",
            reaction_id,
        )
    return ParsedRecord(reaction_id, tuple(reactants), accepted, reaction_class, group_key, mapped)


def components(smiles: str, canon: Canonicalizer, reaction_id: str) -> list[str]:
    key = canon(smiles)
    if key is None:
        raise Reject(
            "unparseable_smiles",
            f"{describe_parse_failure(smiles)}: {smiles[:EXCERPT]!r}",
            reaction_id,
        )
    return key.split(".")
