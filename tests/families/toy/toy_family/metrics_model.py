"""The toy family's ``metrics`` block."""

from chemgauge.eval.metrics import MetricsModel, Rate


class ToyMetrics(MetricsModel):
    """Accuracy over every word."""

    accuracy: Rate
