"""Scoring a saved run: a predictions file against gold data, the judge's scores of GAVEL's
explanations, and the run's files (results.json, per-sample scores, the judge's ledger line).

``gavel score`` and ``gavel.score`` both end here, so the command line and the Python API
give the same numbers and files: :mod:`.settings` is what a scoring takes, :mod:`.judging`
builds and applies the judge, :mod:`.evaluate` scores and records the run, :mod:`.files`
writes it as one change.
"""
