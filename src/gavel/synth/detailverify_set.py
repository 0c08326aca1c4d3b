"""``gavel synth --benchmark detailverify``: long descriptions with injected hallucinated words.

Writes ``real_test.jsonl`` in the official DetailVerifyBench ``real_test`` layout (gold spans in
``description_tag`` as ``<Hallucination>…</Hallucination>``, ``GT_description``, ``Modify``,
``hallucination_labels`` with the official category names) and the scene images.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from gavel.synth.description import (
    WRONG_BACKGROUNDS,
    Sentence,
    describe,
    render,
    replace_segment,
)
from gavel.synth.difficulty import DIFFICULTIES
from gavel.synth.render import render as render_image
from gavel.synth.scenes import Scene, sample_scene
from gavel.synth.vocabulary import COLORS, KINDS, NUMBER_WORDS, PLACES, place_phrase

#: The official category of each kind of fact a wrong word can state.
LABELS = {
    "count": "Object Number Hallucination",
    "background": "Scene Hallucination",
    "color": "Object Color Hallucination",
    "kind": "Object Shape Hallucination",
    "size": "Other Hallucination",
    "state": "Other Hallucination",
    "pattern": "Other Hallucination",
    "place": "Spatial Relation Hallucination",
    "relation": "Spatial Relation Hallucination",
}
OPPOSITE = {
    "to the left of": "to the right of",
    "to the right of": "to the left of",
    "above": "below",
    "below": "above",
    "small": "large",
    "large": "small",
    "solid": "outlined",
    "outlined": "solid",
    "striped": "dotted",
    "dotted": "striped",
}
DEFAULT_CLEAN_SHARE = 0.2


def _wrong_value(fact: str, text: str, sentence: Sentence, scene: Scene, rng) -> str | None:
    """A value for ``fact`` that makes the sentence false without making it ambiguous."""
    present = {(o.color, o.kind) for o in scene.objects}
    said = {s.fact: s.text for s in sentence if s.fact}
    options: list[str] = []
    if fact == "count":
        n = len(scene.objects)
        options = [NUMBER_WORDS[m] for m in (n - 2, n - 1, n + 1, n + 2) if m in NUMBER_WORDS]
    elif fact == "background":
        options = list(WRONG_BACKGROUNDS)
    elif fact == "color":
        options = [c for c in COLORS if (c, said["kind"]) not in present]
    elif fact == "kind":
        options = [k for k in KINDS if (said["color"], k) not in present]
    elif fact == "place":
        taken = {place_phrase(o.row, o.column) for o in scene.objects}
        options = [p for p in PLACES if p not in taken]
    elif fact == "state" and "pattern" in said:
        options = []  # "outlined" next to "striped" would contradict itself in the text alone
    elif text in OPPOSITE:
        options = [OPPOSITE[text]]
    if not options:
        return None
    return options[int(rng.integers(len(options)))]


def inject(sentences: list[Sentence], scene: Scene, k: int, rng) -> list[Sentence]:
    """Replace one fact in each of ``k`` different sentences with a wrong value."""
    out = list(sentences)
    candidates = [
        (i, j)
        for i, sentence in enumerate(out)
        for j, segment in enumerate(sentence)
        if segment.fact
    ]
    used: set[int] = set()
    for position in rng.permutation(len(candidates)):
        i, j = candidates[int(position)]
        if i in used:
            continue
        segment = out[i][j]
        wrong = _wrong_value(segment.fact, segment.text, out[i], scene, rng)  # type: ignore[arg-type]
        if wrong is None:
            continue
        out[i] = replace_segment(out[i], j, wrong, LABELS[segment.fact])  # type: ignore[index]
        used.add(i)
        if len(used) == k:
            break
    return out


def make_record(index: int, seed: int, difficulty: str, clean: bool, out: Path) -> dict:
    level = DIFFICULTIES[difficulty]
    rng = np.random.default_rng([seed, index])
    scene = sample_scene(rng, level)
    truth = describe(scene, rng)
    told = truth if clean else inject(truth, scene, int(rng.integers(1, 4)), rng)
    filename = f"dvs-{index:05d}.png"
    render_image(scene, level, rng).save(out / "images" / filename, compress_level=1)
    labels = [
        {"text": s.text, "labels": [s.label]}
        for sentence in told
        for s in sentence
        if s.hallucinated
    ]
    return {
        "image": f"images/{filename}",
        "filename": filename,
        "category": "Synthetic",
        "Pre-recognition": "",
        "GT_description": render(truth),
        "Modify": "No" if not labels else "Yes",
        "prompt": "",
        "modelname": f"gavel-synth/{difficulty}",
        "description_tag": render(told, tag="Hallucination"),
        "hallucination_labels": labels,
    }


def generate_detailverify(
    out: Path,
    n: int,
    seed: int,
    difficulty: str = "medium",
    clean_share: float = DEFAULT_CLEAN_SHARE,
    progress=None,
) -> Path:
    """Write ``out/real_test.jsonl`` and ``out/images/``; byte-identical for the same arguments."""
    (out / "images").mkdir(parents=True, exist_ok=True)
    n_clean = round(n * clean_share)
    clean_at = {round(j * n / n_clean) for j in range(n_clean)} if n_clean else set()
    path = out / "real_test.jsonl"
    with path.open("w") as handle:
        for index in range(n):
            record = make_record(index, seed, difficulty, index in clean_at, out)
            handle.write(json.dumps(record) + "\n")
            if progress:
                progress()
    return path
