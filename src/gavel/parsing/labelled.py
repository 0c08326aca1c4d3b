"""Boxes written as labelled numbers: ``x1: 200, y1: 350, x2: 600, y2: 550`` and its kin.

Every family writes boxes this way once it is prompted loosely, in prose or as JSON objects,
with whatever labels it likes: ``x1/y1/x2/y2`` (or ``x0/y0/x1/y1``), ``x_min``/``xmin``/``min_x``,
``left/top/right/bottom``, ``x/y/width/height`` (``w``/``h``), a centre (``cx``, ``x_center``,
``center_x``) with a size, in any order and any case. The labels decide what each number is, so
the order they come in never matters.

An object may also name two corner points: ``{"top_left": [x, y], "bottom_right": [x, y]}``
(each point a pair or ``{"x": …, "y": …}``; ``upper_left``/``lower_right`` too).

What a set of labels means, per axis (x shown; y alike with ``top``/``bottom``/``height``):

- a start (``x_min``, ``left``, ``x``, the lower of two numbered labels) and an end (``x_max``,
  ``right``, the higher numbered one) are the two sides;
- a start and a size (``width``/``w``) are the start and start + size;
- a centre and a size are centre ± size / 2; an end and a size, end − size and end.

Labels that say the same thing twice on one axis (``left`` and ``x_min``) make the set
ambiguous: no box. A lone ``x``/``y`` pair is a point, not a box.

In prose, four labels in brackets may name the four numbers that follow them
(``(x_min, y_min, width, height) = (10, 20, 30, 40)``); otherwise the labelled numbers of one
box lie close together: each ``LABEL: NUMBER`` (or
``LABEL = NUMBER``, the label quoted, backticked or in bold) follows the previous one within
:data:`MAX_GAP` characters, so ``(x1: 380, y1: 380) to (x2: 960, y2: 960)`` is one box. A box is
complete as soon as both axes are; a label seen again before then, or a longer gap, starts a new
box (the unfinished one is dropped). One pass over the text, each label looked at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from gavel.parsing.numbers import NUMBER

#: The most characters between one labelled number and the next of the same box in prose.
MAX_GAP = 40

_CENTRE = r"c(?:ent(?:er|re))?"
# Longest forms first: ``x_min`` must not stop at ``x``.
LABEL = (
    rf"(?:[xy]_?(?:min|max|[012]|{_CENTRE})|(?:min|max|{_CENTRE})_?[xy]"
    r"|left|top|right|bottom|width|height|[xywh])"
)
# A label no letter, digit or dash touches, an optional closing quote/backtick/bold, then ':' or
# '=' and the number. Every quantifier is bounded: a long run of blanks is never rescanned.
_PAIR = re.compile(
    rf"(?<![\w-])({LABEL})(?![\w-])[\"'`*]{{0,3}}[ \t]{{0,3}}[:=][ \t]{{0,3}}[\"']?({NUMBER})",
    re.IGNORECASE,
)


_FOUR_LABELS = r"\s*+,\s*+".join([rf"({LABEL})"] * 4)
_FOUR_NUMBERS = r"\s*+,\s*+".join([rf"({NUMBER})"] * 4)
# Four labels in brackets naming the four numbers that follow: "(x1, y1, x2, y2) = (…)",
# "[x_min, y_min, width, height]: […]", "(left, top, right, bottom) are (…)".
_TUPLE = re.compile(
    rf"[\[(]\s*+{_FOUR_LABELS}\s*+[\])][ \t]{{0,3}}(?:[:=]|is\b|are\b)?[ \t]{{0,3}}"
    rf"[\[(]\s*+{_FOUR_NUMBERS}\s*+[\])]",
    re.IGNORECASE,
)


def _roles() -> dict[str, tuple[str, str]]:
    """Each label, lower-cased and without underscores, as (axis, role)."""
    roles = {"left": ("x", "start"), "top": ("y", "start"), "right": ("x", "end"),
             "bottom": ("y", "end"), "width": ("x", "size"), "height": ("y", "size"),
             "w": ("x", "size"), "h": ("y", "size")}  # fmt: skip
    for axis in "xy":
        roles[axis] = (axis, "start")
        for word, role in (("min", "start"), ("max", "end")):
            roles[axis + word] = roles[word + axis] = (axis, role)
        for digit in "012":
            roles[axis + digit] = (axis, "n" + digit)
        for centre in ("c", "center", "centre"):
            roles[axis + centre] = roles[centre + axis] = (axis, "centre")
    return roles


_ROLES = _roles()

Quad = tuple[float, float, float, float]


def role_of(label: str) -> tuple[str, str] | None:
    """``(axis, role)`` of a label (``"X_Min"`` -> ``("x", "start")``), None for any other word.

    Numbered labels keep their digit (``"x1"`` -> ``("x", "n1")``): whether ``x1`` starts or
    ends a box depends on whether ``x0`` or ``x2`` is its partner.
    """
    return _ROLES.get(label.strip().lower().replace("_", ""))


def _side(roles: Mapping[str, float]) -> tuple[float, float] | None:
    """One axis's two sides from its roles, or None when they do not make two sides."""
    numbered = sorted(r for r in roles if r.startswith("n"))
    start_of = [roles[r] for r in ("start",) if r in roles]
    end_of = [roles[r] for r in ("end",) if r in roles]
    if len(numbered) == 2:
        start_of.append(roles[numbered[0]])
        end_of.append(roles[numbered[1]])
    elif len(numbered) == 1:
        (start_of if numbered[0] != "n2" else end_of).append(roles[numbered[0]])
    elif numbered:
        return None  # x0, x1 and x2: no pair of sides
    if len(start_of) > 1 or len(end_of) > 1:
        return None  # two labels for one side
    start = start_of[0] if start_of else None
    end = end_of[0] if end_of else None
    size, centre = roles.get("size"), roles.get("centre")
    if start is not None and end is not None:
        return start, end
    if size is None:
        return None
    if start is not None:
        return start, start + size
    if centre is not None:
        return centre - size / 2, centre + size / 2
    if end is not None:
        return end - size, end
    return None


