"""Built-in report adapters, one module per benchmark family (importing registers them)."""

from chemgauge.report.adapters import forward, names, ocsr, retro

__all__ = ["forward", "names", "ocsr", "retro"]
