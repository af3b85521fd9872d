"""The p2s family's registration: what the framework needs to find its parts."""

from chemgauge.families import Family

FAMILY = Family(
    name="p2s",
    summary=(
        "does a system use physical-property evidence when choosing a masked fragment's completion?"
    ),
    package="chemgauge.families.p2s",
    schema_version=1,
    cli="chemgauge.families.p2s.cli:app",
    adapter="chemgauge.families.p2s.adapter:P2SAdapter",
    listing="chemgauge.families.p2s.listing:entries",
    docs="families/p2s.md",
)
