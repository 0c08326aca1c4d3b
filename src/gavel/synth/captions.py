"""Captions for synthetic scenes, with one injected error of a chosen category.

A caption describes one to three objects completely (size word, state, colour, pattern, kind,
place) or counts a group ("There are three red circles."). A description is written so that it
picks out exactly one object: outside a counted group, no two objects share colour and kind,
and there is one object per grid cell. An error changes exactly one claim, and the gold boxes
are those of the object(s) the wrong claim is about.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gavel.synth.scenes import Scene, SceneObject
from gavel.synth.vocabulary import (
    COLORS,
    KINDS,
    NUMBER_WORDS,
    PLACES,
    SIZE_WORDS,
    place_phrase,
)


@dataclass(frozen=True)
class Claim:
    """What a caption says about one object (the words that will be written)."""

    kind: str
    color: str
    size_word: str  # "small", "large" or ""
    pattern_word: str  # "striped", "dotted", "plain" or ""
    state_word: str  # "outlined", "solid" or ""
    place: str  # e.g. "in the top left"


@dataclass(frozen=True)
class CountClaim:
    color: str
    kind: str
    count: int


@dataclass
class Caption:
    text: str
    category: str | None
    explanation: str
    boxes: list[tuple[float, float, float, float]]
    #: The injected error's words as the explanation writes them: what the caption wrongly
    #: says (``claim``) and what the image shows (``truth``); None for a clean caption. They let
    #: a rule-based reference check whether an explanation names the error (gavel.judge).
    claim: str | None = None
    truth: str | None = None

    def error_record(self) -> dict[str, str] | None:
        """``{"category", "claim", "truth"}`` for scenes.jsonl; None for a clean caption."""
        if self.category is None:
            return None
        return {"category": self.category, "claim": self.claim or "", "truth": self.truth or ""}


@dataclass(frozen=True)
class Injected:
    """A claim made wrong in one detail: the new claim, the explanation, and the error's words
    (``said``: the wrong word or phrase now in the caption; ``truth``: the right one)."""

    claim: Claim
    explanation: str
    said: str
    truth: str


def plural(kind: str) -> str:
    return kind + ("es" if kind.endswith("s") else "s")


def article(phrase: str) -> str:
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


def noun_phrase(claim: Claim) -> str:
    """ "large outlined red circle": every word of the description, no article."""
    words = [claim.size_word, claim.state_word, claim.color, claim.pattern_word, claim.kind]
    return " ".join(w for w in words if w)


def phrase(claim: Claim) -> str:
    return article(noun_phrase(claim))


def truthful_claim(obj: SceneObject, rng: np.random.Generator) -> Claim:
    """A correct description; optional words ("solid", "plain") appear at random so that their
    presence in a caption says nothing about whether it is wrong."""
    state_word = "outlined" if obj.state == "outlined" else ("solid" if rng.random() < 0.4 else "")
    if obj.pattern == "plain":
        pattern_word = "plain" if obj.state == "filled" and rng.random() < 0.3 else ""
    else:
        pattern_word = obj.pattern
    return Claim(
        kind=obj.kind,
        color=obj.color,
        size_word=SIZE_WORDS[obj.size],
        pattern_word=pattern_word,
        state_word=state_word,
        place=place_phrase(obj.row, obj.column),
    )


def sentence(claims: list[Claim], count: CountClaim | None = None) -> str:
    parts = [f"{phrase(c)} is {c.place}" for c in claims]
    if count is not None:
        noun = count.kind if count.count == 1 else plural(count.kind)
        verb = "is" if count.count == 1 else "are"
        head = f"there {verb} {NUMBER_WORDS[count.count]} {count.color} {noun}"
        parts = [head, *parts]
    if len(parts) == 1:
        text = parts[0]
    elif len(parts) == 2:
        text = f"{parts[0]}, and {parts[1]}"
    else:
        text = ", ".join(parts[:-1]) + f", and {parts[-1]}"
    return text[0].upper() + text[1:] + "."


def _other(rng: np.random.Generator, options, current):
    choices = [o for o in options if o != current]
    return choices[int(rng.integers(len(choices)))]


def inject(
    category: str, target: SceneObject, claim: Claim, scene: Scene, rng: np.random.Generator
) -> Injected | None:
    """The claim with one wrong detail of ``category``, the explanation and the error's words;
    None if impossible."""
    what = f"the {target.color} {target.kind} {claim.place}"
    # A wrong colour or kind must not name an object that exists elsewhere in the scene, or the
    # error could as well be read as a wrong place.
    present = {(o.color, o.kind) for o in scene.objects}
    if category == "Color":
        options = [c for c in COLORS if (c, target.kind) not in present]
        if not options:
            return None
        wrong = options[int(rng.integers(len(options)))]
        return Injected(
            replace(claim, color=wrong),
            f"The caption says the {target.kind} {claim.place} is {wrong}, but it is {target.color}.",
            wrong,
            target.color,
        )
    if category == "Obj":
        options = [k for k in KINDS if (target.color, k) not in present]
        if not options:
            return None
        wrong = options[int(rng.integers(len(options)))]
        return Injected(
            replace(claim, kind=wrong),
            f"The caption says there is a {target.color} {wrong} {claim.place}, "
            f"but the {target.color} object there is a {target.kind}.",
            wrong,
            target.kind,
        )
    if category == "Size":
        if target.size == "medium":
            return None
        wrong = "large" if target.size == "small" else "small"
        return Injected(
            replace(claim, size_word=wrong),
            f"The caption says {what} is {wrong}, but it is {target.size}.",
            wrong,
            target.size,
        )
    if category == "Attr":
        if target.state != "filled":
            return None
        wrong = _other(rng, ("striped", "dotted"), target.pattern)
        actual = "plain" if target.pattern == "plain" else target.pattern
        return Injected(
            replace(claim, pattern_word=wrong),
            f"The caption says {what} is {wrong}, but it is {actual}.",
            wrong,
            actual,
        )
    if category == "State":
        if target.state == "filled":
            return Injected(
                replace(claim, state_word="outlined"),
                f"The caption says {what} is only outlined, but it is solid.",
                "outlined",
                "solid",
            )
        return Injected(
            replace(claim, state_word="solid", pattern_word=""),
            f"The caption says {what} is solid, but it is only outlined.",
            "solid",
            "outlined",
        )
    if category == "Loc":
        occupied = {place_phrase(o.row, o.column) for o in scene.objects}
        free = [p for p in PLACES if p not in occupied]
        if not free:
            return None
        wrong = free[int(rng.integers(len(free)))]
        return Injected(
            replace(claim, place=wrong),
            f"The caption says the {noun_phrase(claim)} is {wrong}, but it is {claim.place}.",
            wrong,
            claim.place,
        )
    raise ValueError(f"unknown category {category}")
