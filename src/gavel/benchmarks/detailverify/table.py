"""DetailVerifyBench's table: the official Table 1 layout."""

from __future__ import annotations

from collections.abc import Sequence

from gavel.benchmarks.detailverify.tokens import OFFICIAL_CATEGORIES
from gavel.records import Result
from gavel.tables import Table, fmt

#: Short column names of the official categories, in the official table's order.
CATEGORY_COLUMNS = {
    "Object Number Hallucination": "Num",
    "Object Color Hallucination": "Clr",
    "Object Category Hallucination": "Cat",
    "Object Shape Hallucination": "Shp",
    "Object Material Hallucination": "Mat",
    "Spatial Relation Hallucination": "Spat",
    "Scene Hallucination": "Scene",
    "Camera Hallucination": "Cam",
    "OCR Hallucination": "OCR",
    "Image Style Hallucination": "Style",
    "Character Identification Hallucination": "Char",
    "Counterfactual Hallucination": "CF",
    "Other Hallucination": "Other",
}
assert list(CATEGORY_COLUMNS) == OFFICIAL_CATEGORIES


def detailverify_table(runs: Sequence[tuple[str, Result]]) -> Table:
    """The official Table 1 layout (``Data_To_Chart.py``): token P/R/F1, sentence P/R/F1 and
    the recall of each of the 13 categories, then the counts gavel adds."""
    headers = ["Method", "Tok P", "Tok R", "Tok F1", "Sent P", "Sent R", "Sent F1"]
    headers += [*CATEGORY_COLUMNS.values(), "n", "valid", "invalid"]
    rows = []
    for name, result in runs:
        token = result.metrics["token"]
        sentence = result.metrics["sentence"]
        recall = result.metrics["category_recall"]
        row = [name] + [fmt(token[k]) for k in ("precision", "recall", "f1")]
        row += [fmt(sentence[k]) for k in ("precision", "recall", "f1")]
        row += [fmt(recall.get(category)) for category in CATEGORY_COLUMNS]
        c = result.counts
        row += [str(c["scored"]), str(c["valid"]), str(c["invalid"])]
        rows.append(row)
    mode = runs[0][1].manifest.settings.get("mode") if runs else None
    notes = [
        "Token and sentence P/R/F1: per-sample values averaged over scored samples (0–100)",
        "Category columns: token recall per gold category, pooled over samples; – = absent",
        f"mode: {mode} (official: invalid answers dropped; strict: they flag nothing); "
        "n = scored samples",
    ]
    return Table("DetailVerifyBench", headers, rows, notes)
