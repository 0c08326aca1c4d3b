"""One parser from model text to boxes in original-image pixels.

It recognizes the box syntaxes that VLM families actually emit, reads the four numbers in the
order the text gives them, and hands them to the *declared* convention for scaling. It never
raises on model text; it returns a status:

- ``ok``: boxes found in a structured syntax (a JSON key, a model's box tags or tokens);
- ``lenient``: boxes found only as bare ``[x1, y1, x2, y2]`` lists in prose;
- ``none``: the answer states there is no box, or contains no box at all;
- ``invalid``: something box-like was found but no usable box came out of it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from gavel.geometry import Box, clip_box, is_degenerate, order_corners
from gavel.parsing.conventions import Convention, ImageGeometry, get_convention
from gavel.parsing.structured import (
    MAX_TEXT,
    decode_literal,
    repaired_list,
    strip_think,
    structured_candidates,
)


class BoxStatus(StrEnum):
    OK = "ok"
    LENIENT = "lenient"
    NONE = "none"
    INVALID = "invalid"


@dataclass
class BoxParse:
    """Boxes in original pixels plus an account of everything fixed or dropped on the way."""

    status: BoxStatus
    boxes: list[Box] = field(default_factory=list)
    syntax: str | None = None
    swapped: int = 0
    clipped: int = 0
    degenerate: int = 0
    malformed: int = 0
    out_of_range: int = 0
    #: The answer said explicitly that there is no box (null, [], "no box").
    stated_none: bool = False
    #: A JSON list of boxes that did not decode as a whole, read object by object.
    repaired: int = 0
    #: Boxes in prose that repeat one already read (the same numbers under two labels).
    repeated: int = 0
    #: Every number of the reply lies in [0, 1] under a convention whose range is far wider
    #: (0-1000, pixels): most likely 0-1 coordinates. Recorded and warned about, never acted on.
    unit_interval: bool = False


#: JSON keys whose value is a box, a list of boxes, or null.
BOX_KEYS = ("bbox_2d", "box_2d", "bbox", "boxes", "box", "bboxes", "bounding_box", "bounding_boxes")


def _tag(opening: str, closing: str) -> re.Pattern[str]:
    # The content may not contain another opening tag, so each unclosed opening tag scans only
    # up to the next one (not to the end of the text, which is quadratic), and no ``\s*`` around
    # the lazy group (backtracking over a long blank run is quadratic too); decode_literal strips.
    return re.compile(rf"{opening}((?:(?!{opening}).)*?){closing}", re.DOTALL)


# Tag syntaxes whose content is a (list of) numeric box(es).
_TAGGED = [
    ("internvl", _tag(r"<box>", r"</box>")),
    ("deepseek", _tag(r"<\|det\|>", r"<\|/det\|>")),
    ("glm", _tag(r"<\|begin_of_box\|>", r"<\|end_of_box\|>")),
]
# One way to match each number: ``\d+\.?\d*`` splits a digit run in many ways, so a long run
# that is not followed by a comma backtracks quadratically.
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_QWEN2 = re.compile(
    rf"<\|box_start\|>\s*\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)\s*,\s*"
    rf"\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)\s*<\|box_end\|>"
)
# Qwen-VL (v1): <box>(x1,y1),(x2,y2)</box>, the corner pairs of Qwen2-VL's box tokens.
_QWEN1 = re.compile(
    rf"<box>\s*\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)\s*,\s*"
    rf"\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)\s*</box>"
)
_PLAIN = re.compile(
    rf"[\[(]\s*({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})\s*[\])]"
)
_POINT = rf"\(\s*(?:x\s*=\s*)?({_NUMBER})\s*,\s*(?:y\s*=\s*)?({_NUMBER})\s*\)"
# "Top-left corner: (205, 34), Bottom-right corner: (467, 359)", or "(x1, y1) = (0, 800) and
# (x2, y2) = (300, 1000)": two labelled points in prose,
# each within a short bounded distance of its label, so the scan stays linear.
_LABELLED_CORNERS = re.compile(
    rf"(?:(?:top|upper)[- ]left\b|\(\s*x1\s*,\s*y1\s*\))[^\n]{{0,60}}?{_POINT}[\s\S]{{0,120}}?"
    rf"(?:(?:bottom|lower)[- ]right\b|\(\s*x2\s*,\s*y2\s*\))[^\n]{{0,60}}?{_POINT}",
    re.IGNORECASE,
)
# Qwen2.5-VL document parsing: HTML elements with data-bbox="x1 y1 x2 y2".
_DATA_BBOX = re.compile(
    rf"data-bbox\s*=\s*[\"']\s*({_NUMBER})[\s,]+({_NUMBER})[\s,]+({_NUMBER})[\s,]+({_NUMBER})\s*[\"']"
)
# "x1 y1 x2 y2" with blanks only, as MiniCPM-V writes inside <box>.
_SPACED = re.compile(rf"\s*({_NUMBER})\s+({_NUMBER})\s+({_NUMBER})\s+({_NUMBER})\s*")
_NO_BOX = re.compile(
    r"\b(no (bounding )?box(es)?|no region|not applicable|n/a|none)\b", re.IGNORECASE
)


@dataclass
class _Raw:
    """Numbers as written, before conversion."""

    quads: list[tuple[float, ...]] = field(default_factory=list)
    malformed: int = 0
    explicit_none: bool = False
    syntax: str | None = None
    repaired: int = 0
    repeated: int = 0


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | str):
        try:
            # float() of a huge JSON integer overflows; of a word, fails.
            return float(value.strip() if isinstance(value, str) else value)
        except (ValueError, OverflowError):
            return None
    return None


def _collect_boxes(value: Any, raw: _Raw) -> None:
    """Gather quads from a decoded box value: a quad, a list of quads, or dicts holding them."""
    if value is None or value == [] or (isinstance(value, str) and _NO_BOX.search(value)):
        raw.explicit_none = True
        return
    if isinstance(value, dict):
        # A box value without a box key inside ({"x1": …}) is box-like but unusable: invalid.
        if not _collect_from_object(value, raw):
            raw.malformed += 1
        return
    if isinstance(value, list):
        numbers = [_as_number(v) for v in value]
        if value and all(not isinstance(v, list | dict) for v in value):
            if len(value) == 4 and all(n is not None for n in numbers):
                raw.quads.append(tuple(numbers))  # type: ignore[arg-type]
            else:
                raw.malformed += 1
            return
        for item in value:
            _collect_boxes(item, raw)
        return
    raw.malformed += 1


def _collect_from_object(obj: dict[str, Any], raw: _Raw) -> bool:
    """Look for box keys in an object (and in nested objects/lists). True if any key was seen."""
    seen = False
    lowered = {str(k).lower(): v for k, v in obj.items()}
    for key in BOX_KEYS:
        if key in lowered:
            seen = True
            _collect_boxes(lowered[key], raw)
            break
    if not seen:
        for value in lowered.values():
            if isinstance(value, dict):
                seen = _collect_from_object(value, raw) or seen
            elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
                for item in value:
                    if isinstance(item, dict):
                        seen = _collect_from_object(item, raw) or seen
    return seen


def _from_structures(text: str, raw: _Raw) -> None:
    """Boxes under a known key of a JSON/Python object (or a list of such objects).

    A bare numeric list is not taken here: without a key it is no stronger evidence than a
    list in prose, and is left to the lenient pass.
    """
    recovered = repaired_list(text)
    if recovered is not None:
        seen = False
        for obj in recovered:
            seen = _collect_from_object(obj, raw) or seen
        if seen:
            raw.syntax = "json"
            raw.repaired = 1
            return
    for value in structured_candidates(text):
        objects = [value] if isinstance(value, dict) else []
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            objects = value
        seen = False
        for obj in objects:
            seen = _collect_from_object(obj, raw) or seen
        if seen:
            raw.syntax = "json"
            return


def _from_tags(text: str, raw: _Raw) -> None:
    if _corner_pairs(text, raw, "qwen-vl", _QWEN1):
        return
    for name, pattern in _TAGGED:
        contents = pattern.findall(text)
        if not contents:
            continue
        raw.syntax = name
        for content in contents:
            value = decode_literal(content)
            spaced = _SPACED.fullmatch(content) if value is None else None
            if spaced is not None:
                raw.quads.append(tuple(float(g) for g in spaced.groups()))
            elif value is None:
                raw.malformed += 1
            else:
                _collect_boxes(value, raw)
        return
    for name, pattern in (("qwen2-vl", _QWEN2), ("html", _DATA_BBOX)):
        if _corner_pairs(text, raw, name, pattern):
            return


def _corner_pairs(text: str, raw: _Raw, name: str, pattern: re.Pattern[str]) -> bool:
    """Every match of a pattern whose four groups are one box's numbers."""
    matches = pattern.findall(text)
    if matches:
        raw.syntax = name
        raw.quads.extend(tuple(float(g) for g in groups) for groups in matches)
    return bool(matches)


