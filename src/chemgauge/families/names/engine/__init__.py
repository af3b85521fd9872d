"""OPSIN, the name-to-structure reader the names family scores with, and the namer driver."""
