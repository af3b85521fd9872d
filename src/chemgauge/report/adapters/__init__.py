"""Built-in report adapters, one module per benchmark family (registered in
:mod:`chemgauge.report.registry`)."""
