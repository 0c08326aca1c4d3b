"""Calibrating the offline judge: fit its similarity-to-score thresholds on synthetic data.

Why synthetic data: there the injected error is known word for word, so the rule-based
reference (:mod:`gavel.judge.reference`) can score any prediction along the paper's rubric.
Predictions are not taken from a model; they are graded *variants* built from each sample, so
every rung of the rubric is represented:

- for a sample with a hallucination: the annotated explanation itself, rewordings of it, a short
  correction ("It is blue, not red."), the truth only, the wrong claim only, the right sentence
  with other values of the same kind (wrong detail), another sample's explanation (wrong
  error), something vague, the verdict alone, "no hallucination", and an unclear verdict with a
  good or a vague explanation;
- for a sample without one: the plain statement, rewordings, the verdict alone, a hedged
  statement, unclear verdicts with and without a statement, a verdict "no" that describes an
  error anyway, and a claimed hallucination.

Each variant is scored by the reference; the offline judge gives each a cosine similarity; the
four thresholds that turn a similarity into 1–5 (one set per rubric: with and without a
hallucination) are chosen to maximise quadratic-weighted kappa against the reference on a *fit*
set, then measured on a *held-out* set built from another seed. Everything is deterministic in
the seeds (each sample and its variants draw from their own random streams) and the file holds
no dates, so the same arguments on the same machine write the same bytes.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gavel.judge.embedding import MODEL_SHA256, TOKENIZER_SHA256, Embedder
from gavel.judge.items import JudgeItem
from gavel.judge.offline import CLEAN_REFERENCE, RUBRICS, OfflineJudge
from gavel.judge.protocol import prediction_text
from gavel.judge.reference import NAME as REFERENCE_NAME
from gavel.judge.reference import VERSION as REFERENCE_VERSION
from gavel.judge.reference import ReferenceJudge, names
from gavel.metrics.agreement import agreement
from gavel.records import NO_HALLUCINATION
from gavel.synth.difficulty import DIFFICULTIES
from gavel.synth.gavel_set import category_plan, make_sample
from gavel.synth.vocabulary import COLORS, KINDS, NUMBER_WORDS, PLACES
from gavel.version import __version__

#: Version of the calibration file's layout.
FORMAT = 1
#: Share of clean samples in a calibration set: one in eight, as many as each error category,
#: so the clean rubric is fitted on as much data as the others (GAVEL itself has 7%).
CLEAN_SHARE = 1 / 8
#: Values per category for the "wrong detail" variant, which needs two that are neither the
#: claim nor the truth (Size, State and Attr have too few: swapping claim and truth would still
#: name both).
VALUES: dict[str, tuple[str, ...]] = {
    "Color": tuple(COLORS),
    "Obj": KINDS,
    "Qty": tuple(NUMBER_WORDS.values()),
    "Loc": tuple(PLACES),
}

VAGUE = (
    "Something in the caption is wrong.",
    "The caption does not match the image.",
    "There is an error in the description.",
    "One detail of the caption is incorrect.",
)
CLEAN_STATEMENTS = (
    "The caption matches the image.",
    "Everything the caption says can be seen in the image.",
    "The description is accurate; nothing in it is wrong.",
    "No hallucination: every object is described correctly.",
    "The caption is correct.",
)
HEDGED = (
    "The caption probably matches the image, but I am not sure.",
    "It seems the caption is correct, though the image is hard to read.",
    "I think the description is accurate.",
)
UNCLEAR = (
    "I cannot tell from this image.",
    "It is hard to say whether the caption is right.",
    "The image is too blurry to decide.",
)
UNCLEAR_POSITIVE = (
    "The caption matches the image.",
    "The description is correct.",
)


@dataclass(frozen=True)
class Sample:
    """What calibration needs of one synthetic sample."""

    id: str
    category: str | None
    explanation: str
    error: dict[str, str] | None

    @property
    def column(self) -> str:
        return self.category or NO_HALLUCINATION


@dataclass(frozen=True)
class Variant:
    """One graded prediction of one sample."""

    sample: Sample
    kind: str
    verdict: bool | None
    explanation: str

    def item(self) -> JudgeItem:
        return JudgeItem(
            id=f"{self.sample.id}/{self.kind}",
            column=self.sample.column,
            hallucinated=self.sample.category is not None,
            verdict=self.verdict,
            prediction=prediction_text(self.verdict, self.explanation),
            ground_truth=self.sample.explanation if self.sample.category else "",
        )


def synthetic_samples(n: int, seed: int, difficulty: str = "medium") -> list[Sample]:
    """The captions and errors that ``gavel synth --seed SEED --clean-share 0.125`` writes, made
    without drawing the images (calibration reads only the text)."""
    level = DIFFICULTIES[difficulty]
    samples = []
    for index, category in enumerate(category_plan(n, CLEAN_SHARE, None)):
        made = make_sample(np.random.default_rng([seed, index]), category, level)
        caption = made.caption
        samples.append(
            Sample(
                id=f"synth-{index:05d}",
                category=caption.category,
                explanation=caption.explanation,
                error=caption.error_record(),
            )
        )
    return samples


def _pick(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    return options[int(rng.integers(len(options)))]


#: The synthetic explanations read "The caption says <said>, but <real>."
_SAYS = re.compile(r"^The caption says (?P<said>.+?), but (?P<real>.+?)\.$")

#: Rewordings of such an explanation that keep both halves.
REWORDINGS: tuple[Callable[[str, str], str], ...] = (
    lambda said, real: f"The description claims {said}; in the image, however, {real}.",
    lambda said, real: f"Although the caption states {said}, {real}.",
    lambda said, real: f"{real[0].upper()}{real[1:]}, so the caption is wrong when it says {said}.",
    lambda said, real: f"According to the caption {said}, yet in the picture {real}.",
)


def _replace_words(text: str, mapping: dict[str, str]) -> str:
    """Replace whole words or phrases at once (so a replacement is never replaced again)."""
    keys = sorted(mapping, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w-])")
    return pattern.sub(lambda m: mapping[m.group(1)], text)


def hallucinated_variants(
    sample: Sample, others: Sequence[Sample], rng: np.random.Generator
) -> list[Variant]:
    """The graded predictions of a sample with a hallucination (see the module docstring)."""
    assert sample.error is not None
    claim, truth = sample.error["claim"], sample.error["truth"]
    text = sample.explanation
    parts = _SAYS.match(text)
    said = parts["said"] if parts else f"it is {claim}"
    real = parts["real"] if parts else f"it is {truth}"
    out = [
        Variant(sample, "exact", True, text),
        Variant(sample, "reworded", True, _pick(rng, REWORDINGS)(said, real)),
        Variant(
            sample,
            "short-correction",
            True,
            _pick(
                rng,
                (
                    f"It is {truth}, not {claim}.",
                    f"The image shows {truth}, not {claim}.",
                    f"The caption says {claim} where the image has {truth}.",
                ),
            ),
        ),
        Variant(
            sample,
            "truth-only",
            True,
            _pick(rng, (f"Looking at the image, {real}.", f"In the image, {real}.")),
        ),
        Variant(
            sample,
            "claim-only",
            True,
            _pick(
                rng,
                (
                    f"The caption is wrong that {said}.",
                    f"It is not true that {said}.",
                ),
            ),
        ),
        Variant(sample, "vague", True, _pick(rng, VAGUE)),
        Variant(sample, "verdict-only", True, ""),
        Variant(sample, "says-clean", False, _pick(rng, CLEAN_STATEMENTS)),
        Variant(sample, "unclear-good", None, text),
        Variant(sample, "unclear-vague", None, _pick(rng, UNCLEAR)),
    ]
    values = VALUES.get(sample.error["category"])
    if values:
        spare = [v for v in values if v not in (claim, truth)]
        order = rng.permutation(len(spare))
        wrong_claim, wrong_truth = spare[int(order[0])], spare[int(order[1])]
        out.append(
            Variant(
                sample,
                "wrong-detail",
                True,
                _replace_words(text, {claim: wrong_claim, truth: wrong_truth}),
            )
        )
    unrelated = [
        o.explanation
        for o in others
        if o.error is not None
        and o.id != sample.id
        and not names(o.explanation, claim)
        and not names(o.explanation, truth)
    ]
    if unrelated:
        out.append(Variant(sample, "other-error", True, _pick(rng, unrelated)))
    return out


def clean_variants(
    sample: Sample, others: Sequence[Sample], rng: np.random.Generator
) -> list[Variant]:
    """The graded predictions of a sample without a hallucination."""
    errors = [o.explanation for o in others if o.error is not None]
    out = [
        Variant(sample, "exact", False, sample.explanation),
        Variant(sample, "reworded", False, _pick(rng, CLEAN_STATEMENTS[1:])),
        Variant(sample, "verdict-only", False, ""),
        Variant(sample, "hedged", False, _pick(rng, HEDGED)),
        Variant(sample, "unclear-good", None, _pick(rng, UNCLEAR_POSITIVE)),
        Variant(sample, "unclear-vague", None, _pick(rng, UNCLEAR)),
    ]
    if errors:
        out.append(Variant(sample, "no-but-error", False, _pick(rng, errors)))
        out.append(Variant(sample, "claims-error", True, _pick(rng, errors)))
    return out


def variants(samples: Sequence[Sample], seed: int) -> list[Variant]:
    """Every graded prediction of every sample; sample ``i`` draws from ``rng([seed, i, 1])``."""
    out: list[Variant] = []
    for index, sample in enumerate(samples):
        rng = np.random.default_rng([seed, index, 1])
        make = hallucinated_variants if sample.error is not None else clean_variants
        out.extend(make(sample, samples, rng))
    return out


def reference_scores(chosen: Sequence[Variant]) -> list[int]:
    """The rule-based reference score of each variant."""
    items = [v.item() for v in chosen]
    errors = {item.id: v.sample.error for item, v in zip(items, chosen, strict=True)}
    return [j.score for j in ReferenceJudge(errors).judge(items)]  # type: ignore[misc]


# --- fitting ------------------------------------------------------------------------------


def candidate_cuts(similarity: np.ndarray) -> np.ndarray:
    """Where a threshold may go: midpoints between neighbouring distinct similarities (any
    other value splits the data the same way), plus one below and one above everything;
    rounded to 6 decimals, the precision the file stores."""
    values = np.unique(np.round(similarity, 6))
    mids = (values[:-1] + values[1:]) / 2
    ends = [values[0] - 1e-3, values[-1] + 1e-3]
    return np.unique(np.round(np.concatenate([ends, mids]), 6))


def apply_thresholds(similarity: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """1 + the number of thresholds each similarity reaches (as :func:`offline.to_score`)."""
    return 1 + np.searchsorted(np.asarray(thresholds), similarity, side="right")


def _fast_qwk(predicted: np.ndarray, reference: np.ndarray) -> float:
    """Quadratic-weighted kappa on the 1–5 scale, the formula of
    :func:`gavel.metrics.agreement.quadratic_weighted_kappa` on integer arrays (the search
    evaluates it thousands of times; reports use the metrics module)."""
    observed = np.bincount((predicted - 1) * 5 + (reference - 1), minlength=25).reshape(5, 5)
    observed = observed / observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    chance = float((_WEIGHTS * expected).sum())
    return -1.0 if chance == 0.0 else 1.0 - float((_WEIGHTS * observed).sum()) / chance


_WEIGHTS = (np.arange(5)[:, None] - np.arange(5)[None, :]) ** 2 / 16.0


def fit_thresholds(
    similarity: Sequence[float], reference: Sequence[int]
) -> tuple[list[float], float]:
    """Four non-decreasing thresholds that maximise QWK against ``reference``, and that QWK.

    A coordinate search: start from the similarity quintiles, move one threshold at a time to
    the best cut between its neighbours (every midpoint between distinct similarities is a
    candidate), and sweep until nothing moves. Candidates are visited in increasing order and
    only a strict gain moves a threshold, so the result is deterministic. It can stop in a local
    optimum; the held-out numbers say what the result is worth.
    """
    sims = np.asarray(similarity, dtype=np.float64)
    ref = np.asarray(reference, dtype=np.int64)
    if sims.size == 0:
        raise ValueError("nothing to fit: no sample reached the similarity step")
    candidates = candidate_cuts(sims)
    start = np.quantile(sims, [0.2, 0.4, 0.6, 0.8])
    cuts = [float(candidates[np.abs(candidates - q).argmin()]) for q in start]

    def kappa(trial: list[float]) -> float:
        return _fast_qwk(apply_thresholds(sims, trial), ref)

    best = kappa(cuts)
    for _ in range(50):
        moved = False
        for position in range(4):
            low = cuts[position - 1] if position else -np.inf
            high = cuts[position + 1] if position < 3 else np.inf
            for candidate in candidates[(candidates >= low) & (candidates <= high)]:
                if candidate == cuts[position]:
                    continue
                trial = [*cuts[:position], float(candidate), *cuts[position + 1 :]]
                value = kappa(trial)
                if value > best + 1e-12:
                    best, cuts, moved = value, trial, True
        if not moved:
            break
    return cuts, best


def evenly_spaced(similarity: Sequence[float]) -> list[float]:
    """The naive mapping to compare with: the observed similarity range cut in five equal parts."""
    sims = np.asarray(similarity, dtype=np.float64)
    low, high = float(sims.min()), float(sims.max())
    return [round(low + (high - low) * k / 5, 6) for k in range(1, 5)]


def _histogram(scores: Sequence[int]) -> dict[str, int]:
    return {str(k): int(sum(1 for s in scores if s == k)) for k in range(1, 6)}


def report(
    proxy: Sequence[int],
    reference: Sequence[int],
    chosen: Sequence[Variant],
    decided: Sequence[bool],
) -> dict[str, Any]:
    """Agreement overall, on the predictions the similarity decided (``decided``: not gated),
    per Table 1 column and, as mean scores, per variant."""
    proxy_a, ref_a = np.asarray(proxy, dtype=np.int64), np.asarray(reference, dtype=np.int64)

    def part(index: Sequence[int] | np.ndarray) -> dict[str, Any]:
        numbers = agreement(proxy_a[index].tolist(), ref_a[index].tolist())
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in numbers.items()}

    columns: dict[str, list[int]] = defaultdict(list)
    kinds: dict[str, list[int]] = defaultdict(list)
    for index, v in enumerate(chosen):
        columns[v.sample.column].append(index)
        kinds[("clean/" if v.sample.error is None else "") + v.kind].append(index)
    return {
        "all": part(np.arange(proxy_a.size)),
        "similarity_decided": part(np.flatnonzero(np.asarray(decided, dtype=bool))),
        "by_column": {column: part(ix) for column, ix in sorted(columns.items())},
        "by_variant": {
            kind: {
                "n": len(ix),
                "mean_reference": round(float(ref_a[ix].mean()), 3),
                "mean_proxy": round(float(proxy_a[ix].mean()), 3),
            }
            for kind, ix in sorted(kinds.items())
        },
        "histogram": {
            "reference": _histogram(ref_a.tolist()),
            "proxy": _histogram(proxy_a.tolist()),
        },
    }


@dataclass
class Scored:
    """One calibration set: its variants, reference scores and similarities."""

    variants: list[Variant]
    items: list[JudgeItem]
    reference: list[int]
    similarity: list[float | None]

    def rubric_mask(self, rubric: str) -> np.ndarray:
        """The predictions of ``rubric`` that the similarity decides."""
        clean = rubric == "clean"
        return np.array(
            [
                s is not None and (item.hallucinated is not clean)
                for item, s in zip(self.items, self.similarity, strict=True)
            ],
            dtype=bool,
        )


def build_set(
    judge: OfflineJudge, n: int, seed: int, difficulty: str, progress: bool = False
) -> Scored:
    """Samples and variants of ``seed``, their reference scores and the judge's similarities."""
    chosen = variants(synthetic_samples(n, seed, difficulty), seed)
    items = [v.item() for v in chosen]
    return Scored(chosen, items, reference_scores(chosen), judge.similarities(items, progress))


