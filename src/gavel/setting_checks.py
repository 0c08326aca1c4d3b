"""The bounds of the settings the command line and the Python API share, in one place.

The command line's click types (:mod:`gavel.cli.options`) are built from these bounds, and the
Python API's settings records check their values against the same ones, so ``--bootstrap -1``
and ``gavel.score(..., bootstrap=-1)`` are refused alike, in the same words.
"""

from __future__ import annotations

import json
from typing import Any

from gavel.errors import ConfigError

#: The largest values a few counts may take. Beyond them a run cannot finish (a bootstrap of
#: 2**63 resamples asks numpy for an array larger than memory, 10**29 requests in flight make
#: as many tasks), so they are refused as usage errors instead of failing inside.
MAX_CONCURRENCY = 1024
MAX_BOOTSTRAP = 1_000_000
MAX_SEED = 2**63 - 1
#: Frames a second for video sampling: below one frame in 1000 s a video gives no frame, and
#: ``1 / fps`` overflows to infinity for a tiny rate such as 1e-320.
MIN_FPS, MAX_FPS = 0.001, 1000.0


def json_object(text: str | None, flag: str) -> dict[str, Any]:
    """The JSON object a setting such as ``--extra-body`` gives ({} when not given)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{flag} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{flag} must be a JSON object")
    return value
