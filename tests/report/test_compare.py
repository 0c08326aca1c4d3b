"""``gavel compare``: McNemar by hand, the paired bootstrap against the normal approximation."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from gavel.errors import DataError, GavelError
from gavel.report.compare import compare_runs, mcnemar, paired_bootstrap


def test_mcnemar_exact_by_hand():
    a = np.array([1] * 8 + [0] * 2 + [1] * 5)
    b = np.array([0] * 8 + [1] * 2 + [1] * 5)
    (only_a, only_b), p = mcnemar(a, b)
    assert (only_a, only_b) == (8, 2)
    # two-sided exact binomial: 2 * P(X <= 2), X ~ Bin(10, 1/2) = 2 * (1 + 10 + 45) / 1024
    assert p == pytest.approx(2 * 56 / 1024)
    assert mcnemar(a, a) == ((0, 0), 1.0)


def test_paired_bootstrap_matches_the_normal_approximation():
    rng = np.random.default_rng(0)
    a = rng.normal(0.6, 0.2, 400)
    b = a - rng.normal(0.05, 0.1, 400)  # strongly paired: the difference has sd 0.1
    interval, p = paired_bootstrap(a, b, resamples=4000, rng=np.random.default_rng(1))
    diff = a - b
    half = 1.96 * diff.std(ddof=1) / math.sqrt(len(diff))
    assert interval == pytest.approx([diff.mean() - half, diff.mean() + half], abs=0.003)
    assert p < 0.001


def write_run(folder, benchmark, rows, data_sha="x"):
    folder.mkdir(parents=True)
    result = {"benchmark": benchmark, "manifest": {"data_sha256": data_sha}}
    (folder / "results.json").write_text(json.dumps(result))
    (folder / "results.scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder / "results.json"


def test_gavel_runs_are_joined_per_sample(tmp_path):
    truth = [True, True, True, False]
    a = [{"id": f"s{i}", "verdict_true": t, "verdict_pred": t, "iou": v}
         for i, (t, v) in enumerate(zip(truth, [0.9, 0.6, 0.2, None], strict=True))]  # fmt: skip
    b = [{"id": f"s{i}", "verdict_true": t, "verdict_pred": not t, "iou": v}
         for i, (t, v) in enumerate(zip(truth, [0.9, 0.1, 0.1, None], strict=True))]  # fmt: skip
    benchmark, comparisons, warnings = compare_runs(
        write_run(tmp_path / "a", "gavel", a), write_run(tmp_path / "b", "gavel", b), resamples=200
    )
    by_metric = {c.metric: c for c in comparisons}
    assert benchmark == "gavel" and warnings == []
    assert by_metric["A@0.5"].n == 3  # the clean sample has no box
    assert (by_metric["A@0.5"].a, by_metric["A@0.5"].b) == pytest.approx((200 / 3, 100 / 3))
    assert by_metric["A@0.5"].discordant == (1, 0)
    assert by_metric["accuracy"].difference == pytest.approx(100.0)


def test_videohallucer_compares_pairs(tmp_path):
    def rows(correct):
        return [{"id": f"c/{i}/{side}", "pair": f"c/{i}", "correct": ok}
                for i, pair in enumerate(correct) for side, ok in zip(("basic", "hallucination"), pair, strict=True)]  # fmt: skip

    a = write_run(
        tmp_path / "a", "videohallucer", rows([(True, True), (True, False), (True, True)])
    )
    b = write_run(
        tmp_path / "b", "videohallucer", rows([(True, False), (True, False), (True, True)])
    )
    _, (paired,), _ = compare_runs(a, b, resamples=200)
    assert paired.metric == "paired_accuracy"
    assert (paired.a, paired.b, paired.discordant) == (
        pytest.approx(200 / 3),
        pytest.approx(100 / 3),
        (1, 0),
    )


def test_mismatched_runs_are_refused(tmp_path):
    a = write_run(tmp_path / "a", "gavel", [{"id": "s", "verdict_true": True}])
    b = write_run(tmp_path / "b", "videohallucer", [{"id": "c/0/basic", "pair": "c/0"}])
    with pytest.raises(GavelError, match="cannot compare"):
        compare_runs(a, b)
    (tmp_path / "a" / "results.scores.jsonl").unlink()
    with pytest.raises(GavelError, match="per-sample scores not found"):
        compare_runs(a, a)


def test_compare_command_on_the_demo_photos(gavel, tmp_path):
    assert gavel("demo", "--out", tmp_path / "demo", "--n", "4").returncode == 0
    photos = tmp_path / "demo" / "photos"
    done = gavel("compare", photos / "gpt" / "results.json", photos / "qwen3-vl" / "results.json",
                 "--format", "csv", "--bootstrap", "200")  # fmt: skip
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.splitlines()
    assert header.startswith("Metric,A,B,A−B,95% CI")
    assert {row.split(",")[0] for row in rows} == {"A@0.3", "A@0.5", "A@0.7", "accuracy"}


def test_broken_files_are_located_not_tracebacks(tmp_path):
    good = write_run(tmp_path / "a", "gavel", [{"id": "s", "verdict_true": True}])
    (tmp_path / "a" / "results.scores.jsonl").write_text(
        '{"id": "s", "verdict_true": true}\n{oops\n'
    )
    with pytest.raises(GavelError, match="line 2"):
        compare_runs(good, good)
    (tmp_path / "a" / "results.scores.jsonl").write_text('{"id": "s", "verdict_true": true}\n')
    (tmp_path / "a" / "results.json").write_text('{"benchmark": "nope", "manifest": {}}')
    with pytest.raises(GavelError, match="unknown benchmark"):
        compare_runs(good, good)


@pytest.mark.parametrize(
    ("scores", "line", "field", "message"),
    [
        ('[1, 2]\n', 1, None, "expected a JSON object"),
        ('{"id": "s", "verdict_true": true}\n"text"\n', 2, None, "expected a JSON object"),
        ('{"verdict_true": true}\n', 1, "id", "missing required field"),
        ('{"id": "s"}\n', 1, "verdict_true", "missing required field"),
        ('{"id": 5, "verdict_true": true}\n', 1, "id", "Expected `str`"),
        ('{"id": "s", "verdict_true": "yes"}\n', 1, "verdict_true", "Expected `bool`"),
        ('{"id": "s", "verdict_true": true, "iou": "high"}\n', 1, "iou", "Expected"),
        ('{"id": "s", "verdict_true": true}\n{"id": "s", "verdict_true": false}\n', 2, "id",
         "duplicate id 's' (first on line 1)"),
        ('{"id": "s\\udfff", "verdict_true": true}\n', 1, "id", "lone surrogate"),
        ('{"id": "s", "verdict_true": true, "x": ' + "[" * 1000 + "]" * 1000 + "}\n", 1, None,
         "nested too deeply"),
    ],
)  # fmt: skip
def test_bad_scores_files_name_line_and_field(tmp_path, scores, line, field, message):
    good = write_run(tmp_path / "a", "gavel", [{"id": "s", "verdict_true": True}])
    (tmp_path / "a" / "results.scores.jsonl").write_text(scores)
    with pytest.raises(DataError) as error:
        compare_runs(good, good)
    assert (error.value.line, error.value.field) == (line, field)
    assert message in error.value.message


def test_binary_files_folders_and_results_without_a_manifest(tmp_path):
    good = write_run(tmp_path / "a", "gavel", [{"id": "s", "verdict_true": True}])
    (tmp_path / "a" / "results.scores.jsonl").write_bytes(b"\xff\xfe\x00\x01\n")
    with pytest.raises(DataError, match="line 1: not UTF-8 text"):
        compare_runs(good, good)
    (tmp_path / "a" / "results.scores.jsonl").write_text('{"id": "s", "verdict_true": true}\n')
    assert compare_runs(tmp_path / "a", good, resamples=100)[0] == "gavel"  # a run folder
    with pytest.raises(DataError, match=r"is a folder without results\.json"):
        compare_runs(tmp_path, good)
    (tmp_path / "a" / "results.json").write_text('{"benchmark": "gavel"}')
    with pytest.raises(DataError, match="field 'manifest': missing"):
        compare_runs(good, good)
    (tmp_path / "a" / "results.json").write_bytes(b"\x89PNG\r\n")
    with pytest.raises(DataError, match="not UTF-8 text"):
        compare_runs(good, good)


def test_nan_in_a_results_file_is_refused_as_report_refuses_it(tmp_path):
    from gavel.report.html import load_run

    good = write_run(tmp_path / "a", "gavel", [{"id": "s", "verdict_true": True}])
    document = {"metrics": {"verification": {"accuracy": float("nan")}}}
    document.update(json.loads(good.read_text()))  # the NaN first: read before anything else
    good.write_text(json.dumps(document))  # Python writes NaN; standard JSON has none
    for reader in (lambda: compare_runs(good, good), lambda: load_run(good)):
        with pytest.raises(DataError) as error:
            reader()
        assert error.value.field == "metrics.verification.accuracy"
        assert error.value.message == "not standard JSON: NaN or Infinity"


def test_a_bom_is_read_as_the_data_readers_read_it(tmp_path):
    good = write_run(tmp_path / "a", "gavel", [{"id": "s", "verdict_true": True}])
    for path in (good, good.with_name("results.scores.jsonl")):
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert compare_runs(good, good, resamples=100)[0] == "gavel"
