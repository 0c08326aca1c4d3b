"""``gavel synth --benchmark gavel``: a GAVEL data set of procedural scenes with exact gold.

Each sample gets its own random stream ``default_rng([seed, index])``, so the same arguments give
byte-identical files and sample ``i`` does not depend on how many samples come before it.
Besides ``gavel.jsonl`` and ``images/``, ``scenes.jsonl`` records every object of every scene
(for checking the gold independently; the built-in model never reads it) and the injected error
as ``"error": {"category", "claim", "truth"}`` (null for a clean caption): the wrong word(s) the
caption now says and the true one(s), exactly as the explanation writes them ("red" / "blue",
"two" / "four", "in the top left" / "at the bottom"). The rule-based judge reference
(gavel.judge.reference) needs them to tell whether an explanation names the error.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from gavel.synth.captions import Caption, CountClaim, inject, plural, sentence, truthful_claim
from gavel.synth.difficulty import DIFFICULTIES, Difficulty
from gavel.synth.render import render
from gavel.synth.scenes import Scene, sample_scene
from gavel.synth.vocabulary import COLORS, GAVEL_CATEGORIES, KINDS, NUMBER_WORDS

CLEAN = "clean"
#: Share of clean samples, as in the paper's training split (7.3%).
DEFAULT_CLEAN_SHARE = 0.07


@dataclass
class SynthSample:
    scene: Scene
    caption: Caption


def _group(rng: np.random.Generator) -> tuple[str, str, int]:
    color = list(COLORS)[int(rng.integers(len(COLORS)))]
    kind = KINDS[int(rng.integers(len(KINDS)))]
    return color, kind, int(rng.integers(2, 5))


def make_sample(rng: np.random.Generator, category: str, difficulty: Difficulty) -> SynthSample:
    """One scene and a caption whose only error (if any) is of ``category``."""
    while True:
        wants_count = category == "Qty" or rng.random() < 0.3
        group = _group(rng) if wants_count else None
        scene = sample_scene(rng, difficulty, group)
        caption = _caption(rng, scene, category, group)
        if caption is not None:
            return SynthSample(scene, caption)


def _caption(rng, scene: Scene, category: str, group) -> Caption | None:
    k = group[2] if group else 0
    members, others = scene.objects[:k], scene.objects[k:]
    n_described = int(rng.integers(1, min(3, len(others)) + 1)) if others else 0
    if category == "Qty":
        n_described = min(n_described, 1)
    picks = [others[int(i)] for i in rng.permutation(len(others))[:n_described]]
    claims = [truthful_claim(o, rng) for o in picks]
    count = CountClaim(group[0], group[1], k) if group else None
    if not claims and count is None:
        return None

    if category == CLEAN:
        return Caption(sentence(claims, count), None, "The caption matches the image.", [])
    if category == "Qty":
        wrong = k + int(rng.choice([-2, -1, 1, 2]))
        if wrong < 1 or wrong > 6:
            return None
        color, kind = group[0], group[1]
        noun = plural(kind)
        return Caption(
            sentence(claims, CountClaim(color, kind, wrong)),
            "Qty",
            f"The caption says there {'is' if wrong == 1 else 'are'} {NUMBER_WORDS[wrong]} "
            f"{color} {kind if wrong == 1 else noun}, but there are {NUMBER_WORDS[k]}.",
            [o.box for o in members],
            claim=NUMBER_WORDS[wrong],
            truth=NUMBER_WORDS[k],
        )
    if not claims:
        return None
    index = int(rng.integers(len(claims)))
    injected = inject(category, picks[index], claims[index], scene, rng)
    if injected is None:
        return None
    claims[index] = injected.claim
    return Caption(
        sentence(claims, count),
        category,
        injected.explanation,
        [picks[index].box],
        claim=injected.said,
        truth=injected.truth,
    )


def category_plan(n: int, clean_share: float, weights: dict[str, float] | None) -> list[str]:
    """Which category each sample gets: the clean share first, the rest by weight, spread evenly."""
    weights = weights or dict.fromkeys(GAVEL_CATEGORIES, 1.0)
    n_clean = round(n * clean_share)
    total = sum(weights.values())
    quotas = {c: w / total * (n - n_clean) for c, w in weights.items()}
    plan: list[str] = []
    counts = dict.fromkeys(weights, 0)
    for _ in range(n - n_clean):
        # Largest remaining quota first: a deterministic, evenly interleaved order.
        category = max(weights, key=lambda c: quotas[c] - counts[c])
        counts[category] += 1
        plan.append(category)
    step = n / n_clean if n_clean else 0
    for j in range(n_clean):
        plan.insert(min(len(plan), round(j * step)), CLEAN)
    return plan


def _xywh(box) -> list[float]:
    x1, y1, x2, y2 = box
    return [round(x1, 2), round(y1, 2), round(x2 - x1, 2), round(y2 - y1, 2)]


def generate_gavel(
    out: Path,
    n: int,
    seed: int,
    difficulty: str = "medium",
    clean_share: float = DEFAULT_CLEAN_SHARE,
    weights: dict[str, float] | None = None,
    progress=None,
) -> Path:
    """Write ``out/gavel.jsonl``, ``out/images/*.png`` and ``out/scenes.jsonl``."""
    level = DIFFICULTIES[difficulty]
    (out / "images").mkdir(parents=True, exist_ok=True)
    plan = category_plan(n, clean_share, weights)
    with (out / "gavel.jsonl").open("w") as data, (out / "scenes.jsonl").open("w") as scenes:
        for index, category in enumerate(plan):
            rng = np.random.default_rng([seed, index])
            sample = make_sample(rng, category, level)
            sample_id = f"synth-{index:05d}"
            image = f"images/{sample_id}.png"
            render(sample.scene, level, rng).save(out / image, compress_level=1)
            caption = sample.caption
            record = {
                "id": sample_id,
                "image": image,
                "caption": caption.text,
                "hallucinated": caption.category is not None,
                "category": caption.category,
                "explanation": caption.explanation,
                "boxes": [_xywh(b) for b in caption.boxes],
                "width": sample.scene.width,
                "height": sample.scene.height,
                "source": f"gavel-synth/{difficulty}",
                "split": "test",
            }
            data.write(json.dumps(record) + "\n")
            scene_record = {"id": sample_id, **asdict(sample.scene)}
            scene_record["objects"] = [
                {**asdict(o), "box": list(o.box)} for o in sample.scene.objects
            ]
            scene_record["error"] = caption.error_record()
            scenes.write(json.dumps(scene_record) + "\n")
            if progress:
                progress()
    return out / "gavel.jsonl"
