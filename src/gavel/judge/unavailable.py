"""The error of a judge that cannot run here, apart from the judge (and numpy), so a caller
can catch it without loading the model's code."""

from __future__ import annotations

from gavel.errors import ConfigError


class JudgeUnavailable(ConfigError):
    """The offline judge cannot run here (a missing package or a file that is not the pinned
    one); the message says what to do. A :class:`~gavel.errors.GavelError`, so the command line
    reports it without a traceback and ``gavel demo`` can go on without the explanation column."""
