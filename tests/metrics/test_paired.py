"""Paired accuracy, the official bias counters, the card's bias, and their intervals."""

from __future__ import annotations

import numpy as np
import pytest

from gavel.metrics.paired import (
    card_bias,
    card_recipe_bias,
    official_bias,
    pair_accuracy,
    pair_cells,
    pair_intervals,
    percent,
)

# The four-pair example of docs/videohallucer.md (gold: basic "yes", hallucinated "no"):
#
#   pair  basic answer  halluc answer  b (basic right)  h (halluc right)
#   1     "Yes."        "No."          1                1
#   2     "Yes"         "Yes, there."  1                0
#   3     "No."         "No."          0                1
#   4     "No"          "Yes"          0                0
B = [True, True, False, False]
H = [True, False, True, False]


def test_pair_accuracy_by_hand():
    # basic right in pairs 1, 2 -> 50; halluc right in 1, 3 -> 50; both right only in 1 -> 25.
    assert pair_accuracy(B, H) == {"n": 4, "basic": 50.0, "hallucination": 50.0, "paired": 25.0}
    assert pair_cells(B, H).tolist() == [1, 1, 1, 1]


def test_pair_accuracy_of_nothing_is_none():
    assert pair_accuracy([], []) == {"n": 0, "basic": None, "hallucination": None, "paired": None}
    assert percent(1, 0) is None


def test_official_bias_worked_example():
    # evaluation_bias.py, pair by pair:
    #   1: b -> n_yes 1;            h -> n_no 1
    #   2: b -> n_yes 2;            not h, but b -> n_yes 3, fp 1, n 1
    #   3: not b, h -> n_no 2, n 2; h -> n_no 3
    #   4: not b, not h -> n 3;     not h, not b -> n 4
    # ydp = (3 - 4) / 8 = -0.125; ndp = (3 - 4) / 8 = -0.125; fpr = 1 / 4.
    # The model really said "yes" 4 times in 8 answers (as often as the gold): pair 4's two
    # wrong answers count towards neither n_yes nor n_no.
    # Hallucination score: basic right in pairs 1, 2 (basic = 2); of those, pair 2's
    # hallucinated answer is wrong (halluc = 1) -> 1 / 2 = 50.
    bias = official_bias(B, H)
    assert bias["counters"] == {
        "gt_yes": 4,
        "gt_no": 4,
        "n_yes": 3,
        "n_no": 3,
        "n": 4,
        "fp": 1,
        "basic": 2,
        "halluc": 1,
    }
    assert bias["yes_pct_diff"] == pytest.approx(-12.5)
    assert bias["no_pct_diff"] == pytest.approx(-12.5)
    assert bias["fp_ratio"] == pytest.approx(25.0)
    assert bias["hallucination_score"] == 50.0


def test_card_recipe_bias_worked_example():
    # The recipe: "yes" on basic answers only: pairs 1, 2 -> 2 against 4 basic golds "yes":
    # |2 - 4| / 4 pairs = 50. Wrong pairs: 2, 3, 4; with a "yes" on either side: 2 (both
    # answers) and 4 (the hallucinated one) -> 2 / 3.
    bias = card_recipe_bias(
        basic_gold_yes=[True] * 4,
        basic_said_yes=[True, True, False, False],
        halluc_said_yes=[False, True, False, True],
        basic_correct=B,
        halluc_correct=H,
    )
    assert bias["yes_pct_diff"] == 50.0
    assert bias["fp_ratio"] == pytest.approx(200 / 3)
    assert bias["counters"] == {
        "pairs": 4,
        "yes_preds": 2,
        "yes_gt": 4,
        "wrong_pairs": 3,
        "wrong_pairs_with_yes": 2,
    }


def _recipe(gold_b, pred_b, pred_h, gold_h):
    """The card's scoring recipe transcribed loop for loop, labels as strings."""
    yes_preds = yes_gt = 0
    wrong_pairs = []
    for gb, pb, ph, gh in zip(gold_b, pred_b, pred_h, gold_h, strict=True):
        if pb == "yes":
            yes_preds += 1
        if gb == "yes":
            yes_gt += 1
        if pb != gb or ph != gh:
            wrong_pairs.append((pb, ph))
    pct_diff = abs(yes_preds - yes_gt) / len(gold_b) * 100
    fp_ratio = sum(1 for pb, ph in wrong_pairs if pb == "yes" or ph == "yes") / len(wrong_pairs)
    return pct_diff, fp_ratio * 100


