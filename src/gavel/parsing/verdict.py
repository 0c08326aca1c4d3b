"""The verdict (does the caption contain an error?) and the explanation, from a model's answer.

First, what the model did not write itself is set aside: ``<think>`` drafts, and any text
copied from a prompt gavel sent (:mod:`gavel.parsing.echo`, the caller's filter: the answer template
``{"hallucination": true or false, ...}``, a rule such as "Use an empty list when there is no
error.", a judge rubric line). Then, in order (docs/metrics.md repeats them):

0. An answer that offers both verdicts ("yes or no", "true/false", ``"hallucination": "yes or
   no"``) has none.
1. A JSON object in the answer with a verdict key (``hallucination``, ``hallucinated``,
   ``has_error``, ``verdict``, …, or an inverted one such as ``is_correct``) decides, when its
   value is a boolean or a known word.
2. Otherwise the prose: an answer that opens with "yes" or "no" (the prompt asks whether the
   caption contains an error) decides.
3. Otherwise the earliest verdict phrase in the text decides ("no hallucination", "the caption
   is accurate" → clean; "contains a hallucination", "the caption is incorrect" → error) —
   unless the answer was cut off by the token limit: a phrase somewhere in a ramble that never
   finished is not taken as the model's conclusion (a verdict key written out in full in a JSON
   object cut off later still counts, as rule 1).
4. Otherwise the verdict is unresolved and the sample is ``unparseable``.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from gavel.parsing.echo import EchoFilter
from gavel.parsing.structured import first_object, lower_keys, lowered_keys, strip_think

#: Keys whose truthy value means "the caption has an error".
VERDICT_KEYS = (
    "hallucination",
    "hallucinated",
    "has_hallucination",
    "is_hallucinated",
    "contains_hallucination",
    "hallucination_detected",
    "has_error",
    "error",
    "verdict",
    "label",
    "answer",
    "result",
)
#: Keys whose truthy value means "the caption is correct".
INVERTED_KEYS = ("is_correct", "correct", "accurate", "is_accurate", "consistent", "is_consistent")

EXPLANATION_KEYS = (
    "explanation",
    "reason",
    "reasoning",
    "rationale",
    "analysis",
    "error_description",
    "description",
)
MAX_EXPLANATION = 4000
#: The filter that sets nothing aside (a caller that sent no prompt of gavel's).
NO_ECHO = EchoFilter(())

_TRUE_WORDS = {
    "yes",
    "true",
    "hallucinated",
    "hallucination",
    "incorrect",
    "inaccurate",
    "wrong",
    "error",
    "inconsistent",
    "mismatch",
    "misaligned",
    "1",
}
_FALSE_WORDS = {
    "no",
    "false",
    "no hallucination",
    "not hallucinated",
    "none",
    "correct",
    "accurate",
    "consistent",
    "aligned",
    "no error",
    "0",
}

_NEGATIVE = [
    r"\bno hallucinations?\b",
    r"\b(?:does|do) not (?:contain|include|have) (?:any )?(?:hallucinations?|errors?|mistakes?)",
    r"\bfree (?:of|from) (?:any )?(?:hallucinations?|errors?)",
    r"\bthere (?:is|are) no (?:hallucinations?|errors?|mistakes?|inconsistenc(?:y|ies))",
    r"\b(?:caption|description|sentence|text) (?:is|looks) (?:fully |entirely |completely )?"
    r"(?:accurate|correct|consistent|faithful)",
    r"\b(?:caption|description|sentence|text) (?:accurately|correctly) (?:describes|matches)",
    r"\bhallucinat\w*\W{0,3}\s*(?:no|false|none)\b",
    r"\bnot hallucinated\b",
]
_POSITIVE = [
    r"\b(?:contains?|includes?|has) (?:a |an |one |some )?(?:hallucinat\w*|errors?|mistakes?)",
    r"\bthere (?:is|are) (?:a |an |one |some )?(?:hallucinations?|errors?|mistakes?)",
    r"\bis hallucinated\b",
    r"\b(?:caption|description|sentence|text) is (?:incorrect|inaccurate|wrong|misleading)",
    r"\bdoes(?: not|n't) match\b",
    r"\bhallucinat\w*\W{0,3}\s*(?:yes|true)\b",
]
_NEGATIVE_RE = re.compile("|".join(f"(?:{p})" for p in _NEGATIVE), re.IGNORECASE)
_POSITIVE_RE = re.compile("|".join(f"(?:{p})" for p in _POSITIVE), re.IGNORECASE)
_LEADING = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)
# Both verdicts offered as alternatives: "yes or no", "'yes' or 'no'", "true/false", "no|yes".
# That is, case-insensitively, r"\b(?:yes<or>no|no<or>yes|true<or>false|false<or>true)\b" with
# <or> = r"\W{0,3}(?:or|/|\|)\W{0,3}"; spelled out here so that the regular expression engine
# can skip to the next y, n, t or f (it cannot under re.IGNORECASE): each letter is the class of
# what matches it ignoring case ("s" matches the long s, "ſ", too), the opening \b a look-behind
# after the first letter, which the look-behind that follows it names.
_OR = r"\W{0,3}(?:[Oo][Rr]|/|\|)\W{0,3}"
_YES, _NO, _TRUE, _FALSE = "[Yy][Ee][Ssſ]", "[Nn][Oo]", "[Tt][Rr][Uu][Ee]", "[Ff][Aa][Ll][Ssſ][Ee]"
_BOTH_WAYS = re.compile(
    r"[YyNnTtFf](?<!\w.)(?:"
    rf"(?<=[Yy])[Ee][Ssſ]{_OR}{_NO}|(?<=[Nn])[Oo]{_OR}{_YES}"
    rf"|(?<=[Tt])[Rr][Uu][Ee]{_OR}{_FALSE}|(?<=[Ff])[Aa][Ll][Ssſ][Ee]{_OR}{_TRUE}"
    r")(?!\w)"
)
# Each tagged span may not contain its own opening tag, so many unclosed opening tags cost linear,
# not quadratic, time.
_BOX_MARKUP = re.compile(
    r"```.*?```|<box>(?:(?!<box>).)*?</box>|<\|det\|>(?:(?!<\|det\|>).)*?<\|/det\|>"
    r"|<\|box_start\|>(?:(?!<\|box_start\|>).)*?<\|box_end\|>"
    r"|<\|begin_of_box\|>(?:(?!<\|begin_of_box\|>).)*?<\|end_of_box\|>"
    r"|<loc_?\d+>|<p-?\d+>|</?ref>|<\|/?[a-z_]+\|>",
    re.DOTALL,
)


def _both_ways(text: str) -> bool:
    lowered = text.lower()  # a cheap test first: most answers hold at most one of each pair
    if not (("yes" in lowered and "no" in lowered) or ("true" in lowered and "false" in lowered)):
        return False
    if "or" not in lowered and "/" not in text and "|" not in text:
        return False  # nothing joins the two words
    return _BOTH_WAYS.search(text) is not None


def _word_verdict(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = " ".join(value.strip().lower().strip(".!").split())
        if word in _FALSE_WORDS:
            return False
        if word in _TRUE_WORDS:
            return True
    return None


def verdict_from_object(obj: dict[str, Any]) -> bool | None:
    """Rule 1 on any object (a caller's own may change between calls: lowered afresh)."""
    return _lowered_verdict(lower_keys(obj))


def _lowered_verdict(lowered: dict[str, Any]) -> bool | None:
    """Rule 1 on an object whose keys :func:`~gavel.parsing.structured.lower_keys` lower-cased."""
    for key in VERDICT_KEYS:
        if key in lowered and (verdict := _word_verdict(lowered[key])) is not None:
            return verdict
    for key in INVERTED_KEYS:
        if key in lowered and (verdict := _word_verdict(lowered[key])) is not None:
            return not verdict
    return None


def verdict_from_prose(text: str, *, phrases: bool = True) -> bool | None:
    """Rules 2 and 3 on prose; ``phrases=False`` stops after rule 2 (an unfinished answer)."""
    leading = _LEADING.match(text)
    if leading:
        return leading.group(1).lower() == "yes"
    if not phrases:
        return None
    negative = _NEGATIVE_RE.search(text)
    positive = _POSITIVE_RE.search(text)
    if negative and positive:
        return positive.start() < negative.start()
    if negative:
        return False
    if positive:
        return True
    return None


class AnswerReading(msgspec.Struct, frozen=True, gc=False):
    """What an answer says, and why a verdict may be missing (a frozen Struct: one is made for
    every answer scored, for a twentieth of a frozen dataclass's cost)."""

    verdict: bool | None
    explanation: str
    #: Fragments of a shipped prompt found (and set aside) in the answer.
    copied: int = 0
    #: ``both_ways`` (both verdicts offered), ``truncated`` (cut off before a conclusion;
    #: a verdict phrase was found in the unfinished text but not taken), or None.
    refused: str | None = None


def read_answer(
    text: str | None, *, truncated: bool = False, echo: EchoFilter = NO_ECHO
) -> AnswerReading:
    """The verdict and the explanation of one answer (the module's rules, in order).

    ``truncated``: the answer was cut off by the token limit (``finish_reason: length``).
    ``echo``: the prompts sent, whose copied text is set aside first (the caller's: a benchmark
    passes :func:`gavel.benchmarks.registry.echo_filter`); by default nothing is set aside."""
    if not text:
        return AnswerReading(None, "")
    body, copied = echo.removed(strip_think(text))
    obj = first_object(body)
    # Lowered once for the verdict, the explanation and the boxes (which parse_boxes reads).
    lowered = None if obj is None else lowered_keys(obj)
    prose = None
    explanation = None if lowered is None else _object_explanation(lowered)
    if explanation is None:
        prose = _prose(body)
        explanation = prose[:MAX_EXPLANATION]
    if _both_ways(body):
        return AnswerReading(None, explanation, copied, "both_ways")
    if lowered is not None and (verdict := _lowered_verdict(lowered)) is not None:
        return AnswerReading(verdict, explanation, copied)
    if truncated and (verdict := _unfinished_object_verdict(body)) is not None:
        return AnswerReading(verdict, explanation, copied)
    if prose is None:
        prose = _prose(body)
    verdict = verdict_from_prose(prose, phrases=not truncated)
    refused = None
    if verdict is None and truncated and verdict_from_prose(prose) is not None:
        refused = "truncated"
    return AnswerReading(verdict, explanation, copied, refused)


# A verdict key whose value was written out in full, in a JSON object cut off later on.
_KEY_VALUE = re.compile(
    r'"(' + "|".join(VERDICT_KEYS + INVERTED_KEYS) + r')"\s*:\s*(true|false|0|1|"[^"]{0,40}")'
    r"\s*[,}]",
    re.IGNORECASE,
)


def _unfinished_object_verdict(body: str) -> bool | None:
    """Rule 1 for an object the token limit cut off: ``{"hallucination": true, "expl`` still
    states its verdict. Only keys whose value is complete count, in rule 1's key order."""
    found: dict[str, str] = {}
    for match in _KEY_VALUE.finditer(body):
        found.setdefault(match.group(1).lower(), match.group(2).strip('"'))
    value = {key: True if v == "true" else False if v == "false" else v for key, v in found.items()}
    return verdict_from_object(value) if value else None


def parse_verdict(
    text: str | None, *, truncated: bool = False, echo: EchoFilter = NO_ECHO
) -> bool | None:
    """True: the answer says the caption has an error; False: it says it has none."""
    return read_answer(text, truncated=truncated, echo=echo).verdict


def _object_explanation(lowered: dict[str, Any]) -> str | None:
    """The first non-blank explanation field of an object (keys lower-cased), if any."""
    for key in EXPLANATION_KEYS:
        value = lowered.get(key)
        if isinstance(value, str) and (value := value.strip()):
            return value[:MAX_EXPLANATION]
    return None


def _prose(body: str) -> str:
    """The answer without box markup, its blank runs made single spaces.

    Every markup form opens with ``<`` or three backticks: without either there is nothing to
    remove, and the regular expression's scan is skipped."""
    if "<" in body or "```" in body:
        body = _BOX_MARKUP.sub(" ", body)
    return " ".join(body.split())


def parse_explanation(text: str | None, *, echo: EchoFilter = NO_ECHO) -> str:
    """The explanation field of a JSON answer, else the prose without box markup (in both
    cases without text copied from a prompt ``echo`` holds)."""
    return read_answer(text, echo=echo).explanation
