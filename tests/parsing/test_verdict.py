"""parse_verdict and parse_explanation: the documented rules, in order, and hostile text.

Each reader is given the filter GAVEL's scorer hands it (every prompt sent), as in a run.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gavel.benchmarks.registry import echo_filter
from gavel.parsing import verdict
from gavel.parsing.verdict import MAX_EXPLANATION, NO_ECHO, verdict_from_object

#: What GAVEL's scorer reads answers with.
ECHO = echo_filter()


def read_answer(text, **options):
    return verdict.read_answer(text, echo=ECHO, **options)


def parse_verdict(text, **options):
    return verdict.parse_verdict(text, echo=ECHO, **options)


def parse_explanation(text):
    return verdict.parse_explanation(text, echo=ECHO)


def test_without_a_filter_nothing_is_set_aside():
    """The reader knows no prompt: only its caller's filter sets copied text aside."""
    copied = "Use an empty list when there is no error."
    assert verdict.read_answer(copied, echo=NO_ECHO).copied == 0
    assert read_answer(copied).copied == 1


# ============================================================================================
# Rule 1: a JSON object with a verdict key


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"hallucination": true}', True),
        ('{"hallucination": false}', False),
        ('{"hallucinated": "yes"}', True),
        ('{"hallucinated": "No"}', False),
        ('{"has_hallucination": 1}', True),
        ('{"is_hallucinated": 0}', False),
        ('{"contains_hallucination": "True"}', True),
        ('{"hallucination_detected": "false"}', False),
        ('{"has_error": true}', True),
        ('{"has_error": 0}', False),
        ('{"error": "yes"}', True),
        ('{"verdict": "yes"}', True),
        ('{"verdict": "no hallucination"}', False),
        ('{"verdict": "No Hallucination."}', False),
        ('{"verdict": "not hallucinated"}', False),
        ('{"verdict": "Hallucinated"}', True),
        ('{"verdict": "incorrect"}', True),
        ('{"verdict": "correct"}', False),
        ('{"verdict": "No error"}', False),
        ('{"label": "inconsistent"}', True),
        ('{"answer": "Yes!"}', True),
        ('{"result": "accurate"}', False),
        ('{"Hallucination": "YES"}', True),  # keys and words are case-insensitive
        ("{'hallucination': True, 'explanation': 'x'}", True),  # Python literal
        ('```json\n{"hallucination": false, "explanation": "All fine."}\n```', False),
        ('[{"hallucination": true, "bbox_2d": [1, 2, 3, 4]}]', True),  # list of objects
    ],
)
def test_verdict_keys(answer, expected):
    assert parse_verdict(answer) is expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"is_correct": true}', False),
        ('{"is_correct": false}', True),
        ('{"correct": "yes"}', False),
        ('{"accurate": "no"}', True),
        ('{"is_accurate": 1}', False),
        ('{"consistent": false}', True),
        ('{"is_consistent": "true"}', False),
    ],
)
def test_inverted_keys(answer, expected):
    assert parse_verdict(answer) is expected


def test_verdict_key_beats_inverted_key():
    assert parse_verdict('{"is_correct": true, "hallucination": true}') is True


def test_earlier_verdict_key_in_the_priority_list_wins():
    # "hallucination" is tried before "verdict" whatever the order in the object.
    assert parse_verdict('{"verdict": "correct", "hallucination": true}') is True


def test_unknown_value_falls_through_to_the_next_key():
    assert parse_verdict('{"hallucination": "maybe", "has_error": false}') is False


def test_unknown_value_falls_through_to_prose():
    answer = '{"hallucination": "partially"} The caption contains an error about the dog.'
    assert parse_verdict(answer) is True


def test_json_object_beats_leading_prose():
    # Rule 1 comes before rule 2.
    assert parse_verdict('Yes. {"hallucination": false}') is False


def test_numbers_other_than_0_and_1_are_not_verdicts():
    assert parse_verdict('{"hallucination": 2}') is None
    assert parse_verdict('{"hallucination": 1.0}') is True


