"""The ocsr family's registration: what the framework needs to find its parts."""

from chemgauge.families import Family

FAMILY = Family(
    name="ocsr",
    summary=(
        "does an image-to-structure recognizer return the exact graph, and where exactly "
        "is it wrong?"
    ),
    package="chemgauge.families.ocsr",
    schema_version=2,
    cli="chemgauge.families.ocsr.cli:app",
    adapter="chemgauge.families.ocsr.adapter:OcsrAdapter",
    listing="chemgauge.families.ocsr.listing:entries",
    docs="families/ocsr.md",
)
