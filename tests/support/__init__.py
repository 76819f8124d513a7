"""Test helpers shared across apps (fakes at the LLM HTTP boundary)."""