def test_json_without_verdict_key_uses_prose():
    assert parse_verdict('{"bbox": [1, 2, 3, 4]} There is no hallucination.') is False
    assert parse_verdict('{"label": "cat", "bbox": [1, 2, 3, 4]}') is None


def test_first_object_only():
    # The first decoded object decides (or falls through to prose), not a later one.
    assert parse_verdict('{"note": "hi"} {"is_correct": false}') is None
    # Prose phrases also read JSON text: '"hallucination": true' matches "hallucinat… true".
    assert parse_verdict('{"note": "hi"} {"hallucination": true}') is True


# ============================================================================================
# Rule 2: the answer opens with yes / no


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Yes", True),
        ("yes.", True),
        ("Yes, the caption says the car is red but it is blue.", True),
        ("**Yes** - the dog is brown.", True),
        ("  \n- YES: there is a mismatch", True),
        ("No", False),
        ("No. The caption is accurate.", False),
        ("No, but the caption contains an error.", False),  # the opening word decides
        ("no hallucination", False),
    ],
)
def test_leading_yes_no(answer, expected):
    assert parse_verdict(answer) is expected


@pytest.mark.parametrize(
    "answer", ["Yesterday I saw a dog.", "Nope.", "Nothing to report.", "None."]
)
def test_words_starting_with_yes_or_no_are_not_leading_answers(answer):
    assert parse_verdict(answer) is None


def test_not_is_not_no():
    assert parse_verdict("Not hallucinated: the caption matches.") is False


# ============================================================================================
# Rule 3: the earliest verdict phrase


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("There is no hallucination in this caption.", False),
        ("There are no errors.", False),
        ("The caption does not contain any hallucinations.", False),
        ("The caption is free of errors.", False),
        ("After checking every object, the caption is accurate.", False),
        ("The description is fully consistent with the image.", False),
        ("The caption accurately describes the scene.", False),
        ("Hallucination: no", False),
        ("hallucinated - false", False),
        ("The caption contains an error: the car is red, not blue.", True),
        ("The caption contains a hallucination.", True),
        ("This sentence has mistakes.", True),
        ("There is a hallucination about the dog.", True),
        ("The second object is hallucinated.", True),
        ("The caption is incorrect about the colour.", True),
        ("The text is misleading.", True),
        ("The described scene does not match the image.", True),
        ("The count doesn't match.", True),
        ("Hallucination: yes", True),
    ],
)
def test_phrases(answer, expected):
    assert parse_verdict(answer) is expected


def test_earliest_phrase_wins():
    clean_first = "Overall there is no hallucination, although the caption contains an error? No."
    assert parse_verdict("I checked. " + clean_first) is False
    error_first = "The caption contains an error; otherwise there is no hallucination."
    assert parse_verdict(error_first) is True
    assert (
        parse_verdict("Looking closely, the colour does not match, the caption is accurate") is True
    )
    assert (
        parse_verdict("Looking closely, the caption is accurate, the colour does not match")
        is False
    )


def test_phrases_are_case_insensitive():
    assert parse_verdict("Well. THERE IS NO HALLUCINATION.") is False
    assert parse_verdict("Well. The Caption Contains An Error.") is True


def test_box_markup_does_not_break_phrases():
    answer = (
        "The <ref>caption</ref><box>[[1, 2, 3, 4]]</box> contains an error "
        "<|begin_of_box|>[[1, 2, 3, 4]]<|end_of_box|>."
    )
    assert parse_verdict(answer) is True


# ============================================================================================
# Rule 4: unresolved


@pytest.mark.parametrize(
    "answer",
    [
        None,
        "",
        "   ",
        "I cannot tell from this image.",
        "The dog is brown.",
        '{"hallucination": null}',
        '{"explanation": "The dog is brown."}',
        "[1, 2, 3, 4]",
    ],
)
def test_unresolved(answer):
    assert parse_verdict(answer) is None


# ============================================================================================
# <think> blocks


