"""chemgauge.cli."""