def _from_tokens(text: str, convention: Convention, raw: _Raw) -> None:
    assert convention.token is not None
    values = [float(m) for m in convention.token.findall(text)]
    if not values:
        return
    raw.syntax = convention.name
    size = convention.arity
    for i in range(0, len(values) - len(values) % size, size):
        raw.quads.append(tuple(values[i : i + size]))
    if len(values) % size:
        raw.malformed += 1


def _from_prose(text: str, raw: _Raw) -> None:
    """Boxes in prose: labelled corner points first, else bare ``[x1, y1, x2, y2]`` lists.

    A box written twice (the same numbers under "top-left" and "bottom-right") counts once.
    """
    found = [tuple(float(g) for g in m) for m in _LABELLED_CORNERS.findall(text)]
    syntax = "corners"
    if not found:
        found = [tuple(float(g) for g in m) for m in _PLAIN.findall(text)]
        syntax = "plain"
    unique = list(dict.fromkeys(found))
    raw.repeated = len(found) - len(unique)
    raw.quads.extend(unique)
    if raw.quads:
        raw.syntax = syntax


def extract_raw(text: str, convention: Convention) -> tuple[_Raw, bool]:
    """Numbers as written in the text, and whether they came from a strict syntax."""
    text = strip_think(text[:MAX_TEXT])
    raw = _Raw()
    if convention.token is not None:
        _from_tokens(text, convention, raw)
        if raw.syntax:
            return raw, True
    _from_tags(text, raw)
    if raw.syntax:
        return raw, True
    _from_structures(text, raw)
    if raw.syntax:
        return raw, True
    _from_prose(text, raw)
    if raw.quads:
        return raw, False
    raw.explicit_none = bool(_NO_BOX.search(text))
    return raw, False


