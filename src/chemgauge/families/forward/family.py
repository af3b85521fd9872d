"""The forward family's registration: what the framework needs to find its parts."""

from chemgauge.families import Family

FAMILY = Family(
    name="forward",
    summary=(
        "does a forward reaction predictor's candidate pool contain the true product, "
        "and how well is it ranked?"
    ),
    package="chemgauge.families.forward",
    schema_version=3,
    cli="chemgauge.families.forward.cli:app",
    adapter="chemgauge.families.forward.adapter:ForwardAdapter",
    docs="families/forward.md",
)
