"""Boxes in prose, read leniently: labelled corners, labelled numbers, bare lists.

Three forms, tried in this order; the first that gives a box is the reply's reading:

``corners``
    Two labelled corner points: "Top-left corner: (205, 34), Bottom-right corner: (467, 359)",
    ``(x=265, y=180)``, "(x1, y1) = (0, 800) and (x2, y2) = (300, 1000)", each point within a
    short bounded distance of its label. A label names a corner, so when a model writes a
    whole 4-tuple under a corner label ("Top-left corner: (208,47,396,359)" / "Bottom-right
    corner: (208,340,396,364)", as Qwen2.5-VL does) the corner it names is taken from that
    tuple read as a box: the top-left corner is the tuple's first two numbers, the
    bottom-right corner its last two. Such a reply is one box, (208, 47, 396, 364).
``labelled``
    Labelled numbers, ``(x1: 200, y1: 350, x2: 600, y2: 550)`` and every other labelling
    :mod:`gavel.parsing.labelled` knows.
``plain``
    Bare ``[x1, y1, x2, y2]`` / ``(x1, y1, x2, y2)`` lists, and Shikra's several boxes of one
    phrase in one bracket, ``[0.1,0.2,0.3,0.4;0.5,0.6,0.7,0.8]``.

A box written twice (the same numbers twice in the reply) counts once.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gavel.parsing.labelled import labelled_boxes
from gavel.parsing.numbers import NUMBER

Quad = tuple[float, float, float, float]

# A point, or a 4-tuple where a point belongs: "(205, 34)", "(x=265, y=180)", "[208,47,396,359]".
_POINT = (
    rf"[\[(]\s*+(?:x\s*+[=:]\s*+)?({NUMBER})\s*+,\s*+(?:y\s*+[=:]\s*+)?({NUMBER})"
    rf"(?:\s*+,\s*+({NUMBER})\s*+,\s*+({NUMBER}))?\s*+[\])]"
)
_FIRST = r"(?:(?:top|upper)[- ]left\b|\(\s*+x_?(?:1|min)\s*+,\s*+y_?(?:1|min)\s*+\))"
_SECOND = r"(?:(?:bottom|lower)[- ]right\b|\(\s*+x_?(?:2|max)\s*+,\s*+y_?(?:2|max)\s*+\))"
# Each point within a short bounded distance of its label, the labels within a bounded distance
# of each other, so the scan stays linear.
_LABELLED_CORNERS = re.compile(
    rf"{_FIRST}[^\n]{{0,60}}?{_POINT}[\s\S]{{0,120}}?{_SECOND}[^\n]{{0,60}}?{_POINT}",
    re.IGNORECASE,
)
_QUAD = rf"{NUMBER}\s*+,\s*+{NUMBER}\s*+,\s*+{NUMBER}\s*+,\s*+{NUMBER}"
# The first quad's numbers captured, the further ones (Shikra's ``;``) as one group: capturing
# changes nothing in what matches, and saves finding each number again.
_FIRST_QUAD = r"\s*+,\s*+".join([f"({NUMBER})"] * 4)
_PLAIN = re.compile(rf"[\[(]\s*+{_FIRST_QUAD}((?:\s*+;\s*+{_QUAD})*+)\s*+[\])]")
_NUMBERS = re.compile(NUMBER)


def _corner_box(groups: tuple[str, ...]) -> Quad:
    """Two labelled corners (each a point or a 4-tuple) as one box."""
    first, second = groups[:4], groups[4:]
    x2, y2 = (second[2], second[3]) if second[2] else (second[0], second[1])
    return (float(first[0]), float(first[1]), float(x2), float(y2))


def _corners(text: str) -> list[Quad]:
    """Boxes of labelled corners. A first corner's label is "top-left"/"upper-left" (any case)
    or begins with ``(``: a text with neither has none, and is not scanned."""
    if "(" not in text and "left" not in text.lower():
        return []
    return [_corner_box(m) for m in _LABELLED_CORNERS.findall(text)]


def _lists(text: str) -> list[Quad]:
    """Bare lists of four numbers, and Shikra's ``;``-separated quads in one bracket."""
    boxes: list[Quad] = []
    for x1, y1, x2, y2, more in _PLAIN.findall(text):
        boxes.append((float(x1), float(y1), float(x2), float(y2)))
        if more:
            numbers = [float(n) for n in _NUMBERS.findall(more)]
            for i in range(0, len(numbers), 4):
                boxes.append((numbers[i], numbers[i + 1], numbers[i + 2], numbers[i + 3]))
    return boxes


def prose_boxes(text: str) -> tuple[list[Quad], str | None, int]:
    """The boxes of the first form that gives any, its name, and how many repeats were dropped."""
    for name, read in _FORMS:
        found = read(text)
        if found:
            unique = list(dict.fromkeys(found))
            return unique, name, len(found) - len(unique)
    return [], None, 0


#: The prose forms in the order they are tried, each with its reader.
_FORMS: tuple[tuple[str, Callable[[str], list[Quad]]], ...] = (
    ("corners", _corners),
    ("labelled", lambda text: list(labelled_boxes(text))),
    ("plain", _lists),
)
