"""What a run asks of a model when its settings leave it open. Remote models (``openai:``,
any OpenAI-compatible server) answer many requests at once and each answer costs money, so
16 are kept in flight and answers are cached; a local model answers one at a time and is
never cached (its answers cost nothing to ask again)."""

from __future__ import annotations

from pathlib import Path

from gavel.runner.cache import default_cache

#: Requests in flight to a remote model unless ``--concurrency`` says otherwise.
REMOTE_CONCURRENCY = 16


def is_remote(spec: str) -> bool:
    """Whether ``--model`` names a model behind an OpenAI-compatible server."""
    return str(spec).startswith("openai:")


def concurrency_for(spec: str, given: int | None) -> int:
    """``--concurrency`` as given, else the default of this kind of model."""
    return given or (REMOTE_CONCURRENCY if is_remote(spec) else 1)


def answer_cache_for(spec: str, given: Path | None, no_cache: bool) -> Path | None:
    """The answer cache of a run (``--cache``, else the user's), or None for a local model or
    with ``--no-cache``."""
    if no_cache or not is_remote(spec):
        return None
    return given or default_cache()
