"""One parser from model text to boxes in original-image pixels.

It recognizes the box syntaxes that VLM families actually emit, reads the four numbers in the
order the text gives them, and hands them to the *declared* convention for scaling. It never
raises on model text; it returns a status:

- ``ok``: boxes found in a structured syntax (a JSON key, a model's box tags or tokens);
- ``lenient``: boxes found only in prose (labelled corners, labelled numbers, bare lists:
  :mod:`gavel.parsing.prose`);
- ``none``: the answer states there is no box, or contains no box at all;
- ``invalid``: something box-like was found but no usable box came out of it.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from collections.abc import Collection
from enum import StrEnum
from typing import Any

import msgspec

from gavel.geometry import Box, clip_box, is_degenerate, order_corners
from gavel.parsing.conventions import Convention, ImageGeometry, get_convention
from gavel.parsing.labelled import box_from_corners, box_from_object
from gavel.parsing.numbers import NUMBER as _NUMBER
from gavel.parsing.prose import prose_boxes
from gavel.parsing.structured import (
    MAX_TEXT,
    decode_literal,
    lowered_keys,
    repaired_list,
    strip_think,
    structured_candidates,
)


class BoxStatus(StrEnum):
    OK = "ok"
    LENIENT = "lenient"
    NONE = "none"
    INVALID = "invalid"


class BoxParse(msgspec.Struct, gc=False):
    """Boxes in original pixels plus an account of everything fixed or dropped on the way.

    (A Struct, like :class:`_Raw`: one is made for every answer scored, for a fraction of a
    dataclass's cost.)"""

    status: BoxStatus
    boxes: list[Box] = msgspec.field(default_factory=list)
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
    #: Boxes set aside by a label filter (``labels=``): their label was not one asked for.
    label_dropped: int = 0


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
_QWEN2 = re.compile(
    rf"<\|box_start\|>\s*\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)\s*,\s*"
    rf"\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)\s*<\|box_end\|>"
)
# Qwen-VL (v1): <box>(x1,y1),(x2,y2)</box>, the corner pairs of Qwen2-VL's box tokens.
_QWEN1 = re.compile(
    rf"<box>\s*\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)\s*,\s*"
    rf"\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)\s*</box>"
)
# MiniGPT-v2 (and models trained on its data): {<x1><y1><x2><y2>}, integers in 0-100.
_MINIGPT = re.compile(r"\{\s*+<(\d{1,4})>\s*+<(\d{1,4})>\s*+<(\d{1,4})>\s*+<(\d{1,4})>\s*+\}")
# Qwen2.5-VL document parsing: HTML elements with data-bbox="x1 y1 x2 y2".
_DATA_BBOX = re.compile(
    rf"data-bbox\s*=\s*[\"']\s*({_NUMBER})[\s,]+({_NUMBER})[\s,]+({_NUMBER})[\s,]+({_NUMBER})\s*[\"']"
)
# "x1 y1 x2 y2" with blanks only, as MiniCPM-V writes inside <box>.
_SPACED = re.compile(rf"\s*({_NUMBER})\s+({_NUMBER})\s+({_NUMBER})\s+({_NUMBER})\s*")
_NO_BOX = re.compile(
    r"\b(no (bounding )?box(es)?|no region|not applicable|n/a|none)\b", re.IGNORECASE
)


class _Raw(msgspec.Struct, gc=False):
    """Numbers as written, before conversion."""

    quads: list[tuple[float, ...]] = msgspec.field(default_factory=list)
    malformed: int = 0
    explicit_none: bool = False
    syntax: str | None = None
    repaired: int = 0
    repeated: int = 0
    #: The label filter (None: every box is kept) and how many boxes it set aside.
    labels: frozenset[str] | None = None
    label_dropped: int = 0

    def keeps(self, label: Any) -> bool:
        """Whether a box of this label passes the filter (counting it when it does not)."""
        if self.labels is None:
            return True
        if isinstance(label, str) and label.strip() in self.labels:
            return True
        self.label_dropped += 1
        return False

    def drop_unlabelled(self) -> None:
        """Under a label filter, set aside boxes of a syntax whose labels are not read (tags)."""
        if self.labels is not None:
            self.label_dropped += len(self.quads)
            self.quads = []


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


#: The types a decoded number has (``bool``, an ``int`` subclass, is not one of them).
_PLAIN_NUMBERS = frozenset({int, float})


def _plain_quad(value: list[Any]) -> tuple[float, ...] | None:
    """Four plain ints/floats as a quad, or None to leave the list to the general reading.

    Nearly every box value is such a list; reading it without a per-item :func:`_as_number`
    call is what the general reading gives for it, at a fraction of the cost.
    """
    a, b, c, d = value
    plain = _PLAIN_NUMBERS
    if type(a) in plain and type(b) in plain and type(c) in plain and type(d) in plain:
        try:
            return (float(a), float(b), float(c), float(d))
        except OverflowError:  # a huge integer: the general reading counts it
            return None
    return None


def _collect_boxes(value: Any, raw: _Raw) -> None:
    """Gather quads from a decoded box value: a quad, a list of quads, or dicts holding them."""
    if type(value) is list and value:
        if len(value) == 4 and (quad := _plain_quad(value)) is not None:
            raw.quads.append(quad)
            return
        if type(value[0]) is list:  # a list of boxes, as the general reading below reads it
            _collect_each(value, raw)
            return
    if value is None or value == [] or (isinstance(value, str) and _NO_BOX.search(value)):
        raw.explicit_none = True
        return
    if isinstance(value, dict):
        # A box value without a box key inside ({"x1": …}) is box-like but unusable: invalid.
        if not _collect_from_object(value, raw):
            raw.malformed += 1
        return
    if isinstance(value, list):
        if all(not isinstance(v, list | dict) for v in value):
            numbers = [_as_number(v) for v in value]
            if len(value) == 4 and all(n is not None for n in numbers):
                raw.quads.append(tuple(numbers))  # type: ignore[arg-type]
            else:
                raw.malformed += 1
            return
        _collect_each(value, raw)
        return
    raw.malformed += 1


def _collect_each(values: list[Any], raw: _Raw) -> None:
    """Each item of a list of box values, a plain quad taken without a call of its own."""
    quads = raw.quads
    for item in values:
        if type(item) is list and len(item) == 4 and (quad := _plain_quad(item)) is not None:
            quads.append(quad)
        else:
            _collect_boxes(item, raw)


def _collect_from_object(obj: dict[str, Any], raw: _Raw) -> bool:
    """Look for box keys in an object (and in nested objects/lists). True if any key was seen.

    An object without a box key may itself be a box by its labelled fields (``{"x_min": …,
    "y_min": …, "x_max": …, "y_max": …}``, Moondream's detections) or by two corner points
    (``{"top_left": [x, y], "bottom_right": [x, y]}``; :mod:`gavel.parsing.labelled`).
    Its ``label``, if any, is what a label filter reads.
    """
    seen = False
    lowered = lowered_keys(obj)  # the verdict's reading lowered this object already
    for key in BOX_KEYS:
        if key in lowered:
            seen = True
            if raw.labels is None or raw.keeps(lowered.get("label")):
                _collect_boxes(lowered[key], raw)
            break
    if not seen:
        numbers = {k: n for k, v in lowered.items() if (n := _as_number(v)) is not None}
        labelled = box_from_object(numbers) if len(numbers) >= 4 else box_from_corners(lowered)
        if labelled is not None:
            seen = True
            if raw.keeps(lowered.get("label")):
                raw.quads.append(labelled)
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

    Only an object can hold a key: a text without ``{`` has none to read, and is not decoded.
    """
    if "{" not in text:
        return
    recovered = repaired_list(text) if _may_repair(text) else None
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


# Where a fenced block's contents begin with ``[``: a fence's opening as structured.py reads
# one, then the bracket. A closing fence may match too: this only decides whether
# repaired_list is asked at all, never what it finds.
_LIST_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*+\s*+\[")


def _may_repair(text: str) -> bool:
    """Whether :func:`repaired_list` could find anything: it only reads a list, the whole
    text or a fenced block that begins with ``[`` (``str.strip`` and the pattern's ``\\s``
    skip the same blanks)."""
    return text.lstrip().startswith("[") or ("```" in text and _LIST_FENCE.search(text) is not None)


def _from_tags(text: str, raw: _Raw) -> None:
    if "<" not in text:  # every tag syntax but HTML's attribute has one
        if "data-bbox" in text:
            _corner_pairs(text, raw, "html", _DATA_BBOX)
        return
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
    for name, pattern in (("qwen2-vl", _QWEN2), ("html", _DATA_BBOX), ("minigpt-v2", _MINIGPT)):
        if _corner_pairs(text, raw, name, pattern):
            return


def _corner_pairs(text: str, raw: _Raw, name: str, pattern: re.Pattern[str]) -> bool:
    """Every match of a pattern whose four groups are one box's numbers."""
    matches = pattern.findall(text)
    if matches:
        raw.syntax = name
        raw.quads.extend(tuple(float(g) for g in groups) for groups in matches)
    return bool(matches)


@functools.cache
def _run_of(token: re.Pattern[str]) -> re.Pattern[str]:
    """Adjacent tokens (blanks between them allowed): one run, read box by box."""
    return re.compile(rf"(?:{token.pattern})(?:\s*+(?:{token.pattern}))*+", token.flags)


# What follows a run of tokens up to its label: other tokens (PaliGemma's <segNNN>), blanks.
_LABEL_AFTER = re.compile(r"(?:\s*+<[^<>\n]{1,32}>)*+[ \t]*+([^;<\n]{0,200})")


def _from_tokens(text: str, convention: Convention, raw: _Raw) -> None:
    """Each run of adjacent tokens, ``arity`` tokens a box; a run's leftover tokens are malformed.

    A label filter reads, for a convention whose label follows its tokens (PaliGemma's
    ``<loc…>×4 label ;``), the text after the run up to the next ``;``, ``<`` or line end.
    """
    assert convention.token is not None
    size = convention.arity
    for run in _run_of(convention.token).finditer(text):
        values = [float(m) for m in convention.token.findall(run.group(0))]
        raw.syntax = convention.name
        if len(values) % size:
            raw.malformed += 1
        if raw.labels is not None:
            label = _LABEL_AFTER.match(text, run.end()) if convention.label_after else None
            if not raw.keeps(label.group(1) if label else None):
                continue
        for i in range(0, len(values) - len(values) % size, size):
            raw.quads.append(tuple(values[i : i + size]))


def _from_prose(text: str, raw: _Raw) -> None:
    """Boxes in prose (:mod:`gavel.parsing.prose`); a label filter keeps none of them."""
    found, syntax, repeated = prose_boxes(text)
    raw.repeated = repeated
    raw.quads.extend(found)
    raw.drop_unlabelled()
    if raw.quads:
        raw.syntax = syntax


def extract_raw(
    text: str, convention: Convention, labels: Collection[str] | None = None
) -> tuple[_Raw, bool]:
    """Numbers as written in the text, and whether they came from a strict syntax."""
    text = strip_think(text[:MAX_TEXT])
    raw = _Raw(labels=None if labels is None else frozenset(label.strip() for label in labels))
    if convention.token is not None:
        _from_tokens(text, convention, raw)
        if raw.syntax:
            return raw, True
    _from_tags(text, raw)
    if raw.syntax:
        raw.drop_unlabelled()
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
    """Scale, order, clip and filter quads into ``result.boxes``, counting each fix.

    A quad of four numbers within the convention's range whose box is ordered, has area and
    lies inside the image needs no fix: it is taken as it is, without the general path's
    checks one by one (which would find nothing to count for it).
    """
    low, high = convention.value_range or (-math.inf, math.inf)
    least, most = _finite_bounds(low, high)
    plain = convention.arity == 4
    to_pixels = convention.to_pixels
    width, height = geometry.width, geometry.height
    boxes = result.boxes
    for quad in quads:
        if plain and len(quad) == 4:
            a, b, c, d = quad
            in_range = least <= a <= most and least <= b <= most
            if in_range and least <= c <= most and least <= d <= most:
                x1, y1, x2, y2 = to_pixels(quad, geometry)
                if 0.0 <= x1 < x2 <= width and 0.0 <= y1 < y2 <= height:
                    boxes.append((float(x1), float(y1), float(x2), float(y2)))
                    continue
        _convert_quad(quad, convention, geometry, result, low, high)


@functools.cache
def _finite_bounds(low: float, high: float) -> tuple[float, float]:
    """Bounds within which a number is both finite and in range (no bound is infinite)."""
    return max(low, -sys.float_info.max), min(high, sys.float_info.max)


def _convert_quad(
    quad: tuple[float, ...],
    convention: Convention,
    geometry: ImageGeometry,
    result: BoxParse,
    low: float,
    high: float,
) -> None:
    """One quad the general way: every check, every fix counted."""
    if not all(math.isfinite(v) for v in quad):
        result.malformed += 1
        return
    if any(v < low or v > high for v in quad):
        result.out_of_range += 1
    box, swapped = order_corners(convention.to_pixels(quad, geometry))
    box, clipped = clip_box(box, geometry.width, geometry.height)
    result.swapped += swapped
    result.clipped += clipped
    if is_degenerate(box):
        result.degenerate += 1
        return
    result.boxes.append(box)


def _all_in_unit_interval(quads: list[tuple[float, ...]]) -> bool:
    """Every number lies in [0, 1] and at least one is a fraction (all-zero or 0/1 corners are
    as likely whole numbers)."""
    fraction = False
    for quad in quads:
        for v in quad:
            if not 0 <= v <= 1:
                return False  # most replies: the first number already says no
            if not fraction and not float(v).is_integer():
                fraction = True
    return fraction


def parse_boxes(
    text: str | None,
    box_format: str,
    geometry: ImageGeometry,
    *,
    labels: Collection[str] | None = None,
) -> BoxParse:
    """Parse every box in ``text`` under the declared ``box_format`` into original pixels.

    ``labels``: keep only boxes whose label is one of these (as supervision's PaliGemma reader
    does with its ``classes``): the label after a run of PaliGemma ``<loc…>`` tokens, or a JSON
    object's ``label``. A box with no label, or another one, is set aside and counted
    (``label_dropped``); boxes in prose carry no label, so a filter keeps none of them.

    Raises only for a bad *declaration* (unknown format); never for the text itself.
    """
    convention = get_convention(box_format)
    if not text:
        return BoxParse(BoxStatus.NONE)
    raw, strict = extract_raw(text, convention, labels)
    result = BoxParse(
        BoxStatus.NONE,
        syntax=raw.syntax,
        malformed=raw.malformed,
        stated_none=raw.explicit_none,
        repaired=raw.repaired,
        repeated=raw.repeated,
        label_dropped=raw.label_dropped,
        unit_interval=convention.warn_unit_interval and _all_in_unit_interval(raw.quads),
    )
    convert_quads(raw.quads, convention, geometry, result)
    if result.boxes:
        result.status = BoxStatus.OK if strict else BoxStatus.LENIENT
    elif raw.quads or raw.malformed:
        result.status = BoxStatus.INVALID
    return result
