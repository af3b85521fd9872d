"""Built-in report adapters, one module per benchmark family (importing registers them)."""

from chemgauge.report.adapters import names

__all__ = ["names"]
