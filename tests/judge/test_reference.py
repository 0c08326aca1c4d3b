"""The rule-based reference: word matching and both rubric ladders on hand-written answers."""

from __future__ import annotations

import pytest

from gavel.judge.items import NOT_ANSWERED, OK, JudgeItem
from gavel.judge.protocol import prediction_text
from gavel.judge.reference import (
    ReferenceJudge,
    describes_error,
    explanation_of,
    load_errors,
    names,
    reference_score,
)
from gavel.synth.gavel_set import generate_gavel

COLOR = {"category": "Color", "claim": "red", "truth": "blue"}
GROUND_TRUTH = "The caption says the circle in the top left is red, but it is blue."


@pytest.mark.parametrize(
    ("text", "word", "named"),
    [
        ("It is Blue.", "blue", True),
        ("It is bluish.", "blue", False),
        ("re-drawn in red", "red", True),
        ("a reddish circle", "red", False),
        ("two crosses", "cross", True),
        ("There are 3 of them.", "three", True),
        ("It is big.", "large", True),
        ("It has no pattern.", "plain", True),
        ("It is only outlined.", "outlined", True),
        ("in the top-left corner", "in the top left", True),
        ("in the middle left part of the image", "on the left", True),
        ("at the top left", "at the top", False),
        ("it sits at the top.", "at the top", True),
        ("in the middle of the image", "in the center", True),
        ("", "red", False),
    ],
)
def test_whole_word_matching_with_equivalents(text, word, named):
    assert names(text, word) is named


@pytest.mark.parametrize(
    ("verdict", "explanation", "score"),
    [
        (True, GROUND_TRUTH, 5),
        (True, "It is blue, not red.", 5),
        (True, "In the image the circle is BLUE.", 4),
        (True, "The caption is wrong that the circle is red.", 3),
        (True, "Something in the caption is wrong.", 2),
        (True, "", 2),
        (True, "The caption says the square is green, but it is yellow.", 2),
        (False, GROUND_TRUTH, 1),
        (False, "The caption matches the image.", 1),
        (None, GROUND_TRUTH, 4),
        (None, "In the image the circle is blue.", 3),
        (None, "The caption is wrong that the circle is red.", 2),
        (None, "I cannot tell.", 1),
    ],
)
def test_the_hallucination_ladder(verdict, explanation, score):
    assert reference_score(True, verdict, explanation, COLOR).score == score


@pytest.mark.parametrize(
    ("verdict", "explanation", "score"),
    [
        (False, "The caption matches the image.", 5),
        (False, "", 5),
        (False, "The description is accurate; nothing in it is wrong.", 5),
        (False, "There is no error.", 5),
        (False, "The caption probably matches the image, but I am not sure.", 4),
        (False, "The caption says the circle is red, but it is blue.", 2),
        (None, "The caption is correct.", 3),
        (None, "It seems correct.", 2),
        (None, "I cannot tell.", 2),
        (None, "The circle is wrong.", 1),
        (True, "The caption matches the image.", 1),
        (True, GROUND_TRUTH, 1),
    ],
)
def test_the_no_hallucination_ladder(verdict, explanation, score):
    assert reference_score(False, verdict, explanation, None).score == score


def test_denials_are_not_errors():
    assert not describes_error("There is no hallucination and no error.")
    assert not describes_error("Nothing is wrong here.")
    assert describes_error("The caption says there is a red circle, but the object is a star.")


def test_a_hallucinated_sample_needs_its_error_words():
    with pytest.raises(ValueError, match="claim and truth"):
        reference_score(True, True, GROUND_TRUTH, None)


def test_the_verdict_prefix_is_removed():
    assert explanation_of(prediction_text(True, "It is blue.")) == "It is blue."
    assert explanation_of(prediction_text(None, None)) == ""


def test_on_a_synthetic_set_the_annotation_itself_scores_5(tmp_path):
    """The error records in scenes.jsonl, read back, make every annotation a perfect answer
    and the answer "no hallucination" a 1 (and the reverse for clean samples)."""
    import json

    generate_gavel(tmp_path, 24, seed=3, clean_share=0.2)
    errors = load_errors(tmp_path / "scenes.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "gavel.jsonl").read_text().splitlines()]
    judge = ReferenceJudge(errors)
    for row in rows:
        column = row["category"] or "No hall."
        right = JudgeItem(
            row["id"],
            column,
            row["hallucinated"],
            row["hallucinated"],
            prediction_text(row["hallucinated"], row["explanation"]),
            row["explanation"],
        )
        wrong = JudgeItem(row["id"], column, row["hallucinated"], not row["hallucinated"], "x", "")
        missing = JudgeItem(row["id"], column, row["hallucinated"], None, None, "")
        got = judge.judge([right, wrong, missing])
        assert [j.score for j in got] == [5, 1, 1], (row, got)
        assert [j.status for j in got] == [OK, OK, NOT_ANSWERED]
