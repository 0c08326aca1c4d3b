"""The official whole-word match and the strict yes/no extractor, case by case."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gavel.parsing.yesno import (
    BOTH,
    NEITHER,
    NO,
    OTHER,
    RULES,
    UNKNOWN,
    YES,
    contains_word,
    mme_label,
    official_label,
    prepare,
    read_yes_no,
    strict_reading,
    strict_yes_no,
)

# ============================================================================================
# Official rule: the gold word as a whole word, case-insensitive, anywhere


@pytest.mark.parametrize(
    ("text", "has_yes"),
    [
        ("Yes", True),
        ("Yes.", True),
        ("YES", True),
        ("YES!", True),
        ("yes", True),
        ("Answer: yes", True),
        ("I think the answer is yes, because", True),
        ("No, yes", True),
        ("Yes-no", True),  # "-" is not a word character
        ("(yes)", True),
        ("'yes'", True),
        ("Yesterday", False),  # "yes" is only a prefix of a longer word
        ("eyes", False),
        ("yes_no", False),  # "_" is a word character
        ("yes1", False),
        ("Y E S", False),
        ("", False),
        ("No.", False),
    ],
)
def test_whole_word_yes(text, has_yes):
    assert contains_word(YES, text) is has_yes


@pytest.mark.parametrize(
    ("text", "has_no"),
    [
        ("no.", True),
        ("No", True),
        ("NO!", True),
        ("No, yes", True),
        ("There is no doll.", True),  # a determiner counts too: the rule only sees words
        ("Nope", False),
        ("Not sure", False),
        ("It is not.", False),
        ("None of them", False),
        ("know", False),
        ("Yes", False),
    ],
)
def test_whole_word_no(text, has_no):
    assert contains_word(NO, text) is has_no


def test_a_hedge_contains_both_words():
    # "yes or no" is correct whatever the gold answer is.
    assert contains_word(YES, "yes or no") and contains_word(NO, "yes or no")
    assert official_label("Yes or no?") == BOTH
    assert official_label("Yes/No") == BOTH


@pytest.mark.parametrize(
    ("text", "label"),
    [("Yes.", YES), ("No!", NO), ("yes no", BOTH), ("Nope.", NEITHER), ("", NEITHER)],
)
def test_official_label(text, label):
    assert official_label(text) == label


def test_other_words_are_escaped():
    assert contains_word("a.b", "say a.b now")
    assert not contains_word("a.b", "say axb now")


def test_the_match_is_the_upstream_regex():
    # evaluation_utils.cal_score: re.search(r'\b(' + answer + r')\b', predict, re.IGNORECASE)
    texts = ["Yes.", "yesterday", "No, yes", "YES_", "nO", "n o", "¿Sí? yes", "-no-", "noyes"]
    for text in texts:
        for word in (YES, NO):
            upstream = re.search(r"\b(" + word + r")\b", text, re.IGNORECASE) is not None
            assert contains_word(word, text) is upstream, (word, text)


@given(st.text(max_size=60))
def test_official_rule_equals_upstream_on_any_text(text):
    for word in (YES, NO):
        upstream = re.search(r"\b(" + word + r")\b", text, re.IGNORECASE) is not None
        assert contains_word(word, text) is upstream


# ============================================================================================
# Strict rule: the opening word, and no hedge


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Yes", YES),
        ("yes.", YES),
        ("YES!", YES),
        ("No", NO),
        ("No.", NO),
        ("no, there is no doll", NO),  # the same word twice is no hedge
        ("Yes, the man holds a lunch box.", YES),
        ("  **Yes**", YES),
        ('"No"', NO),
        ("Answer: yes", YES),
        ("**Answer:** No", NO),
        ("Final answer - yes", YES),
        ("> No.", NO),
        # unknown: a hedge, a refusal, a later answer, a non-word
        ("Yes or no", UNKNOWN),
        ("Yes/No", UNKNOWN),
        ("Yes, there is no doubt.", UNKNOWN),  # conservative: both words occur
        ("No. Yes.", UNKNOWN),
        ("I think yes", UNKNOWN),
        ("The answer is no.", UNKNOWN),
        ("Yesterday", UNKNOWN),
        ("Nope", UNKNOWN),
        ("Not really", UNKNOWN),
        ("yes_no", UNKNOWN),
        ("", UNKNOWN),
        (None, UNKNOWN),
        ("Answer the question using 'yes' or 'no'.", UNKNOWN),
        ("<think>maybe no</think>Yes", UNKNOWN),  # raw text: the think block is read
    ],
)
def test_strict(text, label):
    assert strict_yes_no(text) == label


def test_think_blocks_are_dropped_only_when_asked():
    raw = "<think>there is no doll... or is there</think>Yes."
    assert strict_yes_no(prepare(raw, drop_think=False)) == UNKNOWN
    assert strict_yes_no(prepare(raw, drop_think=True)) == YES
    assert official_label(prepare(raw, drop_think=False)) == BOTH
    assert official_label(prepare(raw, drop_think=True)) == YES


@given(st.text(max_size=80))
def test_strict_never_raises_and_agrees_with_the_official_words(text):
    label = strict_yes_no(text)
    assert label in (YES, NO, UNKNOWN)
    if label != UNKNOWN:  # a strict answer is a clean official one
        assert official_label(text) == label


def test_strict_is_linear_on_hostile_text():
    assert strict_yes_no("*" * 200_000 + "x") == UNKNOWN
    assert strict_yes_no("answer " * 20_000) == UNKNOWN


# --- what each rule cannot read ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("Yes, the right circle is the same size.", ("yes", None)),
        # GPT-4V on HallusionBench: a statement, no yes/no anywhere.
        ("angleA + angleB + angleC is not less than 180°", ("unknown", "no_opening_word")),
        # Opens with "No" and quotes "yes" later: a hedge for the official rule.
        ("No, the speaker **cannot** fit. You could say *yes* spatially.",
         ("unknown", "other_word_too")),
        # Read by the official rule (one word somewhere), not by the strict one.
        ("The answer is yes", ("unknown", "no_opening_word")),
        ("", ("unknown", "empty")),
    ],
)  # fmt: skip
def test_strict_reading_says_why(text, reading):
    assert strict_reading(text) == reading
    assert strict_yes_no(text) == reading[0]


# ============================================================================================
# MME's rule (eval_tool/calculation.py, parse_pred_ans): the exact word, else "yes" or "no"
# within the first four characters of the lower-cased answer, else other


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("yes", YES),
        ("No", NO),
        ("YES", YES),
        ("Yes, there is a dog.", YES),
        ("no, the image does not show a rope bridge.", NO),
        ("yes\n", YES),  # MME's lines keep their newline: not the exact word, but "yes" opens it
        (" yes", YES),  # " yes"[:4] holds "yes"
        ("  yes", OTHER),  # "  ye": the word starts too late
        ("Nope", NO),  # letters, not a word: "no" opens "nope"
        ("Not sure", NO),
        ("know", NO),
        ("None of them", NO),
        ("yesno", YES),  # "yes" is looked for first
        ("noyes", NO),  # "noye" holds "no" but not "yes"
        ("Answer: yes", OTHER),
        ("I think yes", OTHER),
        ('the image shows a white wall with a sign on it that says "no smoking."', OTHER),
        ("", OTHER),
        (None, OTHER),
    ],
)
def test_mme_rule(text, label):
    assert mme_label(text) == label


def test_the_rules_differ_where_the_answer_does_not_open_the_reply():
    # LaVIN on MME: a reply about a sign, with "no" inside it.
    text = 'the image shows a white wall with a sign on it that says "no smoking." the sign'
    assert [read_yes_no(rule, text) for rule in ("official", "strict", "mme")] == [
        NO, UNKNOWN, OTHER
    ]  # fmt: skip


def test_every_rule_is_named_with_the_benchmark_that_uses_it():
    assert set(RULES) == {"official", "strict", "mme"}
    assert "VideoHallucer" in RULES["official"].used_by
    assert "MME" in RULES["mme"].used_by
    for rule in RULES.values():
        for text in ("yes", "No.", "maybe", "", None):
            assert rule.read(text) in rule.labels
    with pytest.raises(ValueError, match="unknown answer rule 'pope'"):
        read_yes_no("pope", "yes")


@given(st.text())
def test_mme_never_raises(text):
    assert mme_label(text) in (YES, NO, OTHER)
