"""gavel's Python API: what the command line does, as functions a notebook or host calls.

``gavel.benchmark``, ``gavel.synthesize``, ``gavel.generate``, ``gavel.score`` and
``gavel.run`` take the command line's settings by the flags' names, with the same defaults
and checks, and give the same files; see docs/python-api.md. They are imported from
``gavel`` itself (lazily, so ``import gavel`` stays light); the modules here hold them, one
step each. A generation's settings are one record (:class:`gavel.GenerateSettings`, checked
by :mod:`gavel.execution.settings` against the bounds the flags read too), and so are a
scoring's (:class:`gavel.ScoreSettings`) and a synthetic set's
(:class:`gavel.api.synthesis.SynthSettings`); a run is one generation's and one scoring's
(:func:`gavel.api.running.run_with`).
"""
