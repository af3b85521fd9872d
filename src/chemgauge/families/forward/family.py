"""The forward family's registration: what the framework needs to find its parts."""

from chemgauge.families import Family

FAMILY = Family(
    name="forward",
    summary=(
        "does a forward reaction predictor's candidate pool contain the true product, "
        "and how well is it ranked?"
    ),
    package="chemgauge.families.forward",
    # 4: every rate is the one Rate shape (top-k ones with k), MRR and nDCG@10 are Estimates.
    # 5: in-sample from the rows' evidence, near-duplicate leakage, templates recomputed.
    schema_version=5,
    cli="chemgauge.families.forward.cli:app",
    adapter="chemgauge.families.forward.adapter:ForwardAdapter",
    metrics="chemgauge.families.forward.metrics_model:ForwardMetrics",
    listing="chemgauge.families.forward.listing:entries",
    docs="families/forward.md",
)