def box_from_roles(values: Mapping[tuple[str, str], float]) -> Quad | None:
    """The box ``(x1, y1, x2, y2)`` that labelled values describe, or None."""
    x = _side({role: v for (axis, role), v in values.items() if axis == "x"})
    y = _side({role: v for (axis, role), v in values.items() if axis == "y"})
    if x is None or y is None:
        return None
    return (x[0], y[0], x[1], y[1])


def box_from_object(numbers: Mapping[str, float]) -> Quad | None:
    """The box of a JSON object's numeric fields (``{"x_min": 1, "y_min": 2, ...}``), or None.

    Keys that are no label are ignored; two keys with one meaning on one axis (``left`` and
    ``x_min``) make it ambiguous, so no box.
    """
    values: dict[tuple[str, str], float] = {}
    for key, number in numbers.items():
        role = role_of(key)
        if role is None:
            continue
        if role in values:
            return None
        values[role] = number
    return box_from_roles(values) if values else None


_FIRST_CORNER = ("topleft", "upperleft")
_SECOND_CORNER = ("bottomright", "lowerright")


def _point(value: Any) -> tuple[float, float] | None:
    """``[x, y]`` or ``{"x": x, "y": y}`` as two numbers, or None."""
    if isinstance(value, dict):
        lowered = {str(k).lower(): v for k, v in value.items()}
        value = [lowered.get("x"), lowered.get("y")]
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return None
    return float(value[0]), float(value[1])


def box_from_corners(obj: Mapping[str, Any]) -> Quad | None:
    """The box of an object naming two corner points (``{"top_left": [10, 20],
    "bottom_right": {"x": 30, "y": 40}}``), or None."""
    corners: dict[str, Any] = {}
    for key, value in obj.items():
        name = str(key).lower().replace("_", "").replace("-", "").replace(" ", "")
        corners.setdefault(name, value)
    first = next((corners[k] for k in _FIRST_CORNER if k in corners), None)
    second = next((corners[k] for k in _SECOND_CORNER if k in corners), None)
    start, end = _point(first), _point(second)
    if start is None or end is None:
        return None
    return (start[0], start[1], end[0], end[1])


def _pair_boxes(text: str) -> Iterator[tuple[int, Quad]]:
    group: dict[tuple[str, str], float] = {}
    last_end = -1
    for match in _PAIR.finditer(text):
        role = _ROLES[match.group(1).lower().replace("_", "")]
        if group and (match.start() - last_end > MAX_GAP or role in group):
            group = {}
        group[role] = float(match.group(2))
        last_end = match.end()
        box = box_from_roles(group)
        if box is not None:
            yield match.start(), box
            group = {}


def _tuple_boxes(text: str) -> Iterator[tuple[int, Quad]]:
    for match in _TUPLE.finditer(text):
        box = box_from_object(dict(zip(match.groups()[:4], map(float, match.groups()[4:]),
                                       strict=True)))  # fmt: skip
        if box is not None:
            yield match.start(), box


# What four labels in brackets begin with: a bracket, then a label (case as _TUPLE reads it).
_TUPLE_START = re.compile(rf"[\[(]\s*+{LABEL}", re.IGNORECASE)


def labelled_boxes(text: str) -> Iterator[Quad]:
    """Every box written as labelled numbers in prose, in text order: ``LABEL: NUMBER`` pairs,
    and four labels naming four numbers (``(x_min, y_min, width, height) = (10, 20, 30, 40)``).

    Most prose has neither: a pair needs ``:`` or ``=``, four labels a bracket opening on a
    label, and a text without them is not scanned for either.
    """
    pairs = ":" in text or "=" in text
    if not pairs and _TUPLE_START.search(text) is None:
        return iter(())
    found = sorted(
        [*(_pair_boxes(text) if pairs else ()), *_tuple_boxes(text)], key=lambda item: item[0]
    )
    return (box for _, box in found)
