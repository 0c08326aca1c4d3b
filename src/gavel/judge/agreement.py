"""How far two judges (or a judge and people) agree, per category.

An explanation score is only as good as its judge, so before trusting a cheaper judge (or any
judge) its per-sample scores are compared with another judge's or with people's: exact
agreement, quadratic-weighted kappa and Spearman, over all samples and per Table 1 column.
With a panel of judges, two pooled raters (their mean and their majority per sample) show
whether the panel agrees with people better than its members do. docs/judge-agreement.md
explains every rule; ``gavel judge-agreement`` prints and writes what this computes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from gavel.errors import DataError
from gavel.judge.score_files import ScoreFile
from gavel.metrics.agreement import (
    agreement_by_column,
    column_order,
    confusion,
    majority_score,
    mean_score,
)
from gavel.tables import Table, fmt

JUDGE = "judge"
REFERENCE = "reference"
MEAN = "mean"
MAJORITY = "majority"
#: Why a pooled rater has no score for a sample.
INCOMPLETE = "not scored by every judge"


@dataclass
class Rater:
    """One column of scores to compare: a file's, or the judges' pooled mean or majority."""

    label: str
    role: str
    scores: dict[str, int]
    unscored: dict[str, str]
    #: Values Spearman ranks instead of ``scores`` (the unrounded mean); None: the scores.
    ranked: dict[str, float] | None = None
    file: ScoreFile | None = None


def unique_labels(names: list[str], reserved: Collection[str] = ()) -> list[str]:
    """The names, a repeated one (or one of ``reserved``) suffixed " (2)", " (3)", ...: rows and
    JSON keys must tell every rater apart, and two runs may well name the same judge."""
    taken = set(reserved)
    labels = []
    for name in names:
        label, count = name, 1
        while label in taken:
            count += 1
            label = f"{name} ({count})"
        taken.add(label)
        labels.append(label)
    return labels


def common_ids(files: list[ScoreFile]) -> list[str]:
    """Ids present (scored or not) in every file, in the first file's order."""
    shared = set(files[0].lines)
    for file in files[1:]:
        shared &= set(file.lines)
    return [sample for sample in files[0].lines if sample in shared]


def merge_columns(files: list[ScoreFile], ids: list[str]) -> dict[str, str]:
    """Each sample's column, from whichever files give it; files that disagree are an error
    (they cannot be scores of the same data)."""
    columns: dict[str, str] = {}
    first_seen: dict[str, ScoreFile] = {}
    wanted = set(ids)
    for file in files:
        for sample, column in file.columns.items():
            if sample not in wanted:
                continue
            if sample in columns and columns[sample] != column:
                raise DataError(
                    file.source,
                    file.lines.get(sample),
                    "column",
                    f"{json.dumps(sample)} is in column {column!r} here but "
                    f"{columns[sample]!r} in {first_seen[sample].source}",
                )
            columns.setdefault(sample, column)
            first_seen.setdefault(sample, file)
    return columns


def file_rater(file: ScoreFile, label: str, role: str, ids: list[str]) -> Rater:
    """A file's scores restricted to the samples every file has."""
    return Rater(
        label=label,
        role=role,
        scores={i: file.scores[i] for i in ids if i in file.scores},
        unscored={i: file.unscored[i] for i in ids if i in file.unscored},
        file=file,
    )


def pooled_raters(judges: list[Rater], ids: list[str]) -> tuple[Rater, Rater]:
    """The judges' mean and majority per sample, over the samples every judge scored.

    A sample some judge could not score gets no pooled score: a mean of fewer judges would be
    a different rater from sample to sample.
    """
    mean = Rater(MEAN, MEAN, {}, {}, ranked={})
    majority = Rater(MAJORITY, MAJORITY, {}, {})
    for sample in ids:
        if not all(sample in judge.scores for judge in judges):
            mean.unscored[sample] = majority.unscored[sample] = INCOMPLETE
            continue
        values = [judge.scores[sample] for judge in judges]
        mean.scores[sample], mean.ranked[sample] = mean_score(values)  # type: ignore[index]
        majority.scores[sample] = majority_score(values)
    return mean, majority


def pairs_to_compare(
    judges: list[Rater], pooled: tuple[Rater, Rater] | None, reference: Rater | None
) -> list[tuple[Rater, Rater]]:
    """Every two judges; each judge with the mean and the majority; everyone with the
    reference."""
    pairs = [(a, b) for index, a in enumerate(judges) for b in judges[index + 1 :]]
    if pooled is not None:
        pairs += [(judge, pooled[0]) for judge in judges]
        pairs += [(judge, pooled[1]) for judge in judges]
    if reference is not None:
        pairs += [(rater, reference) for rater in [*judges, *(pooled or ())]]
    return pairs


