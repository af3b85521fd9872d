"""Retro models: the base interface, the built-ins and the model registry."""
