"""What a run tells its user as it goes (on stderr, where the progress bar is too)."""

from __future__ import annotations

import sys


def note(text: str) -> None:
    """One line (or a few) on stderr, at once."""
    print(text, file=sys.stderr, flush=True)
