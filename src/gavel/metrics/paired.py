"""Paired yes/no metrics: accuracy per side and per pair, and two readings of answer bias.

A *pair* is a basic question and its hallucinated twin; a pair is a hit only when both of its
questions are answered correctly. Inputs are boolean arrays (one entry per pair, or per
question); every rate is a percentage (0–100). docs/videohallucer.md gives the formulas with
worked numbers.

Bias comes in three readings that disagree on real runs:

- :func:`official_bias` reproduces the counters of VideoHallucer's ``evaluation_bias.py``
  exactly, including its pair-conditional cross-checks (a "yes" on the hallucinated question is
  never read from that question's answer: it is inferred from the *basic* answer).
- :func:`card_bias` follows the evaluation card's definitions, per question:
  ``d_y = (|yes predictions| - |yes gold|) / |V|`` over all questions V, and ``r_fp`` = share
  of "yes" among wrongly answered questions.
- :func:`card_recipe_bias` follows the card's "scoring recipe" pseudo-code instead, which counts
  "yes" on basic questions only and false positives per wrong *pair*.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gavel.metrics.stats import multinomial_draws, percentile_interval

#: Order of :func:`pair_cells`: both right, only basic right, only hallucinated right, neither.
CELLS = ("both", "basic_only", "hallucination_only", "neither")


def _bool(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=bool)


def percent(part: float, whole: float) -> float | None:
    """``100 · part / whole``; None when ``whole`` is 0."""
    return None if whole == 0 else 100.0 * float(part) / float(whole)


def pair_cells(basic_correct: Any, halluc_correct: Any) -> np.ndarray:
    """Counts of pairs in the four cells of :data:`CELLS`."""
    b = _bool(basic_correct)
    h = _bool(halluc_correct)
    return np.array(
        [np.sum(b & h), np.sum(b & ~h), np.sum(~b & h), np.sum(~b & ~h)], dtype=np.int64
    )


def pair_accuracy(basic_correct: Any, halluc_correct: Any) -> dict[str, Any]:
    """Basic, hallucinated and paired accuracy over all pairs (the denominator is every pair)."""
    both, basic_only, halluc_only, _ = pair_cells(basic_correct, halluc_correct).tolist()
    n = len(_bool(basic_correct))
    return {
        "n": n,
        "basic": percent(both + basic_only, n),
        "hallucination": percent(both + halluc_only, n),
        "paired": percent(both, n),
    }


def official_bias(basic_hit: Any, halluc_hit: Any) -> dict[str, Any]:
    """The counters of ``evaluation_bias.py``, for pairs whose gold is ("yes", "no").

    ``basic_hit``: "yes" found in the basic answer; ``halluc_hit``: "no" found in the
    hallucinated answer. Per pair the script does::

        gt_yes += 1
        if b: n_yes += 1
        else: n_no += h; n += 1          # a missed basic counts as "no" if the *other* said no
        gt_no += 1
        if h: n_no += 1
        else: n_yes += b; fp += b; n += 1  # a missed halluc counts as "yes" if the *other* said yes

    then ``ydp = (n_yes - gt_yes) / (2 gt_yes)``, ``ndp`` likewise, ``fpr = fp / n`` (0 when a
    denominator is 0, as in the script). Reported in percent.

    The script's "hallucination score" is ``halluc / basic``: of the pairs whose basic answer
    was found right (``b``), the share whose hallucinated answer was not (``¬h``), i.e. how often
    a model that knows the fact still takes the bait. None when no basic answer is right (the
    script divides by zero there).
    """
    b = _bool(basic_hit)
    h = _bool(halluc_hit)
    pairs = len(b)
    n_yes = int(np.sum(b) + np.sum(b & ~h))
    n_no = int(np.sum(h) + np.sum(h & ~b))
    wrong = int(np.sum(~b) + np.sum(~h))
    fp = int(np.sum(b & ~h))
    basic = int(np.sum(b))
    return {
        "yes_pct_diff": 100.0 * (n_yes - pairs) / (2 * pairs) if pairs else 0.0,
        "no_pct_diff": 100.0 * (n_no - pairs) / (2 * pairs) if pairs else 0.0,
        "fp_ratio": 100.0 * fp / wrong if wrong else 0.0,
        "hallucination_score": percent(fp, basic),  # the script's halluc (= b ∧ ¬h) / basic
        "counters": {
            "gt_yes": pairs,
            "gt_no": pairs,
            "n_yes": n_yes,
            "n_no": n_no,
            "n": wrong,
            "fp": fp,
            "basic": basic,
            "halluc": fp,
        },
    }


def card_bias(gold_yes: Any, said_yes: Any, correct: Any) -> dict[str, Any]:
    """The card's Pct. Diff and FP Ratio, one entry per question.

    ``d_y = 100 · (|said yes| - |gold yes|) / |questions|`` (signed: positive means the model
    says "yes" more often than the gold does); ``r_fp = 100 · |wrong and said yes| / |wrong|``
    (None when nothing is wrong).
    """
    gold = _bool(gold_yes)
    yes = _bool(said_yes)
    right = _bool(correct)
    questions = len(gold)
    wrong = ~right
    return {
        "yes_pct_diff": percent(int(yes.sum()) - int(gold.sum()), questions),
        "fp_ratio": percent(int(np.sum(wrong & yes)), int(wrong.sum())),
        "counters": {
            "questions": questions,
            "yes_predicted": int(yes.sum()),
            "yes_gold": int(gold.sum()),
            "wrong": int(wrong.sum()),
            "wrong_yes": int(np.sum(wrong & yes)),
        },
    }


def card_recipe_bias(
    basic_gold_yes: Any,
    basic_said_yes: Any,
    halluc_said_yes: Any,
    basic_correct: Any,
    halluc_correct: Any,
) -> dict[str, Any]:
    """The card's "scoring recipe" pseudo-code, one entry per pair::

        if pred_b == 'yes': yes_preds += 1
        if gt_b == 'yes': yes_gt += 1
        if pred_b != gt_b or pred_h != gt_h: wrong_pairs.append(...)
        pct_diff = abs(yes_preds - yes_gt) / len(pairs) * 100
        fp_ratio = |wrong pairs with pred_b == 'yes' or pred_h == 'yes'| / len(wrong_pairs) * 100

    So "yes" is counted on *basic* questions only, the difference is absolute, and a wrong pair
    is a false positive when either of its answers is "yes". None where the recipe would divide
    by zero (no pairs; no wrong pair).
    """
    gold = _bool(basic_gold_yes)
    basic_yes = _bool(basic_said_yes)
    halluc_yes = _bool(halluc_said_yes)
    wrong = ~(_bool(basic_correct) & _bool(halluc_correct))
    wrong_yes = int(np.sum(wrong & (basic_yes | halluc_yes)))
    return {
        "yes_pct_diff": percent(abs(int(basic_yes.sum()) - int(gold.sum())), len(gold)),
        "fp_ratio": percent(wrong_yes, int(wrong.sum())),
        "counters": {
            "pairs": len(gold),
            "yes_preds": int(basic_yes.sum()),
            "yes_gt": int(gold.sum()),
            "wrong_pairs": int(wrong.sum()),
            "wrong_pairs_with_yes": wrong_yes,
        },
    }


def pair_intervals(
    cells: Mapping[str, np.ndarray],
    macro: Sequence[str],
    *,
    resamples: int,
    level: float,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Stratified percentile bootstrap: pairs are resampled within each group.

    Resampling a group's pairs with replacement gives cell counts that are exactly multinomial
    with the observed cell proportions, so the counts are drawn directly (see
    :mod:`gavel.metrics.stats`). Basic, hallucinated and paired accuracy of a group come from
    the same draws; the macro mean of the paired accuracies over ``macro`` groups is taken per
    draw.
    """
    per_group: dict[str, dict[str, list[float] | None]] = {}
    paired_draws: dict[str, np.ndarray] = {}
    for name, group_cells in cells.items():
        draws = multinomial_draws(group_cells, resamples=resamples, rng=rng)
        if draws is None:
            per_group[name] = dict.fromkeys(("basic", "hallucination", "paired"))
            continue
        n = int(np.sum(group_cells))
        basic = 100.0 * (draws[:, 0] + draws[:, 1]) / n
        halluc = 100.0 * (draws[:, 0] + draws[:, 2]) / n
        paired = 100.0 * draws[:, 0] / n
        paired_draws[name] = paired
        per_group[name] = {
            "basic": percentile_interval(basic, level),
            "hallucination": percentile_interval(halluc, level),
            "paired": percentile_interval(paired, level),
        }
    present = [name for name in macro if name in paired_draws]
    overall = None
    if present:
        overall = percentile_interval(np.mean([paired_draws[g] for g in present], axis=0), level)
    return {"per_category": per_group, "overall": overall}
