"""``<HALLUCINATION>`` tagged captions: extracting the answer, checking it, normalising gold tags.

DetailVerifyBench asks a model to repeat the caption it was given with every hallucinated word
wrapped in ``<HALLUCINATION>…</HALLUCINATION>``, inside ``<result>…</result>``, or to answer
``<result>NO HALLUCINATION</result>``. The rules here are those of the official ``inference.py``
(``post_process_*_output`` and ``validate_output``), quirks included; docs/detailverify.md lists
each one with an example.

- Only the exact upper-case tags count in model outputs. ``<Hallucination>`` in a model output is
  plain text (its letters become words, so the output fails the word check).
- The gold's mixed-case ``<Hallucination>`` is rewritten to upper case by the data loader, as the
  official converter does; any other casing survives as text there too (:func:`odd_case_tags`).

Nothing here raises on model text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

OPEN = "<HALLUCINATION>"
CLOSE = "</HALLUCINATION>"
NO_HALLUCINATION = "NO HALLUCINATION"

_RESULT_OPEN = "<result>"
_RESULT_CLOSE = "</result>"
_THINK_CLOSE = "</think>"

_TAGS = re.compile(r"<HALLUCINATION>|</HALLUCINATION>")
# Verbatim from the official validate_output: no DOTALL, so nesting across a newline is missed.
_NESTED = re.compile(r"<HALLUCINATION>(?:(?!</HALLUCINATION>).)*<HALLUCINATION>")
_WORDS = re.compile(r"\b\w+\b")
_ANY_CASE_TAG = re.compile(r"</?hallucination>", re.IGNORECASE)


def extract_result(text: str | None, *, thinking: bool = False) -> str:
    """The answer inside ``<result>…</result>``, stripped; ``""`` when there is none.

    Without thinking the **first** block counts and there is no fallback
    (``post_process_no_think_output``). With thinking the **last** block counts (a reasoning
    trace may quote the format), and without any block everything after the last ``</think>``
    is taken (``post_process_think_output``). Tags are case-sensitive: ``<Result>`` is text.
    """
    if not text:
        return ""
    blocks = _result_blocks(text, first_only=not thinking)
    if blocks:
        return blocks[-1].strip()
    if thinking and _THINK_CLOSE in text:
        return text.split(_THINK_CLOSE)[-1].strip()
    return ""


def _result_blocks(text: str, *, first_only: bool) -> list[str]:
    """What ``re.finditer(r"<result>(.*?)</result>", text, re.S)`` matches, in linear time.

    A ``<result>`` with no ``</result>`` after it cannot match, and then no later one can either,
    so scanning with ``str.find`` gives the same matches without the regex's quadratic worst case
    on text full of unclosed ``<result>`` tags.
    """
    blocks: list[str] = []
    pos = 0
    while (start := text.find(_RESULT_OPEN, pos)) >= 0:
        content = start + len(_RESULT_OPEN)
        end = text.find(_RESULT_CLOSE, content)
        if end < 0:
            break
        blocks.append(text[content:end])
        if first_only:
            break
        pos = end + len(_RESULT_CLOSE)
    return blocks


def is_no_hallucination(answer: str) -> bool:
    """``NO HALLUCINATION`` in any case, with surrounding blanks (``.strip().upper()``)."""
    return answer.strip().upper() == NO_HALLUCINATION


def strip_tags(text: str) -> str:
    """The text with every exact ``<HALLUCINATION>`` / ``</HALLUCINATION>`` removed."""
    return _TAGS.sub("", text)


def words(text: str) -> list[str]:
    """The official validity check's words: Unicode ``\\b\\w+\\b`` runs, case kept."""
    return _WORDS.findall(text)


class Validity(StrEnum):
    """Why an answer passed or failed ``validate_output``."""

    NO_HALLUCINATION = "no_hallucination"
    TAGGED = "tagged"
    EMPTY = "empty"
    TAGS_MISMATCH = "tags_mismatch"
    NESTED = "nested_tags"
    WORDS_CHANGED = "words_changed"


VALID = frozenset({Validity.NO_HALLUCINATION, Validity.TAGGED})


def validate(caption: str, answer: str) -> Validity:
    """The official validity rules, in their order.

    1. ``NO HALLUCINATION`` (any case, blanks around) is valid.
    2. The number of ``<HALLUCINATION>`` must equal the number of ``</HALLUCINATION>``
       (their order is never checked).
    3. No ``<HALLUCINATION>`` may follow another before a ``</HALLUCINATION>`` on the same line.
    4. With the tags removed, the ``\\w+`` words must equal the caption's, in order and case;
       punctuation and spacing may change freely.

    An empty answer (no ``<result>`` found) fails rule 4 unless the caption has no word at all;
    it is reported as ``empty`` rather than ``words_changed``.
    """
    if is_no_hallucination(answer):
        return Validity.NO_HALLUCINATION
    if answer.count(OPEN) != answer.count(CLOSE):
        return Validity.TAGS_MISMATCH
    if _NESTED.search(answer):
        return Validity.NESTED
    if words(caption) != words(strip_tags(answer)):
        return Validity.EMPTY if not answer else Validity.WORDS_CHANGED
    return Validity.TAGGED


# --- gold captions ---------------------------------------------------------------------------


def normalize_gold_tags(text: str) -> str:
    """The official ``offline`` converter: exactly ``<Hallucination>`` / ``</Hallucination>``
    become upper case; every other spelling is left as it is (and so stays text)."""
    return text.replace("<Hallucination>", OPEN).replace("</Hallucination>", CLOSE)


def odd_case_tags(text: str) -> int:
    """Tags spelled in a case the scorer does not recognise (``<hallucination>``, ...)."""
    return sum(1 for m in _ANY_CASE_TAG.finditer(text) if m.group() not in (OPEN, CLOSE))


@dataclass(frozen=True)
class TagProblem:
    position: int
    message: str


def tag_structure_problem(text: str) -> TagProblem | None:
    """The first way the tags of a gold caption fail to pair up, or None when they pair.

    Gold must alternate open, close, open, close: an unclosed, unopened or nested tag means
    the annotation cannot be read as spans.
    """
    depth = 0
    last_open = -1
    for match in _TAGS.finditer(text):
        if match.group() == OPEN:
            if depth:
                return TagProblem(match.start(), f"nested {OPEN} at character {match.start()}")
            depth, last_open = 1, match.start()
        else:
            if not depth:
                return TagProblem(
                    match.start(), f"{CLOSE} without an opening tag at character {match.start()}"
                )
            depth = 0
    if depth:
        return TagProblem(last_open, f"{OPEN} at character {last_open} is never closed")
    return None
