"""Systems and calculators for the p2s family: property providers, baselines, a chat runner."""
