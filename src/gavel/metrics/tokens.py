"""Token-level hallucination localisation: the official DetailVerifyBench scorer, and the card's.

Everything here reproduces ``calculate_metrics.py`` of the official repository
(zyx-hhnkh/DetailVerifyBench), quirks included; docs/detailverify.md gives worked numbers.
One change of encoding only: the official code marks a hallucinated token ``0`` and a clean one
``1``; here a token is ``True`` when hallucinated. The formulas are the same.

Tokens
    Tags are removed first, keeping a map from each remaining character to its place in the
    tagged text. Tokens are then found by :data:`TOKEN_PATTERN` (ASCII word runs joined inside
    by ``- ' . @ _``, ``@handle``/``#tag``, CJK and kana runs; punctuation is no token). A token
    is hallucinated when its span in the tagged text (from its first to its last character)
    overlaps the inside of any tag pair, so ``<HALLUCINATION>red</HALLUCINATION>dish`` is one
    hallucinated token ``reddish``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from gavel.parsing.tags import CLOSE, OPEN

#: Verbatim from the official scorer. The tag alternatives never match: tags are removed first.
TOKEN_PATTERN = re.compile(
    r"<HALLUCINATION>|</HALLUCINATION>|"
    r"[A-Za-z0-9]+(?:[-'.@_][A-Za-z0-9]+)*|"
    r"[@#][A-Za-z0-9_]+|"
    r"[\u4e00-\u9fff\u3040-\u309f\u30a0-\u30ff]+"
)
_SPANS = re.compile(r"<HALLUCINATION>(.*?)</HALLUCINATION>", re.DOTALL)
_TAGS = re.compile(r"<HALLUCINATION>|</HALLUCINATION>")
_PUNCT = re.compile(r"[^\w\s]")
# The official sentence split: a zero-width match after every . ! ? 。！？ (with any blanks).
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")

#: Category of a token outside every tag, and of a tag without a matching label.
NONE = "None"
UNKNOWN = "Unknown"

#: The official length strata, on the aligned (truncated) token count.
SHORT, LONG = 100, 150
STRATA = ("short (<100)", "medium (100-150)", "long (>=150)")


@dataclass(frozen=True)
class Marked:
    """A tagged text as tokens: the words, whether each is hallucinated, and its category."""

    tokens: list[str]
    hallucinated: list[bool]
    categories: list[str]


def label_key(text: str) -> str:
    """How the official scorer matches a tag's text to a label: lower case, no punctuation."""
    return _PUNCT.sub("", text.strip().lower())


def mark_positions(text: str, labels: Sequence[tuple[str, Sequence[str]]] | None = None) -> Marked:
    """Tokens of a tagged text, each marked hallucinated or not (``mark_positions``).

    ``labels`` are the gold's ``(text, categories)`` pairs. Each tag takes the first unused label
    whose :func:`label_key` equals its own (FIFO among identical texts); its tokens get that
    label's first category, or ``Unknown`` when the label has none or no label matches.
    """
    queue: dict[str, list[Sequence[str]]] = {}
    for label_text, cats in labels or ():
        queue.setdefault(label_key(label_text), []).append(cats)

    starts: list[int] = []
    ends: list[int] = []
    range_cats: list[str] = []
    for match in _SPANS.finditer(text):
        waiting = queue.get(label_key(match.group(1)))
        cats = waiting.pop(0) if waiting else ()
        starts.append(match.start(1))
        ends.append(match.end(1))
        range_cats.append(cats[0] if cats else UNKNOWN)

    clean, cuts, removed = _without_tags(text)
    if not starts:  # nothing can be hallucinated: no positions needed
        found = TOKEN_PATTERN.findall(clean)
        return Marked(found, [False] * len(found), [NONE] * len(found))
    tokens: list[str] = []
    hallucinated: list[bool] = []
    categories: list[str] = []
    for match in TOKEN_PATTERN.finditer(clean):
        # Back to the tagged text: add the length of the tags removed up to each character.
        first, last = match.start(), match.end() - 1
        start = first + removed[bisect_right(cuts, first)]
        end = last + removed[bisect_right(cuts, last)] + 1
        # Ranges come from non-overlapping matches, so their ends ascend: the first range ending
        # after the token's start is the only candidate for the first overlap.
        index = bisect_right(ends, start)
        hit = index < len(starts) and starts[index] < end
        tokens.append(match.group())
        hallucinated.append(hit)
        categories.append(range_cats[index] if hit else NONE)
    return Marked(tokens, hallucinated, categories)


