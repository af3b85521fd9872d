"""The retro family's registration: what the framework needs to find its parts."""

from chemgauge.families import Family

FAMILY = Family(
    name="retro",
    summary=("how good is a single-step retrosynthesis model (top-k, MRR) on a reaction data set?"),
    package="chemgauge.families.retro",
    schema_version=3,
    cli="chemgauge.families.retro.cli:app",
    adapter="chemgauge.families.retro.adapter:RetroAdapter",
    metrics="chemgauge.families.retro.metrics_model:RetroMetrics",
    listing="chemgauge.families.retro.listing:entries",
    docs="families/retro.md",
)
