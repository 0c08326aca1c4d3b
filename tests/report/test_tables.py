"""Snapshots of the GAVEL table in every text format, on the shipped photo example."""

from __future__ import annotations

from gavel.benchmarks.gavel.scoring import GavelSettings, evaluate_files
from gavel.benchmarks.gavel.table import gavel_table
from gavel.examples import example_dir
from gavel.report.tables import render


def table():
    examples = example_dir("photos")
    runs = []
    for name in ("gpt", "qwen3-vl"):
        result, _ = evaluate_files(
            examples / "gavel.jsonl",
            examples / "predictions" / f"{name}.jsonl",
            GavelSettings(resamples=0),
        )
        runs.append((f"{name}_example", result))
    return gavel_table(runs), runs


def test_markdown_snapshot():
    t, _ = table()
    assert render(t, "markdown") == (
        "| Method | A@0.3 | A@0.5 | A@0.7 | Acc | P | R | F1 | log2 area | n | failed |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
        "| gpt_example | 70.0 | 60.0 | 50.0 | 83.3 | 100.0 | 80.0 | 88.9 | 0.22 | 12 | 1 |\n"
        "| qwen3-vl_example | 70.0 | 60.0 | 50.0 | 91.7 | 100.0 | 90.0 | 94.7 | -0.03 | 12 | 0 |\n"
    )


def test_csv_snapshot():
    t, _ = table()
    assert (
        render(t, "csv").splitlines()[1]
        == "gpt_example,70.0,60.0,50.0,83.3,100.0,80.0,88.9,0.22,12,1"
    )


def test_latex_snapshot_escapes_names():
    t, _ = table()
    latex = render(t, "latex")
    assert latex.splitlines()[:4] == [
        r"\begin{tabular}{lrrrrrrrrrr}",
        r"\toprule",
        r"Method & A@0.3 & A@0.5 & A@0.7 & Acc & P & R & F1 & log2 area & n & failed \\",
        r"\midrule",
    ]
    assert (
        r"gpt\_example & 70.0 & 60.0 & 50.0 & 83.3 & 100.0 & 80.0 & 88.9 & 0.22 & 12 & 1 \\"
        in latex
    )
    assert latex.rstrip().endswith(r"\end{tabular}")
