"""``gavel synth --benchmark videohallucer``: paired yes/no questions about synthetic videos.

Writes the official VideoHallucer layout: ``{category}/{category}.json`` (a list of pairs, each
with ``basic`` and ``hallucination`` holding ``video``, ``question``, ``answer``, and a pair
``type``) and the videos in ``{category}/videos/``. Categories and pair types:

- object_relation: ``subject`` / ``object`` (is an object there?) and ``relation`` (left/right);
- temporal: ``temporal_absolute`` (beginning/end), ``temporal_relative`` (before/after) and
  ``color_change`` (from one colour to another);
- semantic_detail: the same question about two videos that differ in one detail (a colour).

``videos.jsonl`` describes every track of every video (for checking the answers independently;
the built-in model never reads it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from gavel.synth.difficulty import DIFFICULTIES, Difficulty
from gavel.synth.video import HEIGHT, WIDTH, Track, Video, write_video
from gavel.synth.vocabulary import COLORS, KINDS

CATEGORIES = ("object_relation", "temporal", "semantic_detail")
TYPES = {
    "object_relation": ("subject", "object", "relation"),
    "temporal": ("temporal_absolute", "temporal_relative", "color_change"),
    "semantic_detail": ("semantic_detail",),
}


def _pairs_of(rng: np.random.Generator, k: int) -> list[tuple[str, str]]:
    """``k`` distinct (colour, kind) pairs."""
    every = [(c, kind) for c in COLORS for kind in KINDS]
    return [every[int(i)] for i in rng.permutation(len(every))[:k]]


def _absent(rng: np.random.Generator, present: list[tuple[str, str]]) -> tuple[str, str]:
    """A (colour, kind) not in the video; it shares the colour or the kind with one that is, so
    the question is about a plausible confusion rather than something unrelated."""
    anchor = present[int(rng.integers(len(present)))]
    options = [(c, anchor[1]) for c in COLORS] + [(anchor[0], k) for k in KINDS]
    options = [o for o in options if o not in present]
    return options[int(rng.integers(len(options)))]


def _track(
    rng, difficulty: Difficulty, color: str, kind: str, x: float, y: float, start=0.0, end=99.0
):
    short = min(WIDTH, HEIGHT)
    small = rng.random() < difficulty.small_share
    side = float(rng.uniform(0.11, 0.14) if small else rng.uniform(0.2, 0.26)) * short
    drift = float(rng.uniform(-0.08, 0.08)) * WIDTH, float(rng.uniform(-0.06, 0.06)) * HEIGHT
    close = difficulty.close_colors and rng.random() < 0.5
    return Track(
        kind, color, side, (x, y), (x + drift[0], y + drift[1]), start, end, close_color=close
    )


def _spots(rng: np.random.Generator, k: int) -> list[tuple[float, float]]:
    """Centres in distinct cells of a 3x3 grid, so shapes never overlap."""
    cells = rng.permutation(9)[:k]
    return [((int(c) % 3 + 0.5) * WIDTH / 3, (int(c) // 3 + 0.5) * HEIGHT / 3) for c in cells]


def _question(color: str, kind: str) -> str:
    return f"Is there a {color} {kind} in the video?"


Pair = tuple[dict, dict, str, list[tuple[str, Video]]]


def _pair(kind: str, true_question: str, false_question: str, video: Video) -> Pair:
    """A pair about one video: the basic question's answer is yes, the hallucinated one's no."""
    return (
        {"question": true_question, "answer": "yes"},
        {"question": false_question, "answer": "no"},
        kind,
        [("", video)],
    )


def presence_pair(rng, difficulty, which: str) -> Pair:
    duration = float(rng.uniform(2, 6))
    present = _pairs_of(rng, int(rng.integers(2, 4)))
    tracks = tuple(
        _track(rng, difficulty, c, k, *xy)
        for (c, k), xy in zip(present, _spots(rng, len(present)), strict=True)
    )
    target = present[0] if which == "subject" else present[1]
    missing = _absent(rng, present)
    video = Video(duration, tracks)
    return _pair(which, _question(*target), _question(*missing), video)


def relation_pair(rng, difficulty) -> Pair:
    duration = float(rng.uniform(2, 6))
    (a, b) = _pairs_of(rng, 2)
    row = int(rng.integers(3))
    y = (row + 0.5) * HEIGHT / 3
    left, right = sorted(rng.permutation(3)[:2])
    xa, xb = (left + 0.5) * WIDTH / 3, (right + 0.5) * WIDTH / 3
    if rng.random() < 0.5:
        xa, xb = xb, xa
    tracks = (_track(rng, difficulty, *a, xa, y), _track(rng, difficulty, *b, xb, y))
    tracks = tuple(replace(t, end_xy=(t.start_xy[0], t.end_xy[1])) for t in tracks)  # no crossing
    truth, lie = (
        ("to the left of", "to the right of") if xa < xb else ("to the right of", "to the left of")
    )
    return _pair(
        "relation",
        f"Is the {a[0]} {a[1]} {truth} the {b[0]} {b[1]}?",
        f"Is the {a[0]} {a[1]} {lie} the {b[0]} {b[1]}?",
        Video(duration, tracks),
    )


def absolute_pair(rng, difficulty) -> Pair:
    duration = float(rng.uniform(3, 6))
    (a, b) = _pairs_of(rng, 2)
    spots = _spots(rng, 2)
    early = rng.random() < 0.5
    start, end = (0.0, 0.35 * duration) if early else (0.65 * duration, 99.0)
    tracks = (
        _track(rng, difficulty, *a, *spots[0], start, end),
        _track(rng, difficulty, *b, *spots[1]),
    )
    truth, lie = ("beginning", "end") if early else ("end", "beginning")
    return _pair(
        "temporal_absolute",
        f"Does the {a[0]} {a[1]} appear at the {truth} of the video?",
        f"Does the {a[0]} {a[1]} appear at the {lie} of the video?",
        Video(duration, tracks),
    )


def relative_pair(rng, difficulty) -> Pair:
    duration = float(rng.uniform(3, 6))
    (a, b) = _pairs_of(rng, 2)
    spots = _spots(rng, 2)
    tracks = (
        _track(rng, difficulty, *a, *spots[0], 0.1 * duration),
        _track(rng, difficulty, *b, *spots[1], 0.55 * duration),
    )
    return _pair(
        "temporal_relative",
        f"Does the {a[0]} {a[1]} appear before the {b[0]} {b[1]}?",
        f"Does the {b[0]} {b[1]} appear before the {a[0]} {a[1]}?",
        Video(duration, tracks),
    )


def change_pair(rng, difficulty) -> Pair:
    duration = float(rng.uniform(3, 6))
    (a, b) = _pairs_of(rng, 2)
    while b[1] == a[1]:
        (b,) = _pairs_of(rng, 1)
    after = [c for c in COLORS if c != a[0]][int(rng.integers(len(COLORS) - 1))]
    spots = _spots(rng, 2)
    first = replace(_track(rng, difficulty, *a, *spots[0]), recolor=(0.5 * duration, after))
    tracks = (first, _track(rng, difficulty, *b, *spots[1]))
    return _pair(
        "color_change",
        f"Does the {a[1]} change from {a[0]} to {after}?",
        f"Does the {a[1]} change from {after} to {a[0]}?",
        Video(duration, tracks),
    )


def semantic_pair(rng, difficulty) -> Pair:
    """Two videos, one detail apart: the same question is true of one and false of the other."""
    duration = float(rng.uniform(2, 6))
    present = _pairs_of(rng, int(rng.integers(2, 4)))
    tracks = [
        _track(rng, difficulty, c, k, *xy)
        for (c, k), xy in zip(present, _spots(rng, len(present)), strict=True)
    ]
    target = present[0]
    changed = [c for c in COLORS if (c, target[1]) not in present]
    other = changed[int(rng.integers(len(changed)))]
    variant = [replace(tracks[0], color=other), *tracks[1:]]
    question = _question(*target)
    true, false = ("_a", "_b") if rng.random() < 0.5 else ("_b", "_a")
    videos = [(true, Video(duration, tuple(tracks))), (false, Video(duration, tuple(variant)))]
    return (
        {"question": question, "answer": "yes", "_video": true},
        {"question": question, "answer": "no", "_video": false},
        "semantic_detail",
        videos,
    )


BUILDERS: dict[str, Callable[..., Pair]] = {
    "subject": lambda rng, d: presence_pair(rng, d, "subject"),
    "object": lambda rng, d: presence_pair(rng, d, "object"),
    "relation": relation_pair,
    "temporal_absolute": absolute_pair,
    "temporal_relative": relative_pair,
    "color_change": change_pair,
    "semantic_detail": semantic_pair,
}


def generate_videohallucer(
    out: Path, n: int, seed: int, difficulty: str = "medium", progress=None
) -> Path:
    """Write ``n`` pairs spread over the three categories; returns the folder."""
    level = DIFFICULTIES[difficulty]
    pairs: dict[str, list[dict]] = {c: [] for c in CATEGORIES}
    out.mkdir(parents=True, exist_ok=True)
    sidecar = (out / "videos.jsonl").open("w")
    for index in range(n):
        category = CATEGORIES[index % len(CATEGORIES)]
        number = len(pairs[category])
        pair_type = TYPES[category][number % len(TYPES[category])]
        rng = np.random.default_rng([seed, index])
        basic, hallucination, kind, videos = BUILDERS[pair_type](rng, level)
        names = {}
        for suffix, video in videos:
            name = f"{category}_{number:04d}{suffix}.mp4"
            write_video(video, out / category / "videos" / name, level, rng)
            names[suffix] = name
            sidecar.write(json.dumps({"video": name, **asdict(video)}) + "\n")
        for question in (basic, hallucination):
            question["video"] = names[question.pop("_video", "")]
        pairs[category].append({"basic": basic, "hallucination": hallucination, "type": kind})
        if progress:
            progress()
    sidecar.close()
    for category, items in pairs.items():
        if not items:
            continue  # with fewer pairs than categories, a category may get none
        (out / category).mkdir(parents=True, exist_ok=True)
        ordered = [
            {
                "basic": _ordered(p["basic"]),
                "hallucination": _ordered(p["hallucination"]),
                "type": p["type"],
            }
            for p in items
        ]
        (out / category / f"{category}.json").write_text(json.dumps(ordered, indent=4) + "\n")
    return out


def _ordered(question: dict) -> dict:
    return {
        "video": question["video"],
        "question": question["question"],
        "answer": question["answer"],
    }
