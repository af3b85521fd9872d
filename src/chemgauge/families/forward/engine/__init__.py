"""The forward predictor chemgauge ships: a template engine, its embedded rules, extraction."""
