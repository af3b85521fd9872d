"""The toy family's one registration."""

from chemgauge.families import Family

FAMILY = Family(
    name="toy",
    summary="does a system upper-case each word?",
    package="toy_family",
    schema_version=1,
    cli="toy_family.cli:app",
    adapter="toy_family.adapter:ToyAdapter",
    metrics="toy_family.metrics_model:ToyMetrics",
    listing="toy_family.engine:entries",
)