def convert_quads(
    quads: list[tuple[float, ...]],
    convention: Convention,
    geometry: ImageGeometry,
    result: BoxParse,
) -> None:
    """Scale, order, clip and filter quads into ``result.boxes``, counting each fix."""
    low, high = convention.value_range or (-math.inf, math.inf)
    for quad in quads:
        if not all(math.isfinite(v) for v in quad):
            result.malformed += 1
            continue
        if any(v < low or v > high for v in quad):
            result.out_of_range += 1
        box, swapped = order_corners(convention.to_pixels(quad, geometry))
        box, clipped = clip_box(box, geometry.width, geometry.height)
        result.swapped += swapped
        result.clipped += clipped
        if is_degenerate(box):
            result.degenerate += 1
            continue
        result.boxes.append(box)


def _all_in_unit_interval(quads: list[tuple[float, ...]]) -> bool:
    """Every number lies in [0, 1] and at least one is a fraction (all-zero or 0/1 corners are
    as likely whole numbers)."""
    values = [v for quad in quads for v in quad]
    return (
        bool(values)
        and all(0 <= v <= 1 for v in values)
        and any(not float(v).is_integer() for v in values)
    )


def parse_boxes(text: str | None, box_format: str, geometry: ImageGeometry) -> BoxParse:
    """Parse every box in ``text`` under the declared ``box_format`` into original pixels.

    Raises only for a bad *declaration* (unknown format); never for the text itself.
    """
    convention = get_convention(box_format)
    if not text:
        return BoxParse(BoxStatus.NONE)
    raw, strict = extract_raw(text, convention)
    result = BoxParse(
        BoxStatus.NONE,
        syntax=raw.syntax,
        malformed=raw.malformed,
        stated_none=raw.explicit_none,
        repaired=raw.repaired,
        repeated=raw.repeated,
        unit_interval=convention.warn_unit_interval and _all_in_unit_interval(raw.quads),
    )
    convert_quads(raw.quads, convention, geometry, result)
    if result.boxes:
        result.status = BoxStatus.OK if strict else BoxStatus.LENIENT
    elif raw.quads or raw.malformed:
        result.status = BoxStatus.INVALID
    return result
