"""The ocsr family's registration: what the framework needs to find its parts."""

from chemgauge.families import Family

FAMILY = Family(
    name="ocsr",
    summary=(
        "does an image-to-structure recognizer return the exact graph, and where exactly "
        "is it wrong?"
    ),
    package="chemgauge.families.ocsr",
    # 3: every rate is the one Rate shape (count, n, value, interval, method) at full
    # precision; the metrics block is typed (metrics_model.OcsrMetrics).
    schema_version=3,
    cli="chemgauge.families.ocsr.cli:app",
    adapter="chemgauge.families.ocsr.adapter:OcsrAdapter",
    metrics="chemgauge.families.ocsr.metrics_model:OcsrMetrics",
    listing="chemgauge.families.ocsr.listing:entries",
    docs="families/ocsr.md",
)
