"""The official DetailVerifyBench token scorer, on hand-worked examples."""

from __future__ import annotations

import pytest

from gavel.metrics.tokens import (
    STRATA,
    binary_metrics,
    count_tokens,
    label_key,
    length_stratum,
    mark_positions,
    prf,
    sentence_counts,
    set_metrics,
)

H, E = "<HALLUCINATION>", "</HALLUCINATION>"


def tokens(text: str) -> list[str]:
    return mark_positions(text).tokens


# --- tokenizer ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Word runs joined inside by - ' . @ _ are one token; a trailing "." is not part of it.
        ("U.S.", ["U.S"]),
        ("e-mail", ["e-mail"]),
        ("don't", ["don't"]),
        ("3.5", ["3.5"]),
        ("3.5%", ["3.5"]),
        ("e.g.", ["e.g"]),
        ("a@b.com", ["a@b.com"]),
        ("snake_case", ["snake_case"]),
        # Punctuation is no token, and separates tokens.
        ("Hello, world! (yes)", ["Hello", "world", "yes"]),
        ("$1,000", ["1", "000"]),
        ("12:00", ["12", "00"]),
        ("well - known", ["well", "known"]),
        ("end-", ["end"]),
        # Handles, CJK and kana runs; other scripts are ASCII-split or dropped.
        ("@bob #tag", ["@bob", "#tag"]),
        ("中文字 カタカナ", ["中文字", "カタカナ"]),
        ("café", ["caf"]),
        ("naïve", ["na", "ve"]),
        ("it’s", ["it", "s"]),
        ("한국어 ok", ["ok"]),
    ],
)
def test_tokenizer(text, expected):
    assert tokens(text) == expected
    assert count_tokens(text) == len(expected)


def test_a_token_is_hallucinated_when_any_of_its_characters_is_inside_a_tag():
    marked = mark_positions(f"The {H}red{E} car")
    assert marked.tokens == ["The", "red", "car"]
    assert marked.hallucinated == [False, True, False]


def test_tags_inside_a_word_join_it_into_one_hallucinated_token():
    marked = mark_positions(f"a {H}red{E}dish hue")
    assert marked.tokens == ["a", "reddish", "hue"]
    assert marked.hallucinated == [False, True, False]
    marked = mark_positions(f"U.{H}S{E}. flag")
    assert marked.tokens == ["U.S", "flag"]
    assert marked.hallucinated == [True, False]


def test_an_empty_tag_pair_inside_a_word_flags_it():
    marked = mark_positions(f"x{H}{E}y z")
    assert marked.tokens == ["xy", "z"]
    assert marked.hallucinated == [True, False]


def test_a_tag_around_punctuation_only_flags_nothing():
    marked = mark_positions(f"red{H},{E} car")
    assert marked.hallucinated == [False, False]


def test_a_tag_spanning_several_words_flags_each():
    marked = mark_positions(f"Two {H}dogs sit{E} nearby.")
    assert marked.hallucinated == [False, True, True, False]


# --- categories -----------------------------------------------------------------------------


def test_each_tag_takes_the_first_category_of_its_label():
    text = f"The {H}red{E} car. Two {H}dogs sit{E} here."
    labels = [("red", ["Color"]), ("dogs sit", ["Category", "Number"])]
    marked = mark_positions(text, labels)
    assert marked.categories == ["None", "Color", "None", "None", "Category", "Category", "None"]


def test_labels_match_lower_case_without_punctuation_first_in_first_out():
    text = f"{H}Red,{E} then {H}red{E} then {H}red{E}"
    labels = [("red", ["A"]), ("RED!", ["B"])]
    marked = mark_positions(text, labels)
    # Third "red" finds the queue empty: Unknown.
    assert marked.categories == ["A", "None", "B", "None", "Unknown"]
    assert label_key("  Dogs, sit! ") == "dogs sit"


def test_a_label_without_categories_or_no_label_gives_unknown():
    marked = mark_positions(f"{H}red{E} {H}car{E}", [("red", [])])
    assert marked.categories == ["Unknown", "Unknown"]


# --- per-sample metrics ---------------------------------------------------------------------


