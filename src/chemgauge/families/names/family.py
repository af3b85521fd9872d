"""The names family's registration: what the framework needs to find its parts."""

from chemgauge.families import Family

FAMILY = Family(
    name="names",
    summary=(
        "does a structure-to-name generator emit names that parse back (OPSIN) to the "
        "same structure?"
    ),
    package="chemgauge.families.names",
    # 3: every rate is the one Rate shape (value, interval, method; was rate, ci95).
    # 4: every rate over total (opsin_error inside it); refused names unparseable with a
    # reason; the reference lenses; complete.
    schema_version=4,
    cli="chemgauge.families.names.cli:app",
    adapter="chemgauge.families.names.adapter:NamesAdapter",
    metrics="chemgauge.families.names.metrics_model:NamesMetrics",
    listing="chemgauge.families.names.listing:entries",
    docs="families/names.md",
)
