"""Text formatting shared by the terminal and HTML renderings (one way to print a rate)."""

from __future__ import annotations

from chemgauge.report.adapter import Rate

__all__ = ["fmt_count", "fmt_p", "fmt_pct", "fmt_rate", "fmt_signed_pct", "md_cell"]


def fmt_pct(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage; ``n/a`` for None."""
    return "n/a" if value is None else f"{100 * value:.{digits}f}%"


def fmt_signed_pct(value: float | None, digits: int = 1) -> str:
    """A difference of fractions in percentage points with an explicit sign."""
    return "n/a" if value is None else f"{100 * value:+.{digits}f} pp"


def fmt_rate(rate: Rate, digits: int = 1) -> str:
    """``72.4% [65.1, 78.9]`` (the interval in percent); ``n/a (n=0)`` for an empty rate."""
    if rate.estimate is None or rate.low is None or rate.high is None:
        return f"n/a (n={rate.n})"
    return (
        f"{100 * rate.estimate:.{digits}f}% "
        f"[{100 * rate.low:.{digits}f}, {100 * rate.high:.{digits}f}]"
    )


def fmt_count(rate: Rate) -> str:
    """``k/n``."""
    return f"{rate.count}/{rate.n}"


def fmt_p(p: float | None) -> str:
    """A p-value: three significant digits, ``<1e-6`` below that."""
    if p is None:
        return "n/a"
    if p < 1e-6:
        return "<1e-6"
    return f"{p:.3g}"


_MD_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def md_cell(text: object) -> str:
    """A user-supplied string made inert in a Markdown table cell: pipes and backticks
    escaped, HTML characters as entities, links broken, a backslash that would escape the
    next character doubled, control characters shown as ``\\xNN``, lines joined."""
    out: list[str] = []
    value = str(text)
    for i, char in enumerate(value):
        following = value[i + 1] if i + 1 < len(value) else ""
        if char in "\n\r\t":
            out.append(" ")
        elif ord(char) < 32 or 127 <= ord(char) < 160:
            out.append(f"\\x{ord(char):02x}")
        elif char == "\\":
            out.append("\\\\" if following in _MD_PUNCTUATION and following else "\\")
        elif char in "|`":
            out.append("\\" + char)
        elif char == "&":
            out.append("&amp;")
        elif char == "<":
            out.append("&lt;")
        elif char == ">":
            out.append("&gt;")
        elif char == "]" and following == "(":
            out.append("]\\")
        else:
            out.append(char)
    return "".join(out)
