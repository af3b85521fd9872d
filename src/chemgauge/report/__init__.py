"""Reports people want to look at, honest comparisons between runs, and checks of both.

``load_run`` reads a report and its rows; ``verify_run`` recomputes the report from the rows;
``compare_runs`` pairs two runs on their shared items; ``render_run_html`` and
``render_compare_html`` (in :mod:`chemgauge.report.html`) write self-contained pages. What each
benchmark family means by an item, a hit and a failure lives in its adapter
(:mod:`chemgauge.report.adapter`), named by its registered family
(:data:`chemgauge.families.FAMILIES`, entry-point group ``chemgauge.families``).
"""

from chemgauge.report.adapter import FamilyAdapter
from chemgauge.report.compare import compare_runs, holm_adjust
from chemgauge.report.loading import load_run
from chemgauge.report.registry import get_adapter
from chemgauge.report.runs import Run
from chemgauge.report.verify import Verification, verify_run

__all__ = [
    "FamilyAdapter",
    "Run",
    "Verification",
    "compare_runs",
    "get_adapter",
    "holm_adjust",
    "load_run",
    "verify_run",
]
