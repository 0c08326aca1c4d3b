"""gavel's benchmarks inside other evaluation frameworks (inspect_ai, lmms-eval).

Each integration calls gavel's own loaders, prompts and scorers through the public API
(:mod:`gavel.api.tasks`), so its numbers are ``gavel score``'s.
"""
