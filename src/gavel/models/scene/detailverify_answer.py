"""The built-in model's DetailVerifyBench answer: the caption with every wrong word tagged.

It reads each sentence of a synthetic description with the grammar it was written in, keeps the
character span of every word that states a fact, checks the fact against what it sees, and wraps
the wrong ones in ``<HALLUCINATION>`` tags, leaving every other character as it was.
"""

from __future__ import annotations

import re

import numpy as np

from gavel.models.scene.perceive import SeenObject, perceive
from gavel.synth.vocabulary import COLORS, COLUMNS, KINDS, PLACES, ROWS, WORD_NUMBERS

_PLACE = "|".join(re.escape(p) for p in sorted(PLACES, key=len, reverse=True))
_INTRO = re.compile(r"The image shows (\w+) flat shapes on a ([a-z ]+?) background\.")
_OBJECT = re.compile(rf"(?:There is one|One) ((?:[a-z]+ )*?[a-z]+)(?: sits)? ({_PLACE})\.")
_RELATION = re.compile(
    r"The (\w+) (\w+) is (to the left of|to the right of|above|below) the (\w+) (\w+)\."
)
_WORD = re.compile(r"[a-z]+")

#: Background colours a description may name, as RGB.
BACKGROUNDS = {
    "light gray": (236, 236, 236),
    "dark blue": (30, 40, 90),
    "pale yellow": (245, 240, 190),
    "black": (10, 10, 10),
    "deep green": (20, 90, 40),
}

Span = tuple[int, int]


def _background_name(image: np.ndarray) -> str:
    border = np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]])
    color = np.median(border, axis=0)
    return min(
        BACKGROUNDS, key=lambda name: float(np.sum((np.array(BACKGROUNDS[name]) - color) ** 2))
    )


def _object_spans(match: re.Match[str], seen: list[SeenObject]) -> list[Span]:
    start = match.start(1)
    words = {
        w.group(): (start + w.start(), start + w.end()) for w in _WORD.finditer(match.group(1))
    }
    row, column = PLACES[match.group(2)]
    here = [o for o in seen if (o.row, o.column) == (row, column)]
    if not here:
        return [match.span(2)]
    obj = here[0]
    return [span for word, span in words.items() if _contradicts(word, obj)]


def _contradicts(word: str, obj: SeenObject) -> bool:
    """Whether a description word states something the seen object is not."""
    if word in KINDS:
        return word != obj.kind
    if word in COLORS:
        return word != obj.color
    if word in ("small", "large"):
        return word != obj.size
    if word in ("solid", "outlined"):
        return (word == "outlined") != (obj.state == "outlined")
    if word in ("striped", "dotted"):
        return word != obj.pattern
    return False


def _relation_span(match: re.Match[str], seen: list[SeenObject]) -> list[Span]:
    color_a, kind_a, relation, color_b, kind_b = match.groups()
    a = [o for o in seen if (o.color, o.kind) == (color_a, kind_a)]
    b = [o for o in seen if (o.color, o.kind) == (color_b, kind_b)]
    if len(a) != 1 or len(b) != 1:
        return []
    (one,), (other,) = a, b
    holds = {
        "to the left of": COLUMNS.index(one.column) < COLUMNS.index(other.column),
        "to the right of": COLUMNS.index(one.column) > COLUMNS.index(other.column),
        "above": ROWS.index(one.row) < ROWS.index(other.row),
        "below": ROWS.index(one.row) > ROWS.index(other.row),
    }[relation]
    return [] if holds else [match.span(3)]


def wrong_spans(image: np.ndarray, caption: str) -> list[Span]:
    seen = perceive(image)
    spans: list[Span] = []
    for match in _INTRO.finditer(caption):
        if WORD_NUMBERS.get(match.group(1)) != len(seen):
            spans.append(match.span(1))
        if match.group(2) != _background_name(image):
            spans.append(match.span(2))
    for match in _OBJECT.finditer(caption):
        spans.extend(_object_spans(match, seen))
    for match in _RELATION.finditer(caption):
        spans.extend(_relation_span(match, seen))
    return sorted(set(spans))


def answer_detailverify(image: np.ndarray, caption: str) -> str:
    """``<result>…</result>`` with the caption tagged, or ``NO HALLUCINATION``."""
    spans = wrong_spans(image, caption)
    if not spans:
        return "<result>NO HALLUCINATION</result>"
    pieces, position = [], 0
    for start, end in spans:
        pieces += [
            caption[position:start],
            "<HALLUCINATION>",
            caption[start:end],
            "</HALLUCINATION>",
        ]
        position = end
    pieces.append(caption[position:])
    return "<result>" + "".join(pieces) + "</result>"
