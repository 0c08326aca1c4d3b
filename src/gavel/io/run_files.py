"""Names of the files a scored run keeps beside its ``results.json``.

One place for the naming rule, so the scorer that writes them and every reader (reports,
comparisons, judge agreement) cannot drift apart.
"""

from __future__ import annotations

from pathlib import Path


def scores_path(results_path: Path) -> Path:
    """``run/results.json`` -> ``run/results.scores.jsonl`` (per-sample scores beside results)."""
    return results_path.with_name(results_path.stem + ".scores.jsonl")


def judge_replies_path(results_path: Path) -> Path:
    """``run/results.json`` -> ``run/results.judge.jsonl``: the LLM judge's raw replies."""
    return results_path.with_name(results_path.stem + ".judge.jsonl")
