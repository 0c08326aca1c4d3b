"""GAVEL: verify a one-sentence caption, explain the error, box it."""
