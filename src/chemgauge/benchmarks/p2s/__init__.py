"""chemgauge.benchmarks.p2s: property-grounded masked completion (does the property get used?).

This package's ``__init__`` imports nothing, so the standard-library scorer stays importable
without chemgauge's dependencies.
"""