def compare_pair(a: Rater, b: Rater, ids: list[str], columns: dict[str, str]) -> dict[str, Any]:
    """One pair's agreement (all samples and per column), its confusion matrix and what it
    dropped, as plain JSON-ready values."""
    kept = [i for i in ids if i in a.scores and i in b.scores]
    why = {r.label: dict(Counter(r.unscored[i] for i in ids if i in r.unscored)) for r in (a, b)}
    first = [a.scores[i] for i in kept]
    second = [b.scores[i] for i in kept]
    rows = agreement_by_column(
        first,
        second,
        [columns.get(i) for i in kept],
        rank_a=None if a.ranked is None else [a.ranked[i] for i in kept],
        rank_b=None if b.ranked is None else [b.ranked[i] for i in kept],
    )
    return {
        "a": a.label,
        "b": b.label,
        "n": len(kept),
        "dropped": len(ids) - len(kept),
        "dropped_by_rater": why,
        "agreement": rows,
        "confusion": confusion(first, second).tolist(),
    }


def _rater_record(rater: Rater, ids: list[str]) -> dict[str, Any]:
    record: dict[str, Any] = {"label": rater.label, "role": rater.role}
    if rater.file is not None:
        file = rater.file
        record |= {
            "file": str(file.path),
            "scores_file": str(file.source),
            "layout": file.kind,
            "samples": len(file.lines),
            "not_in_every_file": len(file.lines) - len(ids),
        }
    record |= {
        "scored": len(rater.scores),
        "unscored": dict(Counter(rater.unscored.values())),
    }
    return record


def agreement_report(
    judge_files: list[ScoreFile],
    labels: list[str],
    reference_file: ScoreFile | None = None,
    reference_label: str | None = None,
    *,
    pool: bool = False,
) -> dict[str, Any]:
    """Everything ``--out`` writes: raters, the shared samples, and every pair's agreement."""
    files = [*judge_files, *([reference_file] if reference_file else [])]
    ids = common_ids(files)
    if not ids:
        names = ", ".join(str(f.path) for f in files)
        raise DataError(
            files[0].path, None, None, f"no sample id is in every file ({names}): same data?"
        )
    columns = merge_columns(files, ids)
    judges = [
        file_rater(f, label, JUDGE, ids) for f, label in zip(judge_files, labels, strict=True)
    ]
    reference = None
    if reference_file is not None:
        reference = file_rater(reference_file, reference_label or "reference", REFERENCE, ids)
    pooled = pooled_raters(judges, ids) if pool else None
    raters = [*judges, *(pooled or ()), *([reference] if reference else [])]
    present = Counter(columns[i] for i in ids if i in columns)
    return {
        "samples": len(ids),
        "columns": {c: present[c] for c in column_order(list(present))},
        "without_column": sum(1 for i in ids if i not in columns),
        "raters": [_rater_record(r, ids) for r in raters],
        "pooled": None
        if pooled is None
        else {"judges": [j.label for j in judges], "samples": len(pooled[0].scores)},
        "pairs": [
            compare_pair(a, b, ids, columns) for a, b in pairs_to_compare(judges, pooled, reference)
        ],
    }


def agreement_table(report: dict[str, Any]) -> Table:
    """One row per pair and column ("all" first), the numbers as the JSON has them."""
    rows = []
    for pair in report["pairs"]:
        for column, values in pair["agreement"].items():
            rows.append([
                pair["a"], pair["b"], column, str(values["n"]), fmt(values["exact"]),
                fmt(values["qwk"], 3), fmt(values["spearman"], 3),
            ])  # fmt: skip
    notes = [
        "Exact %: same score; QWK: quadratic-weighted Cohen's kappa; Spearman: rank correlation;"
        " –: undefined (no samples, or a rater gave every sample one score)",
    ]
    if report["pooled"] is not None:
        notes.append(
            "mean: the judges' mean, rounded half up for Exact % and QWK, unrounded for Spearman;"
            " majority: most common score, ties to the lower median of the tied scores;"
            f" both over the {report['pooled']['samples']} samples every judge scored"
        )
    unscored = [
        f"{r['label']}: " + ", ".join(f"{n} {why}" for why, n in r["unscored"].items())
        for r in report["raters"]
        if r["unscored"] and r["role"] in (JUDGE, REFERENCE)
    ]
    if unscored:
        notes.append("left out, no score: " + "; ".join(unscored))
    count = report["samples"]
    title = f"Judge agreement, {count} sample{'s' * (count != 1)} in every file"
    return Table(title, ["A", "B", "Column", "n", "Exact %", "QWK", "Spearman"], rows, notes)


def unmatched_warnings(report: dict[str, Any]) -> list[str]:
    """One line per rater with samples not in every file: they are left out of every pair, so
    the reader must learn it before trusting the numbers."""
    return [
        f"{rater['label']} ({rater['file']}): {rater['not_in_every_file']} of "
        f"its {rater['samples']} samples not in every file, left out"
        for rater in report["raters"]
        if rater.get("not_in_every_file")
    ]
