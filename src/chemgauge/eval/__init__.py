"""chemgauge.eval."""
