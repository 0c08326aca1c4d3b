"""Finding JSON objects and Python literals inside free model text."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gavel.parsing.structured import (
    MAX_CANDIDATES,
    decode_literal,
    first_object,
    strip_think,
    structured_candidates,
)

# ============================================================================================
# strip_think


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no thinking here", "no thinking here"),
        ("<think>reasoning</think>answer", "answer"),
        ("<think>\n\n</think>\n\nanswer", "\n\nanswer"),  # Qwen3 with thinking off
        ("a<think>x</think>b<think>y</think>c", "abc"),
        ("<THINK>x</Think>answer", "answer"),
        ("<think>multi\nline\nreasoning</think>answer", "answer"),
        # Only </think>: the opening tag was in the prompt; drop everything before it.
        ("reasoning</think>answer", "answer"),
        ("r1</think>r2</think>answer", "answer"),
        ("<think>x</think>y</think>answer", "answer"),
        # Unclosed <think>: cut off while reasoning, nothing after it is an answer.
        ("<think>still reasoning about [1, 2, 3, 4]", ""),
        ("answer first <think>then reasoning", "answer first "),
        ("<think>a</think>answer<think>cut off", "answer"),
        ("", ""),
    ],
)
def test_strip_think(text, expected):
    assert strip_think(text) == expected


def test_strip_think_is_not_fooled_by_case_changing_characters():
    # "İ".lower() is two characters long: indices from a lowered copy would be off by one.
    assert strip_think("İİİ reasoning</think>answer") == "answer"


# ============================================================================================
# decode_literal


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        ('{"a": 1, "b": [1, 2.5, null, true]}', {"a": 1, "b": [1, 2.5, None, True]}),
        ("  [1, 2, 3, 4]  ", [1, 2, 3, 4]),
        ("{'a': (1, 2), 'b': None, 'c': True}", {"a": [1, 2], "b": None, "c": True}),
        ("[(1, 2, 3, 4), (5, 6, 7, 8)]", [[1, 2, 3, 4], [5, 6, 7, 8]]),
        ("(1, 2, 3, 4)", [1, 2, 3, 4]),
        ("{1: 'int key'}", {"1": "int key"}),  # keys become strings, as in JSON
        ('"just a string"', "just a string"),
        ("42", 42),
    ],
)
def test_decode_literal(fragment, expected):
    assert decode_literal(fragment) == expected


@pytest.mark.parametrize(
    "fragment",
    [
        "",
        "   ",
        "{not json}",
        "[1, 2,",
        "{'a': 1",
        "{[1]: 2}",  # unhashable key
        "{1, [2]}",  # unhashable set element
        "__import__('os').system('true')",  # never evaluated
        "1 + x",
        "[" * 10_000 + "]" * 10_000,  # too deep for either decoder
        "-" * 10_000 + "1",
        "9" * 5000,  # past Python's integer-string limit
    ],
)
def test_decode_literal_failures_return_none(fragment):
    assert decode_literal(fragment) is None


def test_decode_literal_is_silent_and_independent_of_warning_filters():
    # '\d' is an invalid escape in a Python string literal; the compiler warns about it. With
    # warnings turned into errors the warning must not become a failure to decode.
    fragment = "{'bbox': [1, 2, 3, 4], 'note': 'matches \\d'}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert decode_literal(fragment) == {"bbox": [1, 2, 3, 4], "note": "matches \\d"}


# ============================================================================================
# structured_candidates: fenced first, then the whole text, then spans in prose


def test_fenced_blocks_come_first_and_prose_is_then_ignored():
    text = '{"prose": 1}\n```json\n{"fenced": 1}\n```\n```\n[2]\n```'
    assert structured_candidates(text) == [{"fenced": 1}, [2]]


def test_fence_language_tags():
    for fence in ("```json\n", "```JSON\n", "```python\n", "```\n", "```json ", "```jsonc\n"):
        assert structured_candidates(f'{fence}{{"a": 1}}\n```') == [{"a": 1}]


def test_fence_with_prose_inside_uses_spans():
    text = '```\nHere: {"a": 1} and [1, 2]\n```'
    assert structured_candidates(text) == [{"a": 1}, [1, 2]]


def test_undecodable_fence_falls_back_to_the_rest():
    text = 'Answer {"a": 1}\n```\nnot json at all\n```'
    assert structured_candidates(text) == [{"a": 1}]


def test_whole_text_when_it_decodes():
    assert structured_candidates('  {"a": [1, 2]}  ') == [{"a": [1, 2]}]
    assert structured_candidates("[{'a': 1}, {'b': 2}]") == [[{"a": 1}, {"b": 2}]]


def test_scalar_whole_text_is_not_a_candidate():
    assert structured_candidates("42") == []
    assert structured_candidates('"text"') == []


def test_spans_in_prose_in_order():
    text = "First {\"a\": 1}, then [1, 2], then {'b': (3, 4)} and {broken}."
    assert structured_candidates(text) == [{"a": 1}, [1, 2], {"b": [3, 4]}]


def test_outermost_spans_only():
    assert structured_candidates('x {"a": {"b": [1]}} y') == [{"a": {"b": [1]}}]


def test_brackets_inside_strings_do_not_end_a_span():
    text = 'Result: {"note": "a } and ] inside", "x": "\\" quoted"} end'
    assert structured_candidates(text) == [{"note": "a } and ] inside", "x": '" quoted'}]


def test_apostrophes_in_prose_are_not_quotes():
    text = "The cat's tail isn't striped: {'bbox': [1, 2, 3, 4]} that's all."
    assert structured_candidates(text) == [{"bbox": [1, 2, 3, 4]}]


def test_mismatched_brackets_recover_inner_spans():
    text = 'oops { [1, 2] ] then {"a": 1}'
    assert structured_candidates(text) == [[1, 2], {"a": 1}]


def test_unclosed_outer_bracket_still_finds_inner_objects():
    # A truncated list (generation ran out of tokens): the complete objects are still found.
    text = '[{"bbox_2d": [1, 2, 3, 4]}, {"bbox_2d": [5, 6, 7, 8]}, {"bbox_2d": [9,'
    assert structured_candidates(text) == [{"bbox_2d": [1, 2, 3, 4]}, {"bbox_2d": [5, 6, 7, 8]}]


def test_object_after_many_unclosed_brackets_is_found():
    text = "[" * 200 + ' {"bbox": [1, 2, 3, 4]}'
    assert {"bbox": [1, 2, 3, 4]} in structured_candidates(text)


def test_candidate_count_is_bounded():
    text = " ".join(f'{{"i": {i}}}' for i in range(MAX_CANDIDATES + 50))
    found = structured_candidates(text)
    assert len(found) == MAX_CANDIDATES
    assert found[0] == {"i": 0}


def test_think_is_not_stripped_here():
    # structured_candidates sees what it is given; the callers strip <think> first.
    assert structured_candidates('<think>{"a": 1}</think>') == [{"a": 1}]


# ============================================================================================
# first_object


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1} {"b": 2}', {"a": 1}),
        ('[1, 2] then {"b": 2}', {"b": 2}),
        ('[{"a": 1}, {"b": 2}]', {"a": 1}),
        ("```json\n[{'a': True}]\n```", {"a": True}),
        ("no structure here", None),
        ("[1, 2, 3]", None),
        ("[]", None),
        ("", None),
    ],
)
def test_first_object(text, expected):
    assert first_object(text) == expected


# ============================================================================================
# Robustness

FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    '"',
    "'",
    "\\",
    ",",
    ":",
    " ",
    "\n",
    "```",
    "```json\n",
    "<think>",
    "</think>",
    "1",
    "-2.5",
    "1e999",
    "null",
    "None",
    "True",
    '"a"',
    "'b'",
    "\\d",
    "İ",
]
fragment_text = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(), fragment_text))
def test_never_raises(text):
    assert isinstance(strip_think(text), str)
    assert isinstance(structured_candidates(text), list)
    obj = first_object(text)
    assert obj is None or isinstance(obj, dict)
    decode_literal(text)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.text(max_size=5), children, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_json_round_trips_through_prose_and_fences(value):
    import json

    encoded = json.dumps(value)
    assert decode_literal(encoded) == value
    if isinstance(value, dict | list):
        assert structured_candidates(f"```json\n{encoded}\n```") == [value]


PATHOLOGICAL = {
    "open brackets": "[" * 100_000,
    "open braces": "{" * 100_000,
    "nested keys": '{"a":' * 5000,
    "closers": "]" * 200_000,
    "quotes": '["' * 50_000,
    "apostrophes": "[ '" * 60_000,
    "tuples": "(1," * 60_000,
    "unclosed think": "<think>" * 30_000,
    "blank after think": "<think>" + " " * 200_000,
    "unclosed fence": "```" + " " * 200_000,
    "long fence tag": "```" + "a" * 200_000,
    "many small fences": ("```\n" + "[" * 1000 + "```") * 200,
}


@pytest.mark.parametrize("text", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_pathological_input_returns(text):
    # No timing assertion: a quadratic scan would make this test take minutes, not fail.
    assert isinstance(structured_candidates(text), list)
    assert isinstance(strip_think(text), str)
    first_object(text)
