"""The closed world of the synthetic scenes: object kinds, colours, sizes, patterns, states, places.

Both the scene generator and the built-in ``scene`` model use these words: the model reads a
caption with the grammar it was written in, but learns everything about an image from its pixels.
"""

from __future__ import annotations

KINDS = ("circle", "square", "triangle", "star", "cross")

#: Colour names and their RGB values. ``CLOSE_COLORS`` are the harder, nearer shades that the
#: ``hard`` difficulty uses in place of some of these.
COLORS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "green": (40, 160, 60),
    "blue": (40, 80, 210),
    "yellow": (235, 200, 30),
    "purple": (140, 60, 170),
    "orange": (240, 130, 30),
}
CLOSE_COLORS: dict[str, tuple[int, int, int]] = {
    "red": (200, 55, 45),
    "green": (60, 150, 70),
    "blue": (55, 90, 190),
    "yellow": (225, 195, 50),
    "purple": (135, 70, 160),
    "orange": (225, 120, 45),
}

#: Size classes as the object's bounding-box side relative to the image's shorter side.
SIZES: dict[str, tuple[float, float]] = {
    "small": (0.08, 0.11),
    "medium": (0.15, 0.18),
    "large": (0.23, 0.27),
}
#: Words used in captions for each size class ("medium" objects get no size word).
SIZE_WORDS = {"small": "small", "medium": "", "large": "large"}

PATTERNS = ("plain", "striped", "dotted")
STATES = ("filled", "outlined")

#: The image is split into thirds; each object sits well inside one cell.
ROWS = ("top", "middle", "bottom")
COLUMNS = ("left", "center", "right")

BACKGROUND = (236, 236, 236)
PATTERN_INK = (255, 255, 255)


def place_phrase(row: str, column: str) -> str:
    """``("top", "left")`` -> "in the top left"; the middle row and centre column read naturally."""
    if row == "middle" and column == "center":
        return "in the center"
    if row == "middle":
        return f"on the {column}"
    if column == "center":
        return f"at the {row}"
    return f"in the {row} {column}"


PLACES = {place_phrase(r, c): (r, c) for r in ROWS for c in COLUMNS}

NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
WORD_NUMBERS = {v: k for k, v in NUMBER_WORDS.items()}

GAVEL_CATEGORIES = ("Obj", "Color", "Qty", "Loc", "Size", "Attr", "State")
