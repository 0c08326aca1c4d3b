"""Yes/no answers from free model text: each benchmark's own rule, and a strict extractor.

Three rules, by name (:data:`RULES`; docs/videohallucer.md works through examples of the first
two, docs/data-format.md says which benchmark uses which):

``official``
    What the VideoHallucer scoring code does: an answer is correct when its gold word occurs in
    the response as a *whole word*, case-insensitively, *anywhere*
    (``re.search(r"\\b(yes)\\b", response, re.IGNORECASE)``). "Yes.", "YES!" and "Answer: yes"
    contain "yes"; "Yesterday", "yes_no" and "Nope" do not. A hedged "yes or no" contains both
    words, so it is correct whatever the gold answer is. There is no "unknown": a response with
    neither word is simply wrong. :func:`contains_word` and :func:`official_label`.

``strict``
    :func:`strict_yes_no`: the response must *open* with "yes" or "no" as a whole word (after
    leading punctuation, markup and an optional "Answer:" label), and the other word must not
    occur anywhere in it. Everything else — hedges, refusals, "I think yes", "Nope", a bare
    empty string — is ``unknown``, which callers count and report as a rate.

``mme``
    :func:`mme_label`: what MME's own evaluation tool does (``eval_tool/calculation.py``,
    ``parse_pred_ans``, after it lower-cases the answer): the answer that *is* ``yes`` or ``no``
    is that word; else ``yes`` when "yes" occurs anywhere in its first four characters, else
    ``no`` when "no" does (as letters, not as a word: "Nope" and "Not really" are ``no``), else
    ``other``. Only the opening counts: LaVIN's "the image shows a white wall with a sign on it
    that says "no smoking."" is ``other`` under MME's rule, where the official whole-word rule
    finds "no" and reads ``no``.

No function here raises on any string.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gavel.parsing.structured import strip_think

YES = "yes"
NO = "no"
UNKNOWN = "unknown"
#: :func:`official_label` values for responses that contain both words or neither.
BOTH = "both"
NEITHER = "neither"

#: The rules VideoHallucer's scoring offers (``--answer-rule``).
ANSWER_RULES = ("official", "strict")
#: :func:`mme_label`'s answer for a reply that opens with neither word.
OTHER = "other"

# The upstream pattern is r'\b(' + answer + r')\b' with the gold answer spliced in unescaped; for
# "yes" and "no" escaping changes nothing.
_WORD = {
    YES: re.compile(r"\b(yes)\b", re.IGNORECASE),
    NO: re.compile(r"\b(no)\b", re.IGNORECASE),
}
_OPPOSITE = {YES: NO, NO: YES}
# Leading punctuation, quotes and markdown ("**", "> ", "- "), then an optional "Answer:" /
# "Final answer -" label, then the word itself.
_LEADING = re.compile(
    r"^[\W_]*+(?:(?:final\s+)?answer\b[\W_]*+)?(yes|no)\b",
    re.IGNORECASE,
)


#: The two answers offered as alternatives ("yes or no", "'yes' or 'no'", "yes/no"): the options
#: restated, not an answer.
BOTH_WAYS = re.compile(
    r"\b(?:yes\W{0,3}(?:or|/|\|)\W{0,3}no|no\W{0,3}(?:or|/|\|)\W{0,3}yes)\b", re.IGNORECASE
)


def contains_word(word: str, text: str) -> bool:
    """The official match: ``word`` occurs in ``text`` as a whole word, ignoring case."""
    pattern = _WORD.get(word.lower())
    if pattern is None:
        pattern = re.compile(r"\b(" + re.escape(word) + r")\b", re.IGNORECASE)
    return pattern.search(text) is not None


def official_label(text: str) -> str:
    """``yes``, ``no``, ``both`` or ``neither``: which of the two words the response contains."""
    said_yes = contains_word(YES, text)
    said_no = contains_word(NO, text)
    if said_yes and said_no:
        return BOTH
    if said_yes:
        return YES
    return NO if said_no else NEITHER


#: Why the strict rule could not read an answer (:func:`strict_reading`).
EMPTY = "empty"
NO_OPENING_WORD = "no_opening_word"
OTHER_WORD_TOO = "other_word_too"


def strict_reading(text: str | None) -> tuple[str, str | None]:
    """The strict label and, for ``unknown``, why: ``empty``, ``no_opening_word`` (a sentence
    such as "angle A + angle B is not less than 180°") or ``other_word_too`` ("No, it cannot
    … yes" quotes the other word)."""
    if not text:
        return UNKNOWN, EMPTY
    leading = _LEADING.match(text)
    if leading is None:
        return UNKNOWN, NO_OPENING_WORD
    word = leading.group(1).lower()
    if contains_word(_OPPOSITE[word], text):
        return UNKNOWN, OTHER_WORD_TOO
    return word, None


def strict_yes_no(text: str | None) -> str:
    """``yes``, ``no`` or ``unknown``: the opening word, unless the other word also occurs."""
    return strict_reading(text)[0]


def mme_label(text: str | None) -> str:
    """``yes``, ``no`` or ``other``: MME's rule (the exact word, else "yes" or "no" within the
    first four characters, "yes" first, else ``other``), on the lower-cased answer."""
    answer = (text or "").lower()
    if answer in (YES, NO):
        return answer
    opening = answer[:4]
    if YES in opening:
        return YES
    return NO if NO in opening else OTHER


@dataclass(frozen=True)
class AnswerRule:
    """A named yes/no rule: what it reads a reply as, the labels it gives, whose rule it is."""

    name: str
    read: Callable[[str | None], str]
    labels: tuple[str, ...]
    #: The benchmark whose own scoring code the rule follows (or gavel's, for ``strict``).
    used_by: str


def _official(text: str | None) -> str:
    return official_label(text or "")


#: Every yes/no rule gavel knows, by name.
RULES = {
    rule.name: rule
    for rule in (
        AnswerRule("official", _official, (YES, NO, BOTH, NEITHER),
                   "VideoHallucer (its scoring code: the gold word as a whole word anywhere)"),
        AnswerRule("strict", strict_yes_no, (YES, NO, UNKNOWN),
                   "gavel (VideoHallucer's --answer-rule strict)"),
        AnswerRule("mme", mme_label, (YES, NO, OTHER),
                   "MME (eval_tool/calculation.py, parse_pred_ans)"),
    )
}  # fmt: skip


def read_yes_no(rule: str, text: str | None) -> str:
    """``text`` read by the rule named ``rule`` (a key of :data:`RULES`)."""
    try:
        chosen = RULES[rule]
    except KeyError:
        raise ValueError(
            f"unknown answer rule {rule!r}; choose one of: {', '.join(RULES)}"
        ) from None
    return chosen.read(text)


def prepare(text: str, *, drop_think: bool) -> str:
    """The text a rule reads: the raw response, or with ``<think>`` blocks removed."""
    return strip_think(text) if drop_think else text
