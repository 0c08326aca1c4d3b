"""Reading a synthetic caption back into claims, with the grammar it was written in."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gavel.synth.vocabulary import COLORS, KINDS, PLACES, WORD_NUMBERS


@dataclass(frozen=True)
class ObjectClaim:
    kind: str
    color: str
    size: str | None  # "small" / "large"; None when not said
    pattern: str | None  # "striped" / "dotted" / "plain"; None when not said
    state: str | None  # "outlined" / "filled"; None when not said
    row: str
    column: str
    place: str


@dataclass(frozen=True)
class CountClaim:
    color: str
    kind: str
    count: int


_COUNT = re.compile(r"^there (?:is|are) (\w+) (\w+) (\w+)$")
_OBJECT = re.compile(r"^an? (.+) is (.+)$")


def singular(noun: str) -> str:
    for kind in KINDS:
        if noun in (kind, kind + "s", kind + "es"):
            return kind
    return noun


def _object(words: list[str], place: str) -> ObjectClaim | None:
    if place not in PLACES or not words or words[-1] not in KINDS:
        return None
    said = set(words[:-1])
    colors = said & set(COLORS)
    if len(colors) != 1:
        return None
    row, column = PLACES[place]
    return ObjectClaim(
        kind=words[-1],
        color=colors.pop(),
        size=next((w for w in ("small", "large") if w in said), None),
        pattern=next((w for w in ("striped", "dotted", "plain") if w in said), None),
        state="outlined" if "outlined" in said else ("filled" if "solid" in said else None),
        row=row,
        column=column,
        place=place,
    )


def parse_caption(caption: str) -> list[ObjectClaim | CountClaim] | None:
    """The claims of a caption, or None when it is not in the synthetic grammar."""
    text = " ".join(caption.strip().rstrip(".").lower().split())
    claims: list[ObjectClaim | CountClaim] = []
    for clause in re.split(r", and |, ", text):
        if match := _COUNT.match(clause):
            number, color, noun = match.groups()
            if number not in WORD_NUMBERS or color not in COLORS or singular(noun) not in KINDS:
                return None
            claims.append(CountClaim(color, singular(noun), WORD_NUMBERS[number]))
        elif match := _OBJECT.match(clause):
            claim = _object(match.group(1).split(), match.group(2))
            if claim is None:
                return None
            claims.append(claim)
        else:
            return None
    return claims
