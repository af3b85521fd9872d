"""Names refused before OPSIN sees them, because of the name itself: the namer's failure.

A name with a line break, a NUL or another control character, an invisible (format)
character such as a zero-width space, a lone surrogate, or more than 100,000 characters is
not a name anyone can use; the pair is the namer's ``unparseable``, with the reason's code.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

__all__ = ["MAX_NAME_CHARS", "Refusal", "name_refusal"]

MAX_NAME_CHARS = 100_000
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a name is refused: a short code and a sentence."""

    code: str
    message: str


def name_refusal(name: str) -> Refusal | None:
    """The refusal of ``name``, or ``None`` when it may be sent to OPSIN."""
    if len(name) > MAX_NAME_CHARS:
        return Refusal("name_too_long", f"name longer than {MAX_NAME_CHARS:,} characters")
    if name.isascii() and name.isprintable():
        return None
    for index, char in enumerate(name):
        if char in _LINE_BREAKS:
            return Refusal("line_break", f"name contains a line break at character {index}")
        category = unicodedata.category(char)
        where = f"U+{ord(char):04X} at character {index}"
        if category == "Cc":
            return Refusal("control_character", f"name contains control character {where}")
        if category in ("Cf", "Co", "Cn"):
            return Refusal("invisible_character", f"name contains invisible character {where}")
        if category == "Cs":
            return Refusal("lone_surrogate", f"name contains a lone surrogate {where}")
    return None