@pytest.mark.parametrize("seed", range(5))
def test_card_recipe_bias_equals_the_recipe(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, 300))
    words = np.array(["yes", "no"])
    gold_b = words[(rng.random(size) < 0.8).astype(int) ^ 1]  # mostly "yes", some "no"
    gold_h = words[(rng.random(size) < 0.2).astype(int) ^ 1]
    pred_b = words[(rng.random(size) < rng.random()).astype(int)]
    pred_h = words[(rng.random(size) < rng.random()).astype(int)]
    pred_h[0] = "no" if gold_h[0] == "yes" else "yes"  # at least one wrong pair
    bias = card_recipe_bias(
        gold_b == "yes", pred_b == "yes", pred_h == "yes", pred_b == gold_b, pred_h == gold_h
    )
    assert (bias["yes_pct_diff"], bias["fp_ratio"]) == pytest.approx(
        _recipe(gold_b, pred_b, pred_h, gold_h)
    )


def test_card_recipe_bias_without_pairs_or_wrong_pairs_is_none():
    assert card_recipe_bias([], [], [], [], [])["yes_pct_diff"] is None
    nothing_wrong = card_recipe_bias([True], [True], [False], [True], [True])
    assert (nothing_wrong["yes_pct_diff"], nothing_wrong["fp_ratio"]) == (0.0, None)


def test_card_bias_worked_example():
    # Per question (basic, halluc interleaved) the answers are pair 1 (Y, N), 2 (Y, Y),
    # 3 (N, N), 4 (N, Y): 4 "yes" answers, 4 "yes" golds -> d_y = (4 - 4) / 8 = 0.
    # Wrong questions: 2h (yes), 3b (no), 4b (no), 4h (yes) -> r_fp = 2 / 4 = 50.
    gold_yes = [True, False] * 4
    said_yes = [True, False, True, True, False, False, False, True]
    correct = [True, True, True, False, False, True, False, False]
    bias = card_bias(gold_yes, said_yes, correct)
    assert bias["yes_pct_diff"] == 0.0
    assert bias["fp_ratio"] == 50.0
    assert bias["counters"] == {
        "questions": 8,
        "yes_predicted": 4,
        "yes_gold": 4,
        "wrong": 4,
        "wrong_yes": 2,
    }


def _script(b: list[bool], h: list[bool]) -> tuple[float, float, float]:
    """evaluation_bias.py transcribed line by line, with the regex hits given as b and h."""
    gt_yes = gt_no = n_yes = n_no = n = fp = 0
    for basic_hit, halluc_hit in zip(b, h, strict=True):
        gt_yes += 1
        if basic_hit:
            n_yes += 1
        else:
            if halluc_hit:
                n_no += 1
            n += 1
        gt_no += 1
        if halluc_hit:
            n_no += 1
        else:
            if basic_hit:
                n_yes += 1
                fp += 1
            n += 1
    ydp = (n_yes - gt_yes) / (gt_yes * 2) if gt_yes > 0 else 0
    ndp = (n_no - gt_no) / (gt_no * 2) if gt_no > 0 else 0
    fpr = fp / n if n > 0 else 0
    return 100 * ydp, 100 * ndp, 100 * fpr


def _script_halluc_score(b: list[bool], h: list[bool]) -> float:
    """The later evaluation_bias.py's "hallucination score" counters, transcribed."""
    basic = halluc = 0
    for basic_hit, halluc_hit in zip(b, h, strict=True):
        if basic_hit:
            basic += 1
            if not halluc_hit:
                halluc += 1
    return 100 * halluc / basic


