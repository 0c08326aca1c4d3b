"""The built-in model's GAVEL answer: compare each claim of the caption with what it sees.

The answer is the JSON a VLM is asked for (verdict, explanation, boxes in pixels of the image
as given), so it goes through the same parser and scorer as any model's output.
"""

from __future__ import annotations

import json

import numpy as np

from gavel.models.scene.grammar import CountClaim, ObjectClaim, parse_caption
from gavel.models.scene.perceive import SeenObject, perceive
from gavel.synth.captions import plural
from gavel.synth.vocabulary import NUMBER_WORDS

Finding = tuple[str, list[SeenObject]]


def check_count(claim: CountClaim, seen: list[SeenObject]) -> Finding | None:
    matches = [o for o in seen if o.color == claim.color and o.kind == claim.kind]
    if len(matches) == claim.count:
        return None
    said = NUMBER_WORDS.get(claim.count, str(claim.count))
    real = NUMBER_WORDS.get(len(matches), "none" if not matches else str(len(matches)))
    noun = claim.kind if claim.count == 1 else plural(claim.kind)
    verb = "is" if claim.count == 1 else "are"
    return (
        f"The caption says there {verb} {said} {claim.color} {noun}, but I see {real}.",
        matches,
    )


def check_object(claim: ObjectClaim, seen: list[SeenObject]) -> Finding | None:
    here = [o for o in seen if (o.row, o.column) == (claim.row, claim.column)]
    if not here:
        elsewhere = [o for o in seen if o.color == claim.color and o.kind == claim.kind]
        if elsewhere:
            other = elsewhere[0]
            return (
                f"The caption says the {claim.color} {claim.kind} is {claim.place}, "
                f"but it is in the {other.row} {other.column} part of the image.",
                [other],
            )
        return (f"There is no {claim.color} {claim.kind} {claim.place}.", [])
    obj = here[0]
    where = f"the {obj.color} {obj.kind} {claim.place}"
    if obj.kind != claim.kind:
        return (
            f"The caption says there is a {claim.color} {claim.kind} {claim.place}, "
            f"but the object there is a {obj.kind}.",
            [obj],
        )
    if obj.color != claim.color:
        return (
            f"The caption says the {claim.kind} {claim.place} is {claim.color}, "
            f"but it is {obj.color}.",
            [obj],
        )
    if claim.size and claim.size != obj.size:
        return (f"The caption says {where} is {claim.size}, but it is {obj.size}.", [obj])
    if claim.state and claim.state != obj.state:
        said = "only outlined" if claim.state == "outlined" else "solid"
        real = "only outlined" if obj.state == "outlined" else "solid"
        return (f"The caption says {where} is {said}, but it is {real}.", [obj])
    if claim.pattern and claim.pattern != obj.pattern:
        return (f"The caption says {where} is {claim.pattern}, but it is {obj.pattern}.", [obj])
    return None


def answer_gavel(image: np.ndarray, caption: str) -> str:
    """A JSON answer: {"hallucination", "explanation", "boxes"} with pixel boxes."""
    claims = parse_caption(caption)
    if claims is None:
        return "I cannot read this caption."
    seen = perceive(image)
    for claim in claims:
        check = check_count if isinstance(claim, CountClaim) else check_object
        finding = check(claim, seen)  # type: ignore[arg-type]
        if finding is not None:
            explanation, objects = finding
            boxes = [[round(v, 1) for v in o.box] for o in objects]
            return json.dumps({"hallucination": True, "explanation": explanation, "boxes": boxes})
    return json.dumps(
        {"hallucination": False, "explanation": "The caption matches the image.", "boxes": []}
    )
