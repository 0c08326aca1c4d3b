"""Scoring in chunks, with the scores kept on disk, against an independent count and against
itself: the chunk size and the order of the predictions change nothing, bit for bit."""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction

import pytest

from gavel.benchmarks.gavel import streaming
from gavel.benchmarks.gavel.scoring import GavelSettings, evaluate_files
from gavel.errors import ConfigError, DataError
from gavel.io.spool import SpooledRecords
from gavel.records import CATEGORY_COLUMNS, NO_HALLUCINATION
from gavel.scoring.files import write_run

N = 3000
CATEGORIES = [c for c in CATEGORY_COLUMNS if c != NO_HALLUCINATION]


def make_run(folder, raw: bool):
    """N samples of every category, a few boxes each; predictions with given boxes (or raw
    JSON replies in 0-1000 coordinates), some missing, failed or without a verdict."""
    rng = random.Random(7)
    gold_rows, predictions = [], []
    for i in range(N):
        width, height = rng.randint(200, 900), rng.randint(200, 900)
        clean = rng.random() < 0.1
        boxes = []
        for _ in range(0 if clean else rng.choice([1, 1, 2, 3])):
            w, h = rng.randint(5, width // 2), rng.randint(5, height // 2)
            boxes.append([rng.randint(0, width - w), rng.randint(0, height - h), w, h])
        gold_rows.append({
            "id": f"s{i}", "image": f"{i}.png", "caption": "c", "hallucinated": not clean,
            "category": None if clean else rng.choice(CATEGORIES), "boxes": boxes,
            "width": width, "height": height,
        })  # fmt: skip
        kind = rng.random()
        if kind < 0.04:
            continue  # missing
        row: dict = {"id": f"s{i}", "model": rng.choice(["m-a", "m-b"])}
        if kind < 0.07:
            row["error"] = "HTTP 500"
        elif raw:
            rel = [[rng.randint(0, 990), rng.randint(0, 990)] for _ in range(rng.randint(0, 3))]
            rel = [[x, y, x + rng.randint(1, 1000 - x), y + rng.randint(1, 1000 - y)]
                   for x, y in rel]  # fmt: skip
            verdict = "maybe" if kind < 0.1 else rng.random() < 0.8
            answer = {"hallucination": verdict, "explanation": "e", "bbox_2d": rel}
            row["response"] = "```json\n" + json.dumps(answer) + "\n```"
        else:
            pred = []
            for _ in range(rng.randint(0, 4)):
                x1, y1 = rng.randint(0, width - 2), rng.randint(0, height - 2)
                pred.append([x1, y1, rng.randint(x1 + 1, width), rng.randint(y1 + 1, height)])
            row |= {"response": "r", "hallucinated": rng.random() < 0.85, "explanation": "e",
                    "boxes": pred}  # fmt: skip
        predictions.append(row)
    gold = folder / "gold.jsonl"
    gold.write_text("".join(json.dumps(r) + "\n" for r in gold_rows))
    return gold, gold_rows, predictions


def write_predictions(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def union_area(boxes) -> Fraction:
    """Exact area of a union of integer boxes, by coordinate compression in plain Python."""
    xs = sorted({v for b in boxes for v in (b[0], b[2])})
    ys = sorted({v for b in boxes for v in (b[1], b[3])})
    total = Fraction(0)
    for x1, x2 in itertools.pairwise(xs):
        for y1, y2 in itertools.pairwise(ys):
            cx, cy = Fraction(x1 + x2, 2), Fraction(y1 + y2, 2)
            if any(b[0] < cx < b[2] and b[1] < cy < b[3] for b in boxes):
                total += (x2 - x1) * (y2 - y1)
    return total


def naive_ious(gold_rows, predictions) -> dict[str, float]:
    """Union IoU of every sample with a gold box, straight from the protocol: 0 for a missing,
    failed or clean-verdict answer, the exact areas' ratio otherwise."""
    given = {p["id"]: p for p in predictions}
    ious = {}
    for row in gold_rows:
        if not row["boxes"]:
            continue
        gold = [(x, y, x + w, y + h) for x, y, w, h in row["boxes"]]
        p = given.get(row["id"])
        pred = p.get("boxes") if p and not p.get("error") and p.get("hallucinated") else None
        if not pred:
            ious[row["id"]] = 0.0
            continue
        shared = [(max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))
                  for a in pred for b in gold]  # fmt: skip
        inter = union_area([s for s in shared if s[0] < s[2] and s[1] < s[3]])
        union = union_area(pred) + union_area(gold) - inter
        ious[row["id"]] = float(inter) / float(union)
    return ious


def test_streamed_scores_match_an_independent_count(tmp_path):
    gold, gold_rows, predictions = make_run(tmp_path, raw=False)
    path = write_predictions(tmp_path / "pred.jsonl", predictions)
    result, scores = evaluate_files(gold, path, GavelSettings(resamples=0))
    assert isinstance(scores, SpooledRecords) and len(scores) == N
    expected = naive_ious(gold_rows, predictions)
    got = {s.id: s.iou for s in scores if s.iou is not None}
    assert got == expected  # integer corners: exact areas, the same division, bit for bit
    values = list(expected.values())
    for t in (0.3, 0.5, 0.7):
        hits = sum(v >= t - 1e-9 for v in values)
        assert result.metrics["grounding"][f"A@{t}"] == 100.0 * (hits / len(values))
    answered = {p["id"] for p in predictions}
    errors = {p["id"] for p in predictions if p.get("error")}
    counts = result.counts
    assert counts["missing"] == N - len(answered) and counts["model_error"] == len(errors)
    assert counts["ok"] == len(answered) - len(errors) and counts["total"] == N
    per_column = {}
    for row in gold_rows:
        column = row["category"] or NO_HALLUCINATION
        per_column[column] = per_column.get(column, 0) + 1
    assert {c: v["n"] for c, v in result.per_category.items()} == per_column
    assert result.metrics["boxes"]["status"] == {"given": len(answered) - len(errors)}


@pytest.mark.parametrize("raw", [False, True])
def test_chunk_size_and_prediction_order_change_nothing(tmp_path, monkeypatch, raw):
    gold, _, predictions = make_run(tmp_path, raw=raw)
    settings = GavelSettings(box_format="rel1000", resamples=200)
    written = []
    orders = [predictions, random.Random(1).sample(predictions, len(predictions))]
    for number, (chunk, rows) in enumerate([(4096, orders[0]), (7, orders[0]), (64, orders[1])]):
        monkeypatch.setattr(streaming, "CHUNK", chunk)
        path = write_predictions(tmp_path / f"pred{number}.jsonl", rows)
        result, scores = evaluate_files(gold, path, settings)
        out = tmp_path / f"run{number}" / "results.json"
        write_run(out, result, scores)
        summary = json.loads(out.read_text())
        del summary["manifest"], summary["files"]  # the predictions' name and hash differ
        written.append((summary, out.with_name("results.scores.jsonl").read_bytes()))
    assert written[0] == written[1] == written[2]
    ids = [json.loads(line)["id"] for line in written[0][1].splitlines()]
    assert ids == [f"s{i}" for i in range(N)]  # data order, whatever the predictions' order


def test_scores_kept_on_disk_read_like_a_list(tmp_path):
    gold, _, predictions = make_run(tmp_path, raw=False)
    path = write_predictions(tmp_path / "pred.jsonl", predictions[:50])
    _, scores = evaluate_files(gold, path, GavelSettings(resamples=0))
    as_list = list(scores)
    assert len(as_list) == len(scores) == N
    assert scores[0] == as_list[0] and scores[-1] == as_list[-1] and scores[3:6] == as_list[3:6]
    with pytest.raises(IndexError):
        scores[N]


def test_workers_give_the_same_files_and_the_same_first_error(tmp_path, monkeypatch):
    gold, _, predictions = make_run(tmp_path, raw=True)
    path = write_predictions(tmp_path / "pred.jsonl", predictions)
    settings = GavelSettings(box_format="rel1000", resamples=100)
    monkeypatch.setattr(streaming, "CHUNK", 97)  # many chunks in flight
    written = []
    for workers in ("1", "2", "3"):
        monkeypatch.setenv("GAVEL_SCORE_WORKERS", workers)
        result, scores = evaluate_files(gold, path, settings)
        out = tmp_path / f"w{workers}" / "results.json"
        write_run(out, result, scores)
        summary = json.loads(out.read_text())
        del summary["files"], summary["manifest"]["created_at"]  # a second may pass between
        written.append((summary, out.with_name("results.scores.jsonl").read_bytes()))
    assert written[0] == written[1] == written[2]
    # A damaged line late in the file is still the error, whatever the workers were doing.
    damaged = [json.dumps(r) for r in predictions]
    damaged[2500] = '{"id": "s1", "response": 3}'
    path.write_text("\n".join(damaged) + "\n")
    with pytest.raises(DataError) as raised:
        evaluate_files(gold, path, settings)
    assert raised.value.line == 2501 and raised.value.field == "response"


def test_workers_report_a_missing_box_format_after_reading_the_whole_file(tmp_path, monkeypatch):
    gold, _, predictions = make_run(tmp_path, raw=True)
    monkeypatch.setattr(streaming, "CHUNK", 50)
    monkeypatch.setenv("GAVEL_SCORE_WORKERS", "2")
    path = write_predictions(tmp_path / "pred.jsonl", predictions)
    with pytest.raises(ConfigError, match="no box_format"):
        evaluate_files(gold, path, GavelSettings(resamples=0))
    lines = path.read_text().splitlines()
    lines.append("not json")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError) as raised:  # the damaged line is reported first
        evaluate_files(gold, path, GavelSettings(resamples=0))
    assert raised.value.line == len(lines)


def test_a_wrong_number_of_workers_is_refused_by_name(tmp_path, monkeypatch):
    gold, _, predictions = make_run(tmp_path, raw=False)
    path = write_predictions(tmp_path / "pred.jsonl", predictions[:10])
    monkeypatch.setenv("GAVEL_SCORE_WORKERS", "many")
    with pytest.raises(ConfigError, match="GAVEL_SCORE_WORKERS"):
        evaluate_files(gold, path, GavelSettings(resamples=0))