def _without_tags(text: str) -> tuple[str, list[int], list[int]]:
    """The text without exact tags, and where they were.

    ``cuts`` are the positions in the clean text where tags were removed (ascending, distinct)
    and ``removed[k]`` is the length of the tags removed at the first ``k`` cuts, so the clean
    character ``i`` sits at ``i + removed[bisect_right(cuts, i)]`` in ``text``.
    """
    pieces: list[str] = []
    cuts: list[int] = []
    removed = [0]
    position = clean_length = 0
    for match in _TAGS.finditer(text):
        pieces.append(text[position : match.start()])
        clean_length += match.start() - position
        if cuts and cuts[-1] == clean_length:  # adjacent tags: one cut
            removed[-1] += match.end() - match.start()
        else:
            cuts.append(clean_length)
            removed.append(removed[-1] + match.end() - match.start())
        position = match.end()
    pieces.append(text[position:])
    return "".join(pieces), cuts, removed


def count_tokens(text: str) -> int:
    """How many tokens a text has, not counting exact tags (as the official sentence split)."""
    found = TOKEN_PATTERN.findall(text)
    if OPEN in text or CLOSE in text:
        return sum(1 for token in found if token not in (OPEN, CLOSE))
    return len(found)


# --- per-sample metrics -----------------------------------------------------------------------


def binary_metrics(gold: Sequence[bool], pred: Sequence[bool]) -> tuple[float, float, float, float]:
    """Precision, recall, F1 and IoU of one sample's tokens (``compute_binary_metrics``).

    An empty sequence gives 0 everywhere. Without any gold hallucination precision, recall and
    F1 are 0 whatever the prediction, and IoU is 1 only when nothing is flagged either.
    """
    if not gold or len(gold) != len(pred):
        return 0.0, 0.0, 0.0, 0.0
    tp = fp = fn = 0
    for g, t in zip(gold, pred, strict=True):
        if g:
            if t:
                tp += 1
            else:
                fn += 1
        elif t:
            fp += 1
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    union = tp + fp + fn
    iou = tp / union if union else 1.0
    return precision, recall, f1, iou


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from counts, each 0 when its denominator is 0."""
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def sentence_counts(
    gold_text: str, gold: Sequence[bool], pred: Sequence[bool]
) -> tuple[int, int, int]:
    """Sentence TP, FP, FN of one sample, on the aligned sequences (official sentence level).

    Sentences are cut in the gold text after every ``. ! ? 。！？`` (also inside ``3.5`` or
    ``U.S.A.``), and each takes as many positions of the sequences as it has tokens. Because
    the pieces of ``3.5`` count as two tokens, later sentences drift; the slices are capped at
    the aligned length. A sentence is positive when its slice holds a hallucinated token.
    """
    length = min(len(gold), len(pred))
    clean = _TAGS.sub("", gold_text)
    tp = fp = fn = 0
    current = 0
    for sentence in _SENTENCE.split(clean):
        if not sentence.strip():
            continue
        end = min(current + count_tokens(sentence), length)
        if current < end:
            g = any(gold[current:end])
            t = any(pred[current:end])
            tp += g and t
            fp += t and not g
            fn += g and not t
        current = end
    return tp, fp, fn


def length_stratum(aligned_length: int) -> str:
    """The official length bucket of a sample, from its aligned token count."""
    if aligned_length < SHORT:
        return STRATA[0]
    return STRATA[1] if aligned_length < LONG else STRATA[2]


def set_metrics(predicted: set[int], gold: set[int]) -> tuple[float, float, float]:
    """The evaluation card's recipe: P, R, F1 over sets of hallucinated token indices."""
    hits = len(predicted & gold)
    precision = hits / len(predicted) if predicted else 0.0
    recall = hits / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1
