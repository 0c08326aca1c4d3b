"""GAVEL's table: the paper's Table 1 layout (grounding, verification, explanation, failures)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gavel.records import CATEGORY_COLUMNS, Result
from gavel.tables import Table, fmt


def gavel_table(runs: Sequence[tuple[str, Result]]) -> Table:
    """One row per run: grounding, verification, explanation (when judged) and failures."""
    judges = {
        name: r.metrics["explanation"]["judge"]
        for name, r in runs
        if r.metrics.get("explanation") and isinstance(r.metrics["explanation"].get("judge"), dict)
    }
    with_explanation = any(r.metrics.get("explanation") for _, r in runs)
    any_proxy = any(j.get("proxy") for j in judges.values())
    headers = ["Method", "A@0.3", "A@0.5", "A@0.7", "Acc", "P", "R", "F1"]
    if with_explanation:
        headers += ["Avg (proxy)" if any_proxy else "Avg", *CATEGORY_COLUMNS]
    headers += ["log2 area", "n", "failed"]
    rows = []
    for name, result in runs:
        g = result.metrics["grounding"]
        v = result.metrics["verification"]
        row = [name, fmt(g["A@0.3"]), fmt(g["A@0.5"]), fmt(g["A@0.7"])]
        row += [fmt(v["accuracy"]), fmt(v["precision"]), fmt(v["recall"]), fmt(v["f1"])]
        if with_explanation:
            e = result.metrics.get("explanation") or {}
            row += [fmt(e.get("Avg"), 0)] + [fmt(e.get(c), 0) for c in CATEGORY_COLUMNS]
        c = result.counts
        failed = c.get("missing", 0) + c.get("model_error", 0) + c.get("unparseable", 0)
        row += [fmt(result.metrics["area_ratio"]["median_log2"], 2), str(c["total"]), str(failed)]
        rows.append(row)
    match = runs[0][1].manifest.settings.get("match") if runs else None
    notes = [
        f"A@t: % of samples with a gold box whose IoU >= t (match: {match})",
        "Acc/P/R/F1: verification, hallucinated = positive",
        "failed = missing + model errors + unparseable (all counted as wrong)",
    ]
    for judge in dict.fromkeys(_describe_judge(j) for j in judges.values()):
        notes.append(judge)
    return Table("GAVEL", headers, rows, notes)


def _describe_judge(judge: dict[str, Any]) -> str:
    name = judge.get("name", "?")
    if judge.get("proxy"):
        # Only the offline judge is an embedding model; a plugin judge says what it is itself.
        kind = "an offline embedding PROXY" if judge.get("kind") == "embedding" else "a PROXY"
        return (
            f"Avg and categories: explanation score x20 by {name}, {kind}, "
            "not the paper's LLM-judge protocol"
        )
    return f"Avg and categories: explanation score x20 by the LLM judge {name} (paper protocol)"
