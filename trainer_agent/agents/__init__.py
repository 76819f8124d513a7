"""Agents as configuration (seeds 003/004): the agent registry, its callbacks and the built-in definitions."""
