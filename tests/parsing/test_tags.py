"""DetailVerifyBench answers: extraction, the official validity rules, gold tag handling."""

from __future__ import annotations

import pytest

from gavel.parsing.tags import (
    VALID,
    Validity,
    extract_result,
    is_no_hallucination,
    normalize_gold_tags,
    odd_case_tags,
    strip_tags,
    tag_structure_problem,
    validate,
    words,
)

H, E = "<HALLUCINATION>", "</HALLUCINATION>"
CAPTION = "The red car is parked. Two dogs sit nearby."


# --- extraction ------------------------------------------------------------------------------


def test_without_thinking_the_first_result_block_counts():
    text = "<result> first </result> then <result>second</result>"
    assert extract_result(text) == "first"


def test_with_thinking_the_last_result_block_counts():
    # A reasoning trace that quotes the format must not win over the final answer.
    text = "<think>I could answer <result>NO HALLUCINATION</result>.</think><result>A cat.</result>"
    assert extract_result(text, thinking=True) == "A cat."
    assert extract_result(text, thinking=False) == "NO HALLUCINATION"


def test_thinking_falls_back_to_the_text_after_the_last_think_close():
    text = "<think>a</think>b</think>  The red car. "
    assert extract_result(text, thinking=True) == "The red car."
    # No fallback without thinking.
    assert extract_result(text, thinking=False) == ""


def test_nothing_to_extract_gives_empty():
    assert extract_result("The red car.", thinking=True) == ""
    assert extract_result(None) == ""
    assert extract_result("") == ""


def test_result_tags_are_case_sensitive_and_span_lines():
    assert extract_result("<Result>x</Result>") == ""
    assert extract_result("<result>\nline one\nline two\n</result>") == "line one\nline two"


def test_an_unclosed_result_block_blocks_later_ones_like_the_regex():
    # re.finditer(r"<result>(.*?)</result>") matches "<result>a <result>b</result>" as one block
    # whose text starts with the first tag's content.
    assert extract_result("<result>a <result>b</result>") == "a <result>b"
    assert extract_result("x <result>never closed") == ""


def test_hostile_text_is_handled_in_linear_time():
    text = "<result>" * 200_000
    assert extract_result(text, thinking=True) == ""


# --- validity -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer", ["NO HALLUCINATION", "  no hallucination \n", "No Hallucination"]
)
def test_no_hallucination_in_any_case_is_valid(answer):
    assert is_no_hallucination(answer)
    assert validate(CAPTION, answer) is Validity.NO_HALLUCINATION


def test_no_hallucination_must_be_the_whole_answer():
    assert not is_no_hallucination("NO HALLUCINATION.")
    assert validate(CAPTION, "NO HALLUCINATION found") is Validity.WORDS_CHANGED


def test_a_correctly_tagged_caption_is_valid():
    answer = f"The {H}red{E} car is parked. Two {H}dogs sit{E} nearby."
    assert validate(CAPTION, answer) is Validity.TAGGED
    assert validate(CAPTION, CAPTION) is Validity.TAGGED  # no tag at all: flags nothing


def test_unbalanced_tags_are_invalid():
    assert validate(CAPTION, f"The {H}red car is parked. Two dogs sit nearby.") is (
        Validity.TAGS_MISMATCH
    )
    assert validate(CAPTION, f"The red{E} car is parked. Two dogs sit nearby.") is (
        Validity.TAGS_MISMATCH
    )


def test_nested_tags_are_invalid():
    answer = f"The {H}red {H}car{E}{E} is parked. Two dogs sit nearby."
    assert validate(CAPTION, answer) is Validity.NESTED


def test_nesting_across_a_newline_is_not_detected():
    # The official regex has no DOTALL, so this passes as valid.
    caption = "The red\ncar."
    assert validate(caption, f"The {H}red\n{H}car{E}{E}.") is Validity.TAGGED


def test_tag_order_is_never_checked():
    # A close before its open: counts match and nothing nests, so the answer is valid.
    assert validate(CAPTION, f"The {E}red{H} car is parked. Two dogs sit nearby.") is (
        Validity.TAGGED
    )


def test_changed_words_are_invalid():
    answer = f"The {H}blue{E} car is parked. Two dogs sit nearby."
    assert validate(CAPTION, answer) is Validity.WORDS_CHANGED
    assert validate(CAPTION, "the red car is parked. Two dogs sit nearby.") is (
        Validity.WORDS_CHANGED  # case of a word counts
    )


def test_punctuation_and_spacing_may_change():
    # \w+ words only: "3.5" -> "3,5" and "well-known" -> "well - known" both pass.
    caption = "A well-known car at 3.5 metres."
    assert validate(caption, "A well - known car at 3,5 metres") is Validity.TAGGED


def test_only_upper_case_tags_count_in_model_output():
    # The gold's <Hallucination> spelling is plain text in an answer: its letters are words.
    answer = "The <Hallucination>red</Hallucination> car is parked. Two dogs sit nearby."
    assert validate(CAPTION, answer) is Validity.WORDS_CHANGED
    answer = "The <hallucination>red</hallucination> car is parked. Two dogs sit nearby."
    assert validate(CAPTION, answer) is Validity.WORDS_CHANGED


def test_an_empty_answer_is_invalid():
    assert validate(CAPTION, "") is Validity.EMPTY
    assert Validity.EMPTY not in VALID


def test_words_are_unicode():
    assert words("Café naïve, 3.5!") == ["Café", "naïve", "3", "5"]


# --- gold tags ------------------------------------------------------------------------------


def test_only_the_exact_mixed_case_gold_spelling_is_normalised():
    text = "A <Hallucination>red</Hallucination> and <hallucination>blue</hallucination> car"
    out = normalize_gold_tags(text)
    assert out == f"A {H}red{E} and <hallucination>blue</hallucination> car"
    assert odd_case_tags(out) == 2
    assert strip_tags(out) == "A red and <hallucination>blue</hallucination> car"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (f"a {H}b", "never closed"),
        (f"a {E}b", "without an opening tag"),
        (f"{H}a {H}b{E}{E}", "nested"),
        (f"{H}a{E} {H}b", "never closed"),
    ],
)
def test_gold_tags_must_pair(text, problem):
    found = tag_structure_problem(text)
    assert found is not None and problem in found.message


def test_paired_gold_tags_pass():
    assert tag_structure_problem(f"{H}a{E} b {H}c{E}") is None
    assert tag_structure_problem("no tags") is None
