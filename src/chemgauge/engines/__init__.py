"""Systems and calculators chemgauge ships or drives, one package per benchmark family."""
