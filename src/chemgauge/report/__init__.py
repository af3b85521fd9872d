"""chemgauge.report."""
