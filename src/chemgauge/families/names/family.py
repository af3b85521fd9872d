"""The names family's registration: what the framework needs to find its parts."""

from chemgauge.families import Family

FAMILY = Family(
    name="names",
    summary=(
        "does a structure-to-name generator emit names that parse back (OPSIN) to the "
        "same structure?"
    ),
    package="chemgauge.families.names",
    schema_version=2,
    cli="chemgauge.families.names.cli:app",
    adapter="chemgauge.families.names.adapter:NamesAdapter",
    docs="families/names.md",
)
