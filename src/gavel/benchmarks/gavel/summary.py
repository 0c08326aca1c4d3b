"""A scored GAVEL run reduced to the paper's metrics, and the warnings its counts call for.

A@0.3/0.5/0.7 over samples with a gold box, verification accuracy/precision/recall/F1 over all
samples, the area ratio of Figure 3, per-category breakdowns in Table 1's columns, and bootstrap
intervals. Everything is computed from numpy columns (``gavel.benchmarks.gavel.columns``), not
from per-sample records: the bootstrap of A@t and of the verification rates resamples counts
(``gavel.metrics.stats``), which is exactly the bootstrap over samples.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gavel.benchmarks.gavel.columns import OUTCOMES, first_seen_counts
from gavel.benchmarks.gavel.gold import GoldColumns
from gavel.benchmarks.gavel.scorer import MAX_PRED_BOXES, GavelSettings
from gavel.benchmarks.gavel.streaming import SHOWN, ScoredRun
from gavel.metrics.grounding import (
    area_ratio_summary,
    box_size_histogram,
    grounding_accuracy,
    grounding_intervals,
)
from gavel.metrics.verification import confusion, verification_intervals, verification_metrics
from gavel.records import CATEGORY_COLUMNS, Outcome


def _block(
    cols: dict[str, np.ndarray], mask: np.ndarray, settings: GavelSettings
) -> dict[str, Any]:
    ious = cols["iou"][mask & cols["has_gold"]]
    area = cols["area"][mask]
    area = area[~np.isnan(area)]
    cells = confusion(cols["truth"][mask], cols["pred"][mask])
    return {
        "grounding": grounding_accuracy(ious, settings.thresholds) | {"n": len(ious)},
        "verification": verification_metrics(cells),
        "area_ratio": area_ratio_summary(area),
    }


def summarize(gold: GoldColumns, chosen: np.ndarray, run: ScoredRun,
              settings: GavelSettings) -> dict[str, Any]:  # fmt: skip
    """Metrics, per-category breakdowns, outcome counts and intervals for a scored run: the
    samples at data positions ``chosen`` and their scores' numbers (``run.columns``)."""
    columns, tally = run.columns, run.tally
    cols = {
        "iou": columns.iou,
        "has_gold": gold.box_counts(chosen) > 0,
        "truth": gold.truth(chosen),
        "pred": columns.verdict,
        "area": columns.area_log2,
    }
    everything = np.ones(len(chosen), dtype=bool)
    overall = _block(cols, everything, settings)
    table_columns = gold.columns(chosen)
    outcomes = columns.outcome

    per_category: dict[str, Any] = {}
    for code, column in enumerate(CATEGORY_COLUMNS):
        mask = table_columns == code
        if mask.any():
            block = _block(cols, mask, settings)
            per_category[column] = {
                "n": int(mask.sum()),
                "grounding": block["grounding"],
                "verification_accuracy": block["verification"]["accuracy"],
                "area_ratio": {k: block["area_ratio"][k] for k in ("n", "median_log2")},
                "counts": first_seen_counts(outcomes[mask], OUTCOMES),
            }

    rng = np.random.default_rng(settings.seed)
    ious = cols["iou"][cols["has_gold"]]
    ci = {
        "level": settings.level,
        "resamples": settings.resamples,
        "seed": settings.seed,
        "method": "percentile bootstrap over samples (exact multinomial resampling of counts)",
        "grounding": grounding_intervals(
            ious,
            resamples=settings.resamples,
            level=settings.level,
            rng=rng,
            thresholds=settings.thresholds,
        ),
        "verification": verification_intervals(
            confusion(cols["truth"], cols["pred"]),
            resamples=settings.resamples,
            level=settings.level,
            rng=rng,
        ),
    }
    counts = {o.value: 0 for o in Outcome} | first_seen_counts(outcomes, OUTCOMES)
    counts["total"] = len(chosen)
    counts["truncated"] = tally.truncated
    gold_boxes = gold.boxes_of(chosen)
    gold_areas = (gold_boxes[:, 2] - gold_boxes[:, 0]) * (gold_boxes[:, 3] - gold_boxes[:, 1])
    n_pred = columns.n_pred_boxes
    metrics = {
        **overall,
        "explanation": None,
        "boxes": {
            "status": columns.statuses.counts(columns.box_status),
            "formats": columns.formats.counts(columns.box_format),
            "swapped": tally.swapped,
            "clipped": tally.clipped,
            "degenerate_dropped": tally.degenerate,
            "out_of_range": tally.out_of_range,
            "repaired_lists": tally.repaired,
            "repeated_dropped": tally.repeated,
            "unit_interval": tally.unit_interval,
            "ignored_with_clean_verdict": tally.ignored_with_clean_verdict,
            "capped": tally.capped,
            "mean_pred_boxes": float(np.mean(n_pred)) if len(n_pred) else 0.0,
        },
        "gold_box_size_hist": box_size_histogram(gold_areas),
        "answers": {
            "truncated": tally.truncated,
            "echoed": tally.echoed,
            "refused_both_ways": tally.refused["both_ways"],
            "refused_truncated": tally.refused["truncated"],
        },
    }
    return {"metrics": metrics, "per_category": per_category, "counts": counts, "ci": ci}


def answer_warnings(answers: dict[str, int]) -> list[str]:
    """What the counts of cut-off, copied and two-way answers mean for the numbers."""
    found = []
    if answers["truncated"]:
        found.append(
            f"{answers['truncated']} response(s) were cut off by the token limit "
            f"(finish_reason 'length'); {answers['refused_truncated']} of them are unparseable "
            "because their only verdict was a phrase in the unfinished text: raise --max-tokens"
        )
    if answers["echoed"]:
        found.append(
            f"{answers['echoed']} response(s) repeat text of the prompt; the copied text is "
            "never read as an answer"
        )
    if answers["refused_both_ways"]:
        found.append(
            f"{answers['refused_both_ways']} response(s) offer both verdicts ('yes or no'): "
            "unparseable"
        )
    return found


def capped_warning(run: ScoredRun, gold: GoldColumns, chosen: np.ndarray) -> list[str]:
    """One line naming the answers whose boxes were cut to the cap, if any."""
    capped = np.flatnonzero(run.columns.capped)
    if not len(capped):
        return []
    shown = ", ".join(repr(gold.ids[p]) for p in chosen[capped[:SHOWN]].tolist())
    more = f" and {len(capped) - SHOWN} more" if len(capped) > SHOWN else ""
    return [
        f"{len(capped)} answer(s) give more than {MAX_PRED_BOXES} boxes: only the first "
        f"{MAX_PRED_BOXES} of each are scored ({shown}{more}; boxes_given in their scores)"
    ]


def box_warnings(boxes: dict[str, Any]) -> list[str]:
    """What the box reader repaired, and replies whose numbers do not fit their convention."""
    found = []
    if boxes["repaired_lists"]:
        found.append(
            f"{boxes['repaired_lists']} response(s) hold a damaged JSON list of boxes; every "
            "well-formed object of it was read"
        )
    if boxes["unit_interval"]:
        formats = ", ".join(sorted(boxes["formats"]))
        found.append(
            f"{boxes['unit_interval']} response(s) have every box coordinate in [0, 1] under "
            f"{formats}: the model probably wrote 0-1 coordinates (box format rel1); they were "
            "read as declared"
        )
    return found