@pytest.mark.parametrize("seed", range(5))
def test_official_bias_equals_the_script(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 300))
    b = (rng.random(size) < rng.random()).tolist()
    h = (rng.random(size) < rng.random()).tolist()
    bias = official_bias(b, h)
    ydp, ndp, fpr = _script(b, h)
    assert bias["yes_pct_diff"] == pytest.approx(ydp)
    assert bias["no_pct_diff"] == pytest.approx(ndp)
    assert bias["fp_ratio"] == pytest.approx(fpr)
    if any(b):
        assert bias["hallucination_score"] == pytest.approx(_script_halluc_score(b, h))
    else:  # the script divides by zero here
        assert bias["hallucination_score"] is None


def test_degenerate_denominators_follow_each_definition():
    # Nothing wrong: the script's fpr is 0 (its "if n > 0 else 0"); the card's ratio is undefined.
    assert official_bias([True], [True])["fp_ratio"] == 0.0
    assert card_bias([True, False], [True, False], [True, True])["fp_ratio"] is None
    empty = official_bias([], [])
    assert (empty["yes_pct_diff"], empty["no_pct_diff"], empty["fp_ratio"]) == (0.0, 0.0, 0.0)
    assert card_bias([], [], [])["yes_pct_diff"] is None


def test_always_yes_and_always_no():
    n = 10
    yes = official_bias([True] * n, [False] * n)
    assert (yes["yes_pct_diff"], yes["no_pct_diff"], yes["fp_ratio"]) == (50.0, -50.0, 100.0)
    no = official_bias([False] * n, [True] * n)
    assert (no["yes_pct_diff"], no["no_pct_diff"], no["fp_ratio"]) == (-50.0, 50.0, 0.0)


# ============================================================================================
# Intervals


def test_intervals_are_seeded_and_bracket_the_estimate():
    cells = {"a": np.array([30, 20, 10, 40]), "b": np.array([5, 5, 5, 5])}

    def run(seed):
        return pair_intervals(
            cells, ["a", "b"], resamples=500, level=0.95, rng=np.random.default_rng(seed)
        )

    first, again = run(0), run(0)
    assert first == again
    low, high = first["per_category"]["a"]["paired"]
    assert low < 30.0 < high
    low, high = first["per_category"]["a"]["basic"]
    assert low < 50.0 < high
    low, high = first["overall"]
    assert low < (30.0 + 25.0) / 2 < high


def test_degenerate_cells_give_a_point_interval():
    out = pair_intervals(
        {"a": np.array([7, 0, 0, 0])},
        ["a"],
        resamples=50,
        level=0.95,
        rng=np.random.default_rng(1),
    )
    assert out["per_category"]["a"]["paired"] == [100.0, 100.0]
    assert out["overall"] == [100.0, 100.0]


def test_no_resamples_gives_no_intervals():
    out = pair_intervals(
        {"a": np.array([1, 1, 1, 1])}, ["a"], resamples=0, level=0.95, rng=np.random.default_rng()
    )
    assert out == {
        "per_category": {"a": {"basic": None, "hallucination": None, "paired": None}},
        "overall": None,
    }


def test_multinomial_bootstrap_matches_explicit_resampling():
    rng = np.random.default_rng(3)
    b = rng.random(120) < 0.7
    h = rng.random(120) < 0.4
    fast = pair_intervals(
        {"a": pair_cells(b, h)}, ["a"], resamples=4000, level=0.9, rng=np.random.default_rng(4)
    )["per_category"]["a"]["paired"]
    both = b & h
    picks = rng.integers(0, len(both), size=(4000, len(both)))
    slow = np.quantile(100.0 * both[picks].mean(axis=1), [0.05, 0.95])
    assert fast == pytest.approx(slow.tolist(), abs=1.0)


def test_a_refusal_is_a_yes_for_the_script_only():
    # One pair: basic "Yes" (b = 1), hallucinated "Nope" (h = 0; it says neither word).
    # Script: n_yes = 1 + 1 (inferred from the basic "Yes"), fp = 1, n = 1
    #   -> ydp = (2 - 1) / 2 = +50, fpr = 100.
    # Card: one "yes" said, one "yes" gold -> 0; the one wrong answer is not a "yes" -> 0.
    official = official_bias([True], [False])
    assert (official["yes_pct_diff"], official["fp_ratio"]) == (50.0, 100.0)
    card = card_bias([True, False], [True, False], [True, False])
    assert (card["yes_pct_diff"], card["fp_ratio"]) == (0.0, 0.0)
