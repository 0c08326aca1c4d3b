"""Scoring explanations: the GAVEL paper's LLM-judge protocol."""
