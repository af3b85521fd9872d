"""chemgauge.engines."""
