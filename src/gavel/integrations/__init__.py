"""gavel's benchmarks inside other evaluation frameworks (inspect_ai, lmms-eval).

Each integration calls gavel's own loaders, prompts and scorers through
:mod:`gavel.integrations._gavel_api`, so its numbers are ``gavel score``'s.
"""
