"""chemgauge.chem."""
