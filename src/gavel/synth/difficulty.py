"""How hard a synthetic scene is to read: the levels ``--difficulty`` names.

Apart from the scenes (which need numpy), so that listing the levels, as the command line and
``gavel.api.judges`` do, costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Difficulty:
    """Knobs that make a scene harder to read."""

    name: str
    objects: tuple[int, int]
    small_share: float
    noise: float
    blur: float
    jpeg_quality: int | None
    close_colors: bool
    clutter: int
    occlusion: float


DIFFICULTIES = {
    "easy": Difficulty("easy", (2, 4), 0.2, 0.0, 0.0, None, False, 0, 0.0),
    "medium": Difficulty("medium", (3, 6), 0.33, 4.0, 0.6, None, False, 4, 0.0),
    "hard": Difficulty("hard", (5, 8), 0.5, 10.0, 1.2, 35, True, 14, 0.3),
}
