"""Running a model over a benchmark: one run plan, and the executors that carry it out.

:mod:`~gavel.execution.settings` holds what a generation is asked (``GenerateSettings``),
:mod:`~gavel.execution.plan` decides everything before a request is sent (the model, the
prepared requests, the cache, the ``max_cost`` budget, the manifest, what its executor
needs),
:mod:`~gavel.execution.executor` names the four ways of running behind one interface (and
chooses one for a plan), :mod:`~gavel.execution.windows` how a batching run sorts, and
:mod:`~gavel.execution.generation` runs a plan to its end. ``gavel generate`` and
``gavel.generate`` are both thin layers over :func:`gavel.execution.generation.generate`.
"""
