"""chemgauge: honest, reproducible benchmarks for chemical structure-prediction systems."""

__version__ = "0.1.0"
