"""``python -m chemgauge``."""

from chemgauge.cli import main

main()
