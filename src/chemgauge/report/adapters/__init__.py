"""Built-in report adapters, one module per benchmark family (importing registers them)."""

from chemgauge.report.adapters import forward, names, ocsr, p2s, retro

__all__ = ["forward", "names", "ocsr", "p2s", "retro"]
