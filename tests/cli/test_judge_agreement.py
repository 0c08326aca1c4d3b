"""``gavel judge-agreement`` end to end, through the real entry point as a user runs it.

Two runs of the same six samples judged by "judge-a" and "judge-b", and people's scores:

    id  column    judge-a        judge-b        human
    s1  Act       5              5              5
    s2  Act       4              3              4
    s3  Color     2              2              2
    s4  Color     1              2              1
    s5  No hall.  3              judge_error    3
    s6  Obj       not_answered   1              1
    s7  -         -              -              4    (people only)
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import msgspec
import pytest

from gavel.records import GavelScore, Outcome

COLUMNS = {"s1": "Act", "s2": "Act", "s3": "Color", "s4": "Color", "s5": "No hall.", "s6": "Obj"}
JUDGE_A = {"s1": 5, "s2": 4, "s3": 2, "s4": 1, "s5": 3, "s6": "not_answered"}
JUDGE_B = {"s1": 5, "s2": 3, "s3": 2, "s4": 2, "s5": "judge_error", "s6": 1}
HUMAN = {"s1": 5, "s2": 4, "s3": 2, "s4": 1, "s5": 3, "s6": 1, "s7": 4}


def write_run(folder: Path, judge: str, scores: dict[str, int | str]) -> Path:
    """results.json and results.scores.jsonl as `gavel score --judge --out` writes them."""
    folder.mkdir(parents=True)
    records = []
    for sample, value in scores.items():
        if value == "not_answered":
            score, status = 1, "not_answered"
        elif value == "judge_error":
            score, status = None, "judge_error"
        else:
            score, status = value, "ok"
        records.append(
            GavelScore(
                id=sample,
                outcome=Outcome.OK if status != "not_answered" else Outcome.MISSING,
                column=COLUMNS[sample],
                verdict_true=COLUMNS[sample] != "No hall.",
                judge_score=score,
                judge_status=status,
            )
        )
    result = {
        "benchmark": "gavel",
        "metrics": {"explanation": {"Avg": 50.0, "judge": {"name": judge, "model": "m"}}},
        "per_category": {},
        "counts": {"total": len(records)},
        "ci": {},
        "manifest": {"gavel_version": "0", "created_at": "now", "benchmark": "gavel"},
    }
    encoder = msgspec.json.Encoder()
    (folder / "results.json").write_bytes(msgspec.json.format(encoder.encode(result)))
    lines = b"".join(encoder.encode(r) + b"\n" for r in records)
    (folder / "results.scores.jsonl").write_bytes(lines)
    return folder / "results.json"


@pytest.fixture
def files(tmp_path):
    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps({"id": i, "score": s}) + "\n" for i, s in HUMAN.items()))
    return {
        "a": write_run(tmp_path / "a", "judge-a", JUDGE_A),
        "b": write_run(tmp_path / "b", "judge-b", JUDGE_B),
        "human": human,
    }


def rows_of(stdout: str) -> dict[tuple[str, str, str], list[str]]:
    """CSV output as (A, B, column) -> [n, exact, qwk, spearman]."""
    reader = csv.reader(io.StringIO(stdout))
    assert next(reader) == ["A", "B", "Column", "n", "Exact %", "QWK", "Spearman"]
    return {(r[0], r[1], r[2]): r[3:] for r in reader}


def test_two_runs(gavel_main, files):
    done = gavel_main("judge-agreement", files["a"], files["b"], "--format", "csv")
    assert done.code == 0, done.err
    rows = rows_of(done.out)
    # s5 (judge-b: judge_error) and s6 (judge-a: not_answered) are dropped: 4 left,
    # a = 5 4 2 1, b = 5 3 2 2. Exact 2/4. Kappa: observed (0+1+0+1)/4 = 0.5; by chance the
    # mean over all 16 (a_i - b_j)^2 = (22 + 10 + 10 + 22) / 16 = 4 -> 1 - 0.5/4 = 0.875.
    # Spearman: ranks 4 3 2 1 and 4 3 1.5 1.5 -> 4.5 / sqrt(5 * 4.5) = 0.949.
    assert rows["judge-a", "judge-b", "all"] == ["4", "50.0", "0.875", "0.949"]
    # Act: 5 4 / 5 3 -> kappa 1 - 0.5 / ((0 + 4 + 1 + 1) / 4) = 0.667, ranks agree.
    assert rows["judge-a", "judge-b", "Act"] == ["2", "50.0", "0.667", "1.000"]
    # Color: 2 1 / 2 2 -> kappa 1 - 0.5 / 0.5 = 0; judge-b constant -> no Spearman.
    assert rows["judge-a", "judge-b", "Color"] == ["2", "50.0", "0.000", "–"]
    assert set(rows) == {("judge-a", "judge-b", c) for c in ("all", "Act", "Color")}


def test_json_out_and_table(gavel_main, files, tmp_path):
    out = tmp_path / "agreement.json"
    done = gavel_main("judge-agreement", files["a"], files["human"], "--out", out)
    assert done.code == 0, done.err
    assert "judge-a" in done.out and "human" in done.out and "0.875" not in done.out
    assert "1 of its 7 samples not in every file" in done.err  # s7, people only
    report = json.loads(out.read_text())
    assert report["samples"] == 6
    assert report["columns"] == {"Act": 2, "Color": 2, "No hall.": 1, "Obj": 1}
    raters = {r["label"]: r for r in report["raters"]}
    assert raters["human"]["not_in_every_file"] == 1 and raters["judge-a"]["layout"] == "run"
    assert raters["judge-a"]["unscored"] == {"not_answered": 1}
    [pair] = report["pairs"]
    assert (pair["a"], pair["b"], pair["n"], pair["dropped"]) == ("judge-a", "human", 5, 1)
    assert pair["dropped_by_rater"] == {"judge-a": {"not_answered": 1}, "human": {}}
    assert pair["agreement"]["all"] == pytest.approx(
        {"n": 5, "exact": 100.0, "qwk": 1.0, "spearman": 1.0}
    )
    assert pair["agreement"]["No hall."]["n"] == 1
    assert sum(map(sum, pair["confusion"])) == 5 and pair["confusion"][4][4] == 1
    same = gavel_main("judge-agreement", files["a"], files["human"], "--format", "json")
    assert json.loads(same.out) == report


def test_two_judges_pooled_against_people(gavel_main, files):
    done = gavel_main(
        "judge-agreement",
        "--judge", files["a"], "--judge", files["b"], "--reference", files["human"],
        "--label", "A", "--format", "csv",
    )  # fmt: skip
    assert done.code == 0, done.err
    rows = rows_of(done.out)
    # Pooled over s1-s4 (the samples both judges scored): A = 5 4 2 1, judge-b = 5 3 2 2.
    # mean 5, 3.5, 2, 1.5 -> half up 5 4 2 2; majority (ties to the lower) 5 3 2 1.
    # human 5 4 2 1.
    # mean vs human: exact 3/4; kappa observed 1/4, chance (26 + 14 + 14 + 14) / 16 = 4.25
    # -> 1 - 1/17 = 0.941; Spearman on the unrounded mean, same order as human -> 1.
    assert rows["mean", "human", "all"] == ["4", "75.0", "0.941", "1.000"]
    # majority vs human: exact 3/4; chance (26 + 10 + 14 + 26) / 16 = 4.75 -> 1 - 1/19 = 0.947.
    assert rows["majority", "human", "all"] == ["4", "75.0", "0.947", "1.000"]
    # A vs human over s1-s5 (s6 not answered): identical.
    assert rows["A", "human", "all"] == ["5", "100.0", "1.000", "1.000"]
    # A = 5 4 2 1 against the mean 5 4 2 2 and the majority 5 3 2 1.
    assert rows["A", "mean", "all"][:2] == ["4", "75.0"]
    assert rows["A", "majority", "all"][:2] == ["4", "75.0"]
    assert ("A", "judge-b", "all") in rows and ("judge-b", "majority", "all") in rows
    assert "mean: the judges' mean" not in done.out  # notes are for the terminal table
    table = gavel_main("judge-agreement", "--judge", files["a"], "--judge", files["b"])
    assert "rounded half up" in table.out


def test_same_judge_twice_gets_unique_labels(gavel_main, files):
    done = gavel_main("judge-agreement", files["a"], files["a"], "--format", "csv")
    assert done.code == 0, done.err
    assert rows_of(done.out)["judge-a", "judge-a (2)", "all"] == ["5", "100.0", "1.000",
                                                                     "1.000"]  # fmt: skip


def test_plot_writes_a_png(gavel_main, files, tmp_path):
    plot = tmp_path / "confusion.png"
    done = gavel_main(
        "judge-agreement", files["a"], files["b"], "--reference", files["human"], "--plot", plot
    )
    assert done.code == 0, done.err
    assert plot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_broken_line_is_named(gavel_main, files, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "s1", "score": 5}\n\n{"id": "s2", "score": 4.5}\n')
    done = gavel_main("judge-agreement", files["a"], bad)
    assert done.code == 2
    assert f"{bad}, line 3, field 'score': must be an integer from 1 to 5" in done.err
    assert "Traceback" not in done.err


def test_run_without_judge_and_too_few_files(gavel_main, files, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "results.json").write_text(json.dumps({"benchmark": "gavel", "metrics": {}}))
    done = gavel_main("judge-agreement", files["a"], plain / "results.json")
    assert done.code == 2 and "was scored without --judge" in done.err
    alone = gavel_main("judge-agreement", files["a"])
    assert alone.code == 2 and "at least two score files" in alone.err
    nothing_shared = tmp_path / "other.json"
    nothing_shared.write_text(json.dumps({"x1": 3}))
    apart = gavel_main("judge-agreement", files["a"], nothing_shared)
    assert apart.code == 2 and "no sample id is in every file" in apart.err


def test_nan_in_a_results_file_is_refused_and_a_bom_is_not(gavel_main, files):
    """The same as `gavel report` does with results files, and the data readers with a BOM."""
    results = files["a"]
    good = results.read_bytes()
    results.write_bytes(good.replace(b'"Avg": 50.0', b'"Avg": NaN', 1))
    assert b"NaN" in results.read_bytes()
    done = gavel_main("judge-agreement", results, files["b"])
    assert done.code == 2, done.text
    assert done.err.strip() == (
        f"error: {results}, field 'metrics.explanation.Avg': not standard JSON: NaN or Infinity"
    )
    results.write_bytes(b"\xef\xbb\xbf" + good)
    human = files["human"]
    human.write_bytes(b"\xef\xbb\xbf" + human.read_bytes())
    done = gavel_main("judge-agreement", results, files["b"], human, "--format", "csv")
    assert done.code == 0, done.text
    assert rows_of(done.out)["judge-a", "judge-b", "all"] == ["4", "50.0", "0.875", "0.949"]
