"""Typed values from ``key=value`` text, as the retro options and syntheseus's command line
spell them (``true``/``False``/``1``, ``[1, 3, 5]``, ``null``)."""

from __future__ import annotations

from typing import Any

import orjson

from chemgauge.errors import ConfigError

__all__ = ["NONE_SPELLINGS", "as_bool", "as_int", "as_list", "as_optional_int", "as_scalar"]

#: Texts that mean "no value" (``null`` is how syntheseus's YAML-based command line says it).
NONE_SPELLINGS = ("", "none", "None", "null", "~")


def as_int(name: str, value: Any) -> int:
    """An integer option; booleans and fractions are refused."""
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be an integer, got {value!r}") from None


def as_optional_int(name: str, value: Any) -> int | None:
    """An integer option that may be absent (:data:`NONE_SPELLINGS`)."""
    return None if value is None or value in NONE_SPELLINGS else as_int(name, value)


def as_bool(name: str, value: Any) -> bool:
    """A boolean option: true/false, yes/no, on/off, 1/0, in any case."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be true or false, got {value!r}")


def as_list(value: Any) -> list[str]:
    """A list option: ``a,b``, ``[a, b]`` or ``['a', 'b']``."""
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    text = str(value).strip().removeprefix("[").removesuffix("]")
    return [part.strip().strip("'\"") for part in text.split(",") if part.strip()]


def as_scalar(value: Any) -> Any:
    """A free-form value (a model argument): JSON if it reads as JSON (numbers, lists,
    objects, ``true``), ``None`` for ``null``/``None``, ``True``/``False`` in any case, else the
    text itself."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text in NONE_SPELLINGS[1:]:
        return None
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return value
