"""The built-in model's VideoHallucer answer: yes or no, from what it sees frame by frame.

Every frame is decoded and perceived on its own; the question (read with the grammar it was
written in) is then answered from the timeline of detections: when each (colour, kind) is
visible and where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from gavel.media.frames import FrameSampling, sample_frames
from gavel.models.scene.perceive import perceive

_PRESENCE = re.compile(r"^is there an? (\w+) (\w+) in the video\?$")
_RELATION = re.compile(r"^is the (\w+) (\w+) (to the left of|to the right of) the (\w+) (\w+)\?$")
_ABSOLUTE = re.compile(r"^does the (\w+) (\w+) appear at the (beginning|end) of the video\?$")
_RELATIVE = re.compile(r"^does the (\w+) (\w+) appear before the (\w+) (\w+)\?$")
_CHANGE = re.compile(r"^does the (\w+) change from (\w+) to (\w+)\?$")

#: A detection must hold in this many frames to count (one-frame flickers are noise).
MIN_FRAMES = 2
#: Share of the video that counts as its beginning or its end.
EDGE = 0.25


@dataclass(frozen=True)
class Detection:
    frame: int
    color: str
    kind: str
    center_x: float


#: The scene model reads the video at up to 8 frames per second (every frame of gavel's videos).
SAMPLING = FrameSampling(mode="fps", fps=8.0, max_frames=64)


@lru_cache(maxsize=8)
def timeline(path: str) -> tuple[int, tuple[Detection, ...]]:
    """(number of frames read, every detection); cached for the pair's second question."""
    frames = sample_frames(path, SAMPLING)
    detections = []
    for index, image in enumerate(frames.images):
        for seen in perceive(image):
            x1, _, x2, _ = seen.box
            detections.append(Detection(index, seen.color, seen.kind, (x1 + x2) / 2))
    return len(frames.images), tuple(detections)


def _frames(detections, color: str | None, kind: str) -> list[int]:
    return sorted(
        {d.frame for d in detections if d.kind == kind and (color is None or d.color == color)}
    )


def answer_question(video: Path, question: str) -> str:
    """ "Yes." or "No." (or a refusal when the question is not in the grammar)."""
    count, detections = timeline(str(video))
    text = " ".join(question.strip().lower().split())
    verdict: bool | None = None
    if match := _PRESENCE.match(text):
        verdict = len(_frames(detections, *match.groups())) >= MIN_FRAMES
    elif match := _RELATION.match(text):
        color_a, kind_a, relation, color_b, kind_b = match.groups()
        xa = {d.frame: d.center_x for d in detections if (d.color, d.kind) == (color_a, kind_a)}
        xb = {d.frame: d.center_x for d in detections if (d.color, d.kind) == (color_b, kind_b)}
        shared = sorted(set(xa) & set(xb))
        left = sum(xa[f] < xb[f] for f in shared)
        verdict = bool(shared) and (left * 2 > len(shared)) == (relation == "to the left of")
    elif match := _ABSOLUTE.match(text):
        color, kind, edge = match.groups()
        frames = _frames(detections, color, kind)
        cut = max(1, round(EDGE * count))
        window = range(cut) if edge == "beginning" else range(count - cut, count)
        verdict = sum(f in window for f in frames) >= MIN_FRAMES
    elif match := _RELATIVE.match(text):
        color_a, kind_a, color_b, kind_b = match.groups()
        a, b = _frames(detections, color_a, kind_a), _frames(detections, color_b, kind_b)
        verdict = bool(a) and (not b or a[0] < b[0])
    elif match := _CHANGE.match(text):
        kind, before, after = match.groups()
        first, second = _frames(detections, before, kind), _frames(detections, after, kind)
        verdict = (
            len(first) >= MIN_FRAMES
            and len(second) >= MIN_FRAMES
            and bool(np.median(first) < np.median(second))
        )
    if verdict is None:
        return "I cannot tell from this video."
    return "Yes." if verdict else "No."
