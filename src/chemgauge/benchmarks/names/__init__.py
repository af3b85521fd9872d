"""Name round-trip coverage: a name counts only if OPSIN parses it back to the input structure."""
