"""gavel's Python API: what the command line does, as functions a notebook or host calls.

``gavel.benchmark``, ``gavel.synthesize``, ``gavel.generate``, ``gavel.score`` and
``gavel.run`` take the command line's settings by the flags' names, with the same defaults
and checks, and give the same files; see docs/python-api.md. They are imported from
``gavel`` itself (lazily, so ``import gavel`` stays light); the modules here hold them, one
step each. A generation's settings are one record (:class:`gavel.GenerateSettings`, checked
by :mod:`gavel.execution.settings` against the bounds the flags read too), a scoring's too
(:class:`gavel.api.scoring.ScoreSettings`), and a run is one of each
(:func:`gavel.api.running.run_with`); synthesis's settings are still checked by
:mod:`gavel.api.settings` with the flags' own types.
"""
