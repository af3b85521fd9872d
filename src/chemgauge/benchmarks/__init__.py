"""chemgauge.benchmarks."""
