"""chemgauge.eval: task-agnostic machinery (metrics, statistics, splits, provenance, records)."""
