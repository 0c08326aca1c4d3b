"""Reading per-sample judge scores from runs, score files, people's JSONL and id -> score maps."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from gavel.errors import DataError
from gavel.io.run_files import scores_path
from gavel.judge.score_files import MAPPING, RECORDS, RUN, SCORES, read_scores
from gavel.records import GavelScore, Outcome


def _score(sample: str, column: str, score: int | None, status: str | None) -> GavelScore:
    return GavelScore(
        id=sample,
        outcome=Outcome.OK,
        column=column,
        verdict_true=column != "No hall.",
        judge_score=score,
        judge_status=status,
    )


SCORES_OF_RUN = [
    _score("s1", "Act", 5, "ok"),
    _score("s2", "Color", None, "judge_error"),
    _score("s3", "No hall.", 1, "not_answered"),
    _score("s4", "Obj", 2, "ok"),
]


def write_run(folder: Path, scores: list[GavelScore], judge: str | None = "judge-a") -> Path:
    """A results.json as `gavel score --judge --out` writes it, with its per-sample scores."""
    folder.mkdir(parents=True, exist_ok=True)
    explanation = None if judge is None else {"Avg": 60.0, "judge": {"name": judge}}
    result = {
        "benchmark": "gavel",
        "metrics": {"grounding": {}, "explanation": explanation},
        "per_category": {},
        "counts": {"total": len(scores)},
        "ci": {},
        "manifest": {"gavel_version": "0", "created_at": "now", "benchmark": "gavel"},
    }
    results = folder / "results.json"
    results.write_text(json.dumps(result, indent=2))
    encoder = msgspec.json.Encoder()
    scores_path(results).write_bytes(b"".join(encoder.encode(s) + b"\n" for s in scores))
    return results


def write_lines(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_run_reads_the_scores_beside_it(tmp_path):
    results = write_run(tmp_path / "run", SCORES_OF_RUN)
    scores = read_scores(results)
    assert (scores.kind, scores.label) == (RUN, "judge-a")
    assert scores.source == tmp_path / "run" / "results.scores.jsonl"
    assert scores.scores == {"s1": 5, "s4": 2}
    # A judge error has no score; a sample the model never answered is scored 1 by rule, not
    # by the judge, so it is not the judge's score either.
    assert scores.unscored == {"s2": "judge_error", "s3": "not_answered"}
    assert scores.columns == {"s1": "Act", "s2": "Color", "s3": "No hall.", "s4": "Obj"}
    assert scores.ids == ["s1", "s2", "s3", "s4"]
    assert read_scores(tmp_path / "run").scores == scores.scores  # the run folder works too


def test_run_without_judge_says_so(tmp_path):
    plain = [GavelScore(id="s1", outcome=Outcome.OK, column="Act", verdict_true=True)]
    results = write_run(tmp_path / "run", plain, judge=None)
    with pytest.raises(DataError, match="was scored without --judge"):
        read_scores(results)
    with pytest.raises(DataError, match="scored without --judge"):
        read_scores(scores_path(results))


def test_run_of_another_benchmark_or_without_scores(tmp_path):
    other = tmp_path / "vh.json"
    other.write_text(json.dumps({"benchmark": "videohallucer", "metrics": {}}))
    with pytest.raises(DataError, match="GAVEL only"):
        read_scores(other)
    results = write_run(tmp_path / "run", SCORES_OF_RUN)
    scores_path(results).unlink()
    with pytest.raises(DataError, match=r"results\.scores\.jsonl: per-sample scores not found"):
        read_scores(results)


def test_scores_file_directly_takes_the_judge_name_beside_it(tmp_path):
    results = write_run(tmp_path / "run", SCORES_OF_RUN, judge="big-judge")
    scores = read_scores(scores_path(results))
    assert (scores.kind, scores.label) == (SCORES, "big-judge")
    alone = tmp_path / "proxy.scores.jsonl"
    alone.write_bytes(scores_path(results).read_bytes())
    assert read_scores(alone).label == "proxy"


def test_people_jsonl_with_and_without_column(tmp_path):
    path = write_lines(
        tmp_path / "human.jsonl",
        [
            {"id": "s1", "score": 4, "column": "Act"},
            {"id": "s2", "score": None},
            {"id": 7, "score": 1, "note": "ids written as numbers are read as text"},
        ],
    )
    scores = read_scores(path)
    assert (scores.kind, scores.label) == (RECORDS, "human")
    assert scores.scores == {"s1": 4, "7": 1}
    assert scores.unscored == {"s2": "no score"}
    assert scores.columns == {"s1": "Act"}
    single = write_lines(tmp_path / "one.jsonl", [{"id": "s1", "score": 3}])
    assert read_scores(single).scores == {"s1": 3}  # one line is still JSONL, not a map


def test_mapping_of_id_to_score(tmp_path):
    path = tmp_path / "people.json"
    path.write_text(json.dumps({"s1": 3, "s2": None, "s3": 5}, indent=2))
    scores = read_scores(path)
    assert (scores.kind, scores.label) == (MAPPING, "people")
    assert scores.scores == {"s1": 3, "s3": 5} and scores.unscored == {"s2": "no score"}
    assert scores.columns == {}


@pytest.mark.parametrize("bad", [0, 6, 3.5, 4.0, "4", True, [3]])
def test_scores_must_be_integers_one_to_five(tmp_path, bad):
    path = write_lines(tmp_path / "h.jsonl", [{"id": "s1", "score": 2}, {"id": "s2", "score": bad}])
    with pytest.raises(DataError) as caught:
        read_scores(path)
    assert str(caught.value).startswith(f"{path}, line 2, field 'score': must be an integer")
    mapping = tmp_path / "m.json"
    mapping.write_text('{\n  "s1": 2,\n  "s2": ' + json.dumps(bad) + "\n}\n")
    with pytest.raises(DataError) as caught:
        read_scores(mapping)
    assert str(caught.value).startswith(f"{mapping}, line 3, field 's2': must be an integer")


def test_judge_score_out_of_range_in_a_run(tmp_path):
    bad = [*SCORES_OF_RUN[:1], _score("s9", "Act", 7, "ok")]
    results = write_run(tmp_path / "run", bad)
    with pytest.raises(DataError, match=r"scores\.jsonl, line 2, field 'judge_score'"):
        read_scores(results)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "s1", "score": 2}', '{"id": "s1", "score": 3}'], r"line 2, field 'id'.*twice"),
        (['{"id": "s1", "score": 2}', '{"id": "s2" "score": 3}'], "line 2: not valid JSON"),
        (['{"id": "s1", "score": 2}', "[1, 2]"], "line 2: not a JSON object"),
        (['{"id": "s1", "score": 2}', '{"id": "s2"}'], r"line 2, field 'score': missing"),
        (['{"id": "s1", "score": 2}', '{"score": 2}'], r"line 2, field 'id': missing"),
        (['{"id": "s1", "score": 2, "column": "Colour"}'], r"line 1, field 'column': unknown"),
        (['{"id": "s1", "nothing": 2}', "{}"], "line 1: expected"),
        (['{"id": "s1", "score": 2, "score": 3}', "{}"], r"line 1, field 'score': given twice"),
        (
            ['{"id": "s1", "outcome": "ok", "judge_status": "maybe"}'],
            r"line 1, field 'judge_status': unknown status",
        ),
        (
            ['{"id": "s1", "outcome": "ok", "judge_status": "ok"}'],
            r"line 1, field 'judge_score': missing",
        ),
    ],
)
def test_broken_lines_are_located(tmp_path, lines, message):
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=message) as caught:
        read_scores(path)
    assert str(caught.value).startswith(str(path))


def test_broken_documents_are_located(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{\n  "s1": 2,\n  "s2" 3\n}\n')
    with pytest.raises(DataError, match=r"m\.json, line 3: not valid JSON"):
        read_scores(path)
    path.write_text('{\n  "s1": 2,\n  "s1": 3\n}\n')
    with pytest.raises(DataError, match=r"m\.json, line 3, field 's1': given twice"):
        read_scores(path)
    path.write_text("[1, 2, 3]")
    with pytest.raises(DataError, match=r"expected a results\.json"):
        read_scores(path)
    path.write_text("\n \n")
    with pytest.raises(DataError, match="is empty"):
        read_scores(path)
    with pytest.raises(DataError, match="file not found"):
        read_scores(tmp_path / "absent.json")
    with pytest.raises(DataError, match=r"folder without results\.json"):
        read_scores(tmp_path)


HUGE = "7" * 5000


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ('{"id": "a", "score": 3}\n{"id": "b", "score": ' + HUGE + "}\n", 2, None,
         "too many digits"),
        ('{"a": 3, "b": ' + HUGE + "}", None, None, "too many digits"),
        ('{"id": "a", "score": 3}\n{"id": ' + HUGE + ', "score": 3}\n', 2, None,
         "too many digits"),
        ('{"id": "a", "score": 3}\n{"id": "b\\udfff", "score": 3}\n', 2, "id", "lone surrogate"),
        ('{"a\\udfff": 3}', None, "a\\udfff", "lone surrogate"),
        ('{"id": "a", "score": 3, "x": ' + "[" * 1000 + "]" * 1000 + "}\n", 1, None,
         "nested too deeply"),
        ('{"id": "a", "score": 3}\n{"id": 12345678901234567890123, "score": 3}\n', 2, "id",
         "must be a string"),
        ('{"id": "a", "score": 3, "column": ["Obj"]}\n', 1, "column", "unknown column"),
    ],
)  # fmt: skip
def test_numbers_too_long_surrogates_and_deep_nesting_are_located(
    tmp_path, text, line, field, message
):
    path = tmp_path / "scores.jsonl"
    path.write_text(text)
    with pytest.raises(DataError) as error:
        read_scores(path)
    assert (error.value.line, error.value.field) == (line, field)
    assert message in error.value.message