def test_binary_metrics_worked_example():
    # gold [c,H,c,c,c,c,H,H,c] vs pred [c,H,c,c,H,c,c,c,c]: tp 1, fp 1, fn 2.
    gold = [False, True, False, False, False, False, True, True, False]
    pred = [False, True, False, False, True, False, False, False, False]
    p, r, f1, iou = binary_metrics(gold, pred)
    assert (p, r) == (0.5, 1 / 3)
    assert f1 == pytest.approx(0.4)
    assert iou == 0.25


def test_no_gold_hallucination_gives_zero_prf_and_iou_one_only_when_nothing_is_flagged():
    clean = [False] * 5
    assert binary_metrics(clean, clean) == (0.0, 0.0, 0.0, 1.0)
    assert binary_metrics(clean, [False, False, True, False, False]) == (0.0, 0.0, 0.0, 0.0)


def test_an_empty_or_mismatched_sequence_scores_zero():
    assert binary_metrics([], []) == (0.0, 0.0, 0.0, 0.0)
    assert binary_metrics([True], [True, False]) == (0.0, 0.0, 0.0, 0.0)


def test_prf_guards_every_denominator():
    assert prf(0, 0, 0) == (0.0, 0.0, 0.0)
    assert prf(1, 1, 0) == (0.5, 1.0, pytest.approx(2 / 3))


def test_set_metrics_is_the_card_recipe():
    assert set_metrics({1, 4}, {1, 6, 7}) == (0.5, 1 / 3, pytest.approx(0.4))
    assert set_metrics(set(), set()) == (0.0, 0.0, 0.0)
    assert set_metrics({2}, set()) == (0.0, 0.0, 0.0)


# --- sentences ------------------------------------------------------------------------------


def test_sentences_take_consecutive_token_slices_of_the_gold_text():
    gold_text = f"The {H}red{E} car is parked. Two {H}dogs sit{E} nearby."
    gold = mark_positions(gold_text).hallucinated
    pred = mark_positions(f"The {H}red{E} car is {H}parked{E}. Two dogs sit nearby.").hallucinated
    # Sentence 1 (tokens 0-4): both positive -> TP. Sentence 2 (5-8): gold only -> FN.
    assert sentence_counts(gold_text, gold, pred) == (1, 0, 1)


def test_sentence_split_after_every_period_makes_later_sentences_drift():
    # "It has 3.5 doors." splits into "It has 3." (3 tokens) and "5 doors." (2 tokens): 5 slots
    # for what are 4 tokens (It has 3.5 doors), so "The" falls in the second slice and the third
    # sentence gets tokens 5..9 = "sky is clear blue" (capped at the 9 tokens).
    gold_text = f"It has 3.5 doors. {H}The{E} sky is clear blue."
    gold = mark_positions(gold_text).hallucinated
    assert len(gold) == 9 and gold[4]
    pred = [False] * 4 + [True] + [False] * 4
    # The hallucinated "The" (token 4) sits in slice [3:5] -> one TP; slice [5:9] negative.
    assert sentence_counts(gold_text, gold, pred) == (1, 0, 0)
    # A prediction on "sky" (token 5) lands in the third slice, where gold has nothing.
    pred = [False] * 5 + [True] + [False] * 3
    assert sentence_counts(gold_text, gold, pred) == (0, 1, 1)


def test_sentence_slices_are_capped_at_the_aligned_length():
    gold_text = f"A {H}b{E}. C d."
    gold = mark_positions(gold_text).hallucinated  # [A, b*, C, d]
    # Prediction has only 2 tokens: only the first sentence (tokens 0-1) is compared.
    assert sentence_counts(gold_text, gold, [False, True]) == (1, 0, 0)


def test_cjk_sentence_marks_split_too():
    gold_text = f"猫が{H}二匹{E}いる。犬もいる。"
    gold = mark_positions(gold_text).hallucinated
    assert sentence_counts(gold_text, gold, gold) == (1, 0, 0)


# --- strata ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("length", "stratum"), [(0, STRATA[0]), (99, STRATA[0]), (100, STRATA[1]), (149, STRATA[1])]
)
def test_length_strata(length, stratum):
    assert length_stratum(length) == stratum
    assert length_stratum(150) == "long (>=150)"
