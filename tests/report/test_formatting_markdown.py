"""``md_cell``: a user-supplied string is inert in a Markdown table, and plain text is kept."""

from __future__ import annotations

import pytest

from chemgauge.report.formatting import md_cell


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        ("top-1 50.0% [9.5, 90.5]", "top-1 50.0% [9.5, 90.5]"),  # ordinary text unchanged
        ("C/C=C\\C", "C/C=C\\C"),  # a SMILES backslash before a letter stays single
        ("F/C=C\\[N+]", "F/C=C\\\\[N+]"),  # before punctuation it would escape: doubled
        ("a|b", "a\\|b"),
        ("<script>&", "&lt;script&gt;&amp;"),
        ("[x](javascript:1)", "[x]\\(javascript:1)"),
        ("`code`", "\\`code\\`"),
        ("two\nlines\tand tab", "two lines and tab"),
        ("bell\x07 del\x7f", "bell\\x07 del\\x7f"),
    ],
)
def test_md_cell(text: str, cell: str) -> None:
    assert md_cell(text) == cell