def test_think_block_is_ignored():
    answer = (
        "<think>Hmm, the caption contains an error? Let me look.</think>There is no hallucination."
    )
    assert parse_verdict(answer) is False
    answer = '<think>{"hallucination": false}</think>Yes, the car is red.'
    assert parse_verdict(answer) is True


def test_verdict_only_inside_think_is_unresolved():
    assert parse_verdict("<think>Yes, the caption contains an error.</think>") is None


def test_unclosed_think_is_unresolved():
    # Cut off while reasoning: there is no final answer to read.
    assert parse_verdict("<think>So the caption contains an error because the") is None


def test_closing_think_only():
    assert parse_verdict("Yes it might be wrong...</think>No. The caption is accurate.") is False


# ============================================================================================
# Explanations


def test_explanation_from_json_key():
    answer = '{"hallucination": true, "explanation": "  The car is blue, not red.  "}'
    assert parse_explanation(answer) == "The car is blue, not red."


@pytest.mark.parametrize(
    "key", ["explanation", "reason", "reasoning", "rationale", "analysis", "error_description"]
)
def test_every_explanation_key(key):
    assert parse_explanation(f'{{"hallucination": true, "{key}": "Two dogs, not three."}}') == (
        "Two dogs, not three."
    )


def test_explanation_key_priority():
    answer = '{"description": "a scene", "reason": "second", "explanation": "first"}'
    assert parse_explanation(answer) == "first"


def test_blank_explanation_falls_through_to_the_next_key():
    answer = '{"explanation": "   ", "reason": "The sign says STOP."}'
    assert parse_explanation(answer) == "The sign says STOP."


def test_fenced_json_explanation():
    answer = '```json\n{"hallucination": true, "Explanation": "Wrong colour."}\n```'
    assert parse_explanation(answer) == "Wrong colour."


def test_explanation_from_prose_strips_box_markup():
    answer = (
        "Yes. The <ref>red car</ref><box>[[412, 530, 688, 811]]</box> is actually blue; "
        "the <|ref|>sign<|/ref|><|det|>[[1, 2, 3, 4]]<|/det|> says STOP "
        "<|begin_of_box|>[[94,598,177,991]]<|end_of_box|>, "
        "<|object_ref_start|>eyes<|object_ref_end|><|box_start|>(1,2),(3,4)<|box_end|> and"
        " the dog<loc_54><loc_375><loc_906><loc_707> is <loc0180><loc0596><loc0782><loc0961>"
        "brown <p-100><p-300><p200><p45>."
    )
    assert parse_explanation(answer) == (
        "Yes. The red car is actually blue; the sign says STOP , eyes and the dog is brown ."
    )


def test_explanation_prose_drops_code_fences_and_think():
    answer = '<think>long reasoning</think>The dog is brown.\n```json\n{"bbox": [1, 2, 3, 4]}\n```'
    assert parse_explanation(answer) == "The dog is brown."


def test_explanation_prose_collapses_whitespace():
    assert parse_explanation("  The dog\n\n is   brown.\t") == "The dog is brown."


def test_explanation_without_explanation_key_is_the_prose():
    # Current behaviour (reported as debatable): a bare JSON object without an explanation key
    # comes back as its own text, while a fenced one is removed as markup and leaves "".
    assert parse_explanation('{"hallucination": true}') == '{"hallucination": true}'
    assert parse_explanation('```json\n{"hallucination": true}\n```') == ""


def test_explanation_is_truncated():
    assert len(parse_explanation("word " * 5000)) == MAX_EXPLANATION
    long_json = '{"explanation": "' + "x" * 10_000 + '"}'
    assert parse_explanation(long_json) == "x" * MAX_EXPLANATION


def test_explanation_of_nothing():
    assert parse_explanation(None) == ""
    assert parse_explanation("") == ""
    assert parse_explanation("<think>only thoughts</think>") == ""


def test_non_string_explanation_is_ignored():
    answer = '{"explanation": ["a", "b"], "reason": "The real reason."}'
    assert parse_explanation(answer) == "The real reason."


# ============================================================================================
# Robustness

FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    ",",
    ":",
    " ",
    "\n",
    "\\",
    "<think>",
    "</think>",
    "```",
    "<box>",
    "</box>",
    "<|det|>",
    "<|/det|>",
    "<loc_12>",
    "<p-5>",
    '"hallucination"',
    '"is_correct"',
    '"explanation"',
    "true",
    "false",
    "null",
    "None",
    "True",
    "yes",
    "no",
    "Yes",
    "There is no hallucination",
    "contains an error",
    "does not match",
    "1",
    "0",
    "1" * 400,
]
fragment_text = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_never_raises_on_arbitrary_text(text):
    assert parse_verdict(text) in (True, False, None)
    explanation = parse_explanation(text)
    assert isinstance(explanation, str)
    assert len(explanation) <= MAX_EXPLANATION


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fragment_text)
def test_never_raises_on_verdict_like_fragments(text):
    assert parse_verdict(text) in (True, False, None)
    assert isinstance(parse_explanation(text), str)


PATHOLOGICAL = {
    "open brackets": "[" * 100_000,
    "nested keys": '{"a":' * 5000,
    "unclosed box tags": "<box>" * 40_000,
    "unclosed det tags": "<|det|>" * 30_000,
    "unclosed glm tags": "<|begin_of_box|>" * 15_000,
    "unclosed think": "<think>" * 30_000,
    "unclosed fence": "```" + " " * 200_000,
    "exclamations": "!" * 200_000,
    "huge integer": '{"hallucination": 1' + "0" * 400 + "}",
}


@pytest.mark.parametrize("text", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_pathological_input_returns(text):
    # No timing assertion: a quadratic scan would make this test take minutes, not fail.
    assert parse_verdict(text) in (True, False, None)
    assert isinstance(parse_explanation(text), str)


# ============================================================================================
# Echoes of the prompt, both-ways answers, answers cut off by the token limit


@pytest.mark.parametrize(
    "answer",
    [
        '{"hallucination": true or false, "explanation": "one or two sentences: which claim is '
        'wrong and what the image shows instead", "boxes": [[x1, y1, x2, y2], ...]}',
        "Is there a hallucination? yes or no",
        '{"hallucination": "yes/no", "explanation": "The dog is brown."}',
        "True or false: the caption contains an error.",
        "Use an empty list when there is no error.",  # a rule of the prompt, copied
        "1. If there is **no hallucination**, output exactly: <result>NO HALLUCINATION</result>",
    ],
)
def test_echoes_and_both_ways_answers_have_no_verdict(answer):
    assert parse_verdict(answer) is None


def test_a_real_answer_after_a_copied_line_is_read():
    answer = "Answer with a JSON object only:\n" + '{"hallucination": false, "explanation": "ok"}'
    assert parse_verdict(answer) is False
    copied = "Use an empty list when there is no error. The caption contains an error."
    assert parse_verdict(copied) is True


def test_a_copied_placeholder_is_no_explanation():
    answer = '{"hallucination": true, "explanation": "one or two sentences: which claim is wrong '
    answer += 'and what the image shows instead", "reason": "The sofa is blue."}'
    assert parse_explanation(answer) == "The sofa is blue."


def test_an_answer_cut_off_by_the_token_limit_is_read_only_from_its_structure_or_opening():
    ramble = "Let me look at the image. The sofa, the dog, there is no hallucination in the"
    assert parse_verdict(ramble) is False
    cut = read_answer(ramble, truncated=True)
    assert (cut.verdict, cut.refused) == (None, "truncated")
    assert parse_verdict("Yes, the sofa is blue and the", truncated=True) is True
    assert parse_verdict('{"hallucination": true, "explanation": "The so', truncated=True) is True
    assert read_answer("The dog is brown and", truncated=True).refused is None


def test_a_callers_object_changed_between_calls_is_read_afresh():
    # The lowered keys of a decoded answer are remembered by identity; a caller's own dict,
    # which it may change, must not be read from that memory.
    obj = {"Hallucination": True}
    assert verdict_from_object(obj) is True
    obj["Hallucination"] = False
    assert verdict_from_object(obj) is False
