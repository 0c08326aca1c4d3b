"""The answer readers' fast paths give what the plain computations they skip would give.

Each fast path is checked against the slower, obvious form it replaces, on generated text
made of the characters that matter to it (quotes, brackets, backticks, case-changing letters).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gavel.parsing import structured, verdict
from gavel.parsing.echo import _WORD, MIN_WORDS, EchoFilter

PROMPT = (
    "Does the caption contain an error? Answer yes or no.\n"
    'Reply with {"hallucination": true or false, "explanation": "one short sentence"}.\n'
    "Use an empty list when there is no error."
)
ECHO = EchoFilter([PROMPT])
WORDS = ["the", "caption", "does", "contain", "an", "error", "use", "empty", "list", "reply",
         "with", "a", "yes", "no", "or", "true", "false", "hallucination", "x1", "_"]  # fmt: skip
SEPARATORS = [" ", "  ", ", ", "\n", ": ", '"', "-", "*", "/", "|", "ſ", "İ", "é", "K", "\t"]
answers = st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=40)
answers = answers.map("".join) | st.text(max_size=60)


def _starts_the_slow_way(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + MIN_WORDS]) for i in range(len(words))} & set(ECHO._by_start)


@settings(max_examples=500, deadline=None)
@given(answers, st.booleans())
def test_echo_prefilter_passes_every_answer_with_a_fragment_start(text, upper):
    text = text.upper() if upper else text
    if ECHO._copies_nothing(text):
        assert not _starts_the_slow_way(text)
    elif text.isascii():
        assert _starts_the_slow_way(text)  # exact on ASCII: no needless slow path


@settings(max_examples=200, deadline=None)
@given(answers)
def test_echo_remove_and_removed_agree(text):
    stripped = ECHO.remove(text)
    assert (stripped.text, stripped.copied) == ECHO.removed(text)


def test_echo_prefilter_finds_a_copied_line():
    assert ECHO.removed("use an EMPTY list when there is no error. Yes")[1] == 1


_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*+\s*+(.*?)```", re.DOTALL)
fenced = st.lists(st.sampled_from(["`", "```", "````", "json", "py+", " ", "\n", "{}", "x"]))


@settings(max_examples=500, deadline=None)
@given(fenced.map("".join) | st.text(alphabet="`aj \n", max_size=30))
def test_fences_are_what_the_fence_pattern_finds(text):
    assert structured._fences(text) == _FENCE.findall(text)


brackets = st.lists(st.sampled_from(["[", "]", "{", "}", '"', "'", "\\", "1, 2", " ", ",", "a"]))


@settings(max_examples=500, deadline=None)
@given(brackets.map("".join), st.integers(1, 40))
def test_flat_span_shortcut_matches_the_general_matcher(text, budget):
    for start in (i for i, ch in enumerate(text) if ch in "[{"):
        fast, general = [budget], [budget]
        assert structured._match_close(text, start, fast) == structured._match_nested(
            text, start, general
        )
        assert fast == general


_BOTH_WAYS_SPEC = re.compile(
    r"\b(?:yes\W{0,3}(?:or|/|\|)\W{0,3}no|no\W{0,3}(?:or|/|\|)\W{0,3}yes"
    r"|true\W{0,3}(?:or|/|\|)\W{0,3}false|false\W{0,3}(?:or|/|\|)\W{0,3}true)\b",
    re.IGNORECASE,
)
PIECES = ["yes", "YES", "yeſ", "no", "No", "true", "falſe", "FALSE", "or", "OR", "/", "|", " ",
          "'", "x", "_", "\n", "nor", "ayes"]  # fmt: skip
choices = st.lists(st.sampled_from(PIECES)).map("".join)


@settings(max_examples=1000, deadline=None)
@given(choices)
def test_both_ways_pattern_is_the_case_insensitive_one(text):
    assert (verdict._BOTH_WAYS.search(text) is None) == (_BOTH_WAYS_SPEC.search(text) is None)


markup = st.lists(st.sampled_from(["<box>", "</box>", "```", "<ref>", "<loc_12>", "a b", "\n"]))


@settings(max_examples=300, deadline=None)
@given(markup.map("".join) | st.text(max_size=40))
def test_prose_skips_the_markup_pattern_only_when_it_would_change_nothing(text):
    assert verdict._prose(text) == " ".join(verdict._BOX_MARKUP.sub(" ", text).split())


@given(st.text(alphabet="<>/thinkTHINK x", max_size=30))
def test_strip_think_without_a_bracket_is_the_text(text):
    if "<" not in text:
        assert structured.strip_think(text) is text