def evaluate(judge: OfflineJudge, scored: Scored) -> dict[str, Any]:
    """The agreement report of ``judge`` (its thresholds) on one calibration set."""
    proxy = [j.score for j in judge.judge(scored.items)]
    decided = [s is not None for s in scored.similarity]
    return report(proxy, scored.reference, scored.variants, decided)  # type: ignore[arg-type]


def command_line(n: int, seed: int, heldout_seed: int, difficulty: str) -> str:
    return (
        f"gavel judge-calibrate --n {n} --seed {seed} --heldout-seed {heldout_seed} "
        f"--difficulty {difficulty}"
    )


def calibrate(
    n: int = 200,
    seed: int = 0,
    heldout_seed: int = 1,
    difficulty: str = "medium",
    *,
    embedder: Embedder | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Fit the thresholds on ``n`` samples of ``seed``, measure them on ``n`` of
    ``heldout_seed``; the result is the calibration file's content (deterministic: no dates)."""
    if seed == heldout_seed:
        raise ValueError("the held-out set needs another seed than the fit set")
    probe = OfflineJudge(thresholds=dict.fromkeys(RUBRICS, [0.0] * 4), embedder=embedder)
    fit_set = build_set(probe, n, seed, difficulty, progress)
    heldout_set = build_set(probe, n, heldout_seed, difficulty, progress)

    thresholds: dict[str, list[float]] = {}
    naive: dict[str, list[float]] = {}
    fit_qwk: dict[str, float] = {}
    for rubric in RUBRICS:
        mask = fit_set.rubric_mask(rubric)
        # The mask keeps only decided predictions, whose similarity is never None.
        sims = [s for s, m in zip(fit_set.similarity, mask, strict=True) if m and s is not None]
        refs = [r for r, m in zip(fit_set.reference, mask, strict=True) if m]
        thresholds[rubric], fit_qwk[rubric] = fit_thresholds(sims, refs)
        naive[rubric] = evenly_spaced(sims)

    fitted = OfflineJudge(thresholds=thresholds, embedder=probe.embedder)
    baseline = OfflineJudge(thresholds=naive, embedder=probe.embedder)
    return {
        "format": FORMAT,
        "judge": fitted.name,
        "embedder": Embedder.settings(),
        "texts": {
            "prediction": "verdict in words + explanation (gavel.judge.protocol.prediction_text)",
            "reference_hallucinated": "prediction_text(True, annotated explanation)",
            "reference_clean": f"prediction_text(False, {CLEAN_REFERENCE!r})",
        },
        "thresholds": thresholds,
        "provenance": {
            "command": command_line(n, seed, heldout_seed, difficulty),
            "n": n,
            "fit_seed": seed,
            "heldout_seed": heldout_seed,
            "difficulty": difficulty,
            "clean_share": CLEAN_SHARE,
            "predictions": {"fit": len(fit_set.items), "heldout": len(heldout_set.items)},
            "reference": f"{REFERENCE_NAME} v{REFERENCE_VERSION}",
            "objective": "quadratic-weighted kappa per rubric on the similarity-decided "
            "predictions of the fit set",
            "model_sha256": MODEL_SHA256,
            "tokenizer_sha256": TOKENIZER_SHA256,
            "gavel_version": __version__,
        },
        "agreement": {
            "fit": evaluate(fitted, fit_set),
            "heldout": evaluate(fitted, heldout_set),
            "fit_qwk_per_rubric": {k: round(v, 4) for k, v in fit_qwk.items()},
            "naive_evenly_spaced": {
                "thresholds": naive,
                "heldout": {
                    key: value
                    for key, value in evaluate(baseline, heldout_set).items()
                    if key in ("all", "similarity_decided")
                },
            },
        },
    }


def _number(value: Any, scale: float = 1.0, digits: int = 3) -> str:
    return "-" if value is None else f"{value * scale:.{digits}f}"


def summary_table(result: dict[str, Any]) -> str:
    """The agreement numbers as plain text (fit, held-out, naive baseline, per column)."""
    agreement = result["agreement"]
    rows = [
        ("fit, all", agreement["fit"]["all"]),
        ("fit, similarity-decided", agreement["fit"]["similarity_decided"]),
        ("held-out, all", agreement["heldout"]["all"]),
        ("held-out, similarity-decided", agreement["heldout"]["similarity_decided"]),
        ("naive evenly spaced, held-out, all", agreement["naive_evenly_spaced"]["heldout"]["all"]),
    ]
    rows += [
        (f"held-out, {column}", numbers)
        for column, numbers in agreement["heldout"]["by_column"].items()
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"{'':{width}}  {'n':>5}  {'exact %':>7}  {'QWK':>6}  {'Spearman':>8}"]
    for name, numbers in rows:
        lines.append(
            f"{name:{width}}  {numbers['n']:>5}  {_number(numbers['exact'], digits=1):>7}  "
            f"{_number(numbers['qwk']):>6}  {_number(numbers['spearman']):>8}"
        )
    thresholds = result["thresholds"]
    lines.append("")
    for rubric, values in thresholds.items():
        lines.append(f"thresholds ({rubric}): " + ", ".join(f"{v:.4f}" for v in values))
    return "\n".join(lines)
