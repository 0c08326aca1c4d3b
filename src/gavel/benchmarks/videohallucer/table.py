"""VideoHallucer's table: the leaderboard layout."""

from __future__ import annotations

from collections.abc import Sequence

from gavel.benchmarks.videohallucer.data import LEADERBOARD
from gavel.records import Result
from gavel.tables import Table, fmt

SHORT_NAMES = {
    "object_relation": "ObjRel",
    "temporal": "Temporal",
    "semantic_detail": "SemDetail",
    "external_factual": "ExtFact",
    "external_nonfactual": "ExtNonFact",
}


def videohallucer_table(runs: Sequence[tuple[str, Result]]) -> Table:
    """The leaderboard layout: per category Basic / Hallucinated / Overall, then the overall
    means, then bias (official script and card), then failures."""
    headers = ["Method"]
    for category in LEADERBOARD:
        short = SHORT_NAMES[category]
        headers += [f"{short} Basic", f"{short} Halluc", f"{short} Overall"]
    headers += ["Basic", "Halluc", "Overall"]
    headers += ["YesDiff", "FPRatio", "YesDiff (card)", "FPRatio (card)", "n", "failed"]
    rows = []
    for name, result in runs:
        m = result.metrics
        row = [name]
        for category in LEADERBOARD:
            block = m["per_category"].get(category) or {}
            row += [fmt(block.get(k)) for k in ("basic", "hallucination", "paired")]
        row += [fmt(m["overall_basic"]), fmt(m["overall_hallucination"]), fmt(m["overall"])]
        official = m["bias"]["official"] or {}
        card = m["bias"]["card"]
        row += [fmt(official.get("yes_pct_diff")), fmt(official.get("fp_ratio"))]
        row += [fmt(card["yes_pct_diff"]), fmt(card["fp_ratio"])]
        c = result.counts
        failed = c.get("missing", 0) + c.get("model_error", 0) + c.get("unparseable", 0)
        row += [str(c["pairs"]), str(failed)]
        rows.append(row)
    rule = runs[0][1].manifest.settings.get("answer_rule") if runs else None
    notes = [
        f"Basic/Halluc/Overall: % of pairs with that question right / both right (rule: {rule})",
        "Overall (last group): unweighted mean over the five categories, as evaluation.py",
        "YesDiff/FPRatio: evaluation_bias.py's pair-conditional counters; (card): per question",
        "n = pairs; failed = missing + model errors + unknown answers (questions, all wrong)",
    ]
    return Table("VideoHallucer", headers, rows, notes)
