"""The p2s family's registration: what the framework needs to find its parts."""

from chemgauge.families import Family

FAMILY = Family(
    name="p2s",
    summary=(
        "does a system use physical-property evidence when choosing a masked fragment's completion?"
    ),
    package="chemgauge.families.p2s",
    # 2: every rate the one Rate shape, every paired difference an Estimate, per-view hits and
    # tasks read from the accuracy Rate (count, n); the metrics block is P2SMetrics.
    schema_version=2,
    cli="chemgauge.families.p2s.cli:app",
    adapter="chemgauge.families.p2s.adapter:P2SAdapter",
    metrics="chemgauge.families.p2s.metrics_model:P2SMetrics",
    listing="chemgauge.families.p2s.listing:entries",
    docs="families/p2s.md",
)
