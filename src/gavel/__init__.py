"""gavel: measure how well vision-language models find, explain and localize hallucinations."""

__version__ = "0.1.0"
