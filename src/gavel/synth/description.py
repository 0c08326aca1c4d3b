"""Long descriptions of synthetic scenes, as sentences of tagged segments.

A description is a list of sentences; a sentence is a list of :class:`Segment` s. A segment that
states a checkable fact carries the kind of fact (``color``, ``kind``, ``place``, …). Injecting a
hallucination replaces the text of one such segment with a wrong value and marks it, so the
tagged and untagged captions are produced from the same segments and can never drift apart.

The same sentence shapes are what the built-in model parses back (``models/scene/describe.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gavel.synth.scenes import Scene, SceneObject
from gavel.synth.vocabulary import COLUMNS, NUMBER_WORDS, ROWS, SIZE_WORDS, place_phrase

#: How the background is described, and the wrong descriptions a Scene error may use.
BACKGROUND_WORD = "light gray"
WRONG_BACKGROUNDS = ("dark blue", "pale yellow", "black", "deep green")

#: Sentences with no checkable fact, appended until a description is long enough.
FILLERS = (
    "All of the shapes are drawn with clean edges and flat colors.",
    "There is no text, no frame and no shadow anywhere in the picture.",
    "The shapes do not touch each other, and each one stands on its own.",
    "The composition looks like a simple diagram made for a counting exercise.",
    "The lighting is even across the whole image, with no visible gradient.",
    "Nothing else is visible apart from the shapes described here.",
    "The spacing between the shapes leaves large areas of the canvas empty.",
    "The picture is viewed straight on, without any perspective distortion.",
    "The outlines are sharp enough that every corner and curve can be followed easily.",
    "No part of any shape is cut off by the border of the image.",
    "The background is uniform, without any texture, pattern or noise of its own.",
    "The scene has the tidy, abstract look of a puzzle or a test illustration.",
    "Each shape is drawn in a single color, apart from any white pattern inside it.",
    "The arrangement does not follow any obvious order or symmetry.",
    "No shape is rotated in an unusual way; all of them stand upright.",
    "The image contains no people, animals, furniture or landscape of any kind.",
)
MIN_WORDS = 150
MAX_RELATIONS = 3


@dataclass(frozen=True)
class Segment:
    text: str
    fact: str | None = None  # which fact the words state; None for plain words
    hallucinated: bool = False
    label: str | None = None  # the hallucination category when hallucinated


Sentence = list[Segment]


def object_sentence(obj: SceneObject, variant: int) -> Sentence:
    """ "There is one large solid red striped circle in the top left." (or "One … sits …")."""
    words: Sentence = []
    if SIZE_WORDS[obj.size]:
        words.append(Segment(SIZE_WORDS[obj.size], "size"))
    words.append(Segment("outlined" if obj.state == "outlined" else "solid", "state"))
    words.append(Segment(obj.color, "color"))
    if obj.pattern != "plain":
        words.append(Segment(obj.pattern, "pattern"))
    words.append(Segment(obj.kind, "kind"))
    place = Segment(place_phrase(obj.row, obj.column), "place")
    if variant == 0:
        return [Segment("There is one"), *words, place, Segment(".")]
    return [Segment("One"), *words, Segment("sits"), place, Segment(".")]


def relation_sentence(a: SceneObject, b: SceneObject) -> Sentence | None:
    """ "The red circle is to the left of the blue star." for objects in one row or column."""
    if a.row == b.row:
        relation = (
            "to the left of"
            if COLUMNS.index(a.column) < COLUMNS.index(b.column)
            else "to the right of"
        )
    elif a.column == b.column:
        relation = "above" if ROWS.index(a.row) < ROWS.index(b.row) else "below"
    else:
        return None
    return [
        Segment(f"The {a.color} {a.kind} is"),
        Segment(relation, "relation"),
        Segment(f"the {b.color} {b.kind} ."),
    ]


def describe(scene: Scene, rng: np.random.Generator) -> list[Sentence]:
    """A correct description of 150 words or more."""
    count = len(scene.objects)
    sentences: list[Sentence] = [
        [
            Segment("The image shows"),
            Segment(NUMBER_WORDS.get(count, str(count)), "count"),
            Segment("flat shapes on a"),
            Segment(BACKGROUND_WORD, "background"),
            Segment("background ."),
        ]
    ]
    order = [scene.objects[int(i)] for i in rng.permutation(count)]
    for index, obj in enumerate(order):
        sentences.append(object_sentence(obj, index % 2))
    relations = [
        sentence
        for i, a in enumerate(order)
        for b in order[i + 1 :]
        if (sentence := relation_sentence(a, b)) is not None
    ]
    for index in rng.permutation(len(relations))[:MAX_RELATIONS]:
        sentences.append(relations[int(index)])
    fillers = list(FILLERS)
    while words_in(sentences) < MIN_WORDS and fillers:
        sentences.append([Segment(fillers.pop(int(rng.integers(len(fillers)))))])
    return sentences


def words_in(sentences: list[Sentence]) -> int:
    return len(render(sentences).split())


def render(sentences: list[Sentence], tag: str | None = None) -> str:
    """The description as text; with ``tag``, hallucinated segments are wrapped in it."""
    parts = []
    for sentence in sentences:
        pieces = []
        for segment in sentence:
            text = segment.text
            if tag and segment.hallucinated:
                text = f"<{tag}>{text}</{tag}>"
            pieces.append(text)
        parts.append(" ".join(pieces).replace(" .", "."))
    return " ".join(parts)


def replace_segment(sentence: Sentence, index: int, text: str, label: str) -> Sentence:
    out = list(sentence)
    out[index] = replace(out[index], text=text, hallucinated=True, label=label)
    return out
