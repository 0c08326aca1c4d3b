"""The verdict (does the caption contain an error?) and the explanation, from a model's answer.

Rules, in order (docs/metrics.md repeats them):

1. A JSON object in the answer with a verdict key (``hallucination``, ``hallucinated``,
   ``has_error``, ``verdict``, …, or an inverted one such as ``is_correct``) decides, when its
   value is a boolean or a known word.
2. Otherwise the prose: an answer that opens with "yes" or "no" (the prompt asks whether the
   caption contains an error) decides.
3. Otherwise the earliest verdict phrase in the text decides ("no hallucination", "the caption
   is accurate" → clean; "contains a hallucination", "the caption is incorrect" → error).
4. Otherwise the verdict is unresolved and the sample is ``unparseable``.
"""

from __future__ import annotations

import re
from typing import Any

from gavel.parsing.structured import first_object, strip_think

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
# Each tagged span may not contain its own opening tag, so many unclosed opening tags cost linear,
# not quadratic, time.
_BOX_MARKUP = re.compile(
    r"```.*?```|<box>(?:(?!<box>).)*?</box>|<\|det\|>(?:(?!<\|det\|>).)*?<\|/det\|>"
    r"|<\|box_start\|>(?:(?!<\|box_start\|>).)*?<\|box_end\|>"
    r"|<\|begin_of_box\|>(?:(?!<\|begin_of_box\|>).)*?<\|end_of_box\|>"
    r"|<loc_?\d+>|<p-?\d+>|</?ref>|<\|/?[a-z_]+\|>",
    re.DOTALL,
)


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
    lowered = {str(k).lower(): v for k, v in obj.items()}
    for key in VERDICT_KEYS:
        if key in lowered and (verdict := _word_verdict(lowered[key])) is not None:
            return verdict
    for key in INVERTED_KEYS:
        if key in lowered and (verdict := _word_verdict(lowered[key])) is not None:
            return not verdict
    return None


def verdict_from_prose(text: str) -> bool | None:
    leading = _LEADING.match(text)
    if leading:
        return leading.group(1).lower() == "yes"
    negative = _NEGATIVE_RE.search(text)
    positive = _POSITIVE_RE.search(text)
    if negative and positive:
        return positive.start() < negative.start()
    if negative:
        return False
    if positive:
        return True
    return None


def parse_verdict(text: str | None) -> bool | None:
    """True: the answer says the caption has an error; False: it says it has none."""
    if not text:
        return None
    body = strip_think(text)
    obj = first_object(body)
    if obj is not None and (verdict := verdict_from_object(obj)) is not None:
        return verdict
    return verdict_from_prose(" ".join(_BOX_MARKUP.sub(" ", body).split()))


def parse_explanation(text: str | None) -> str:
    """The explanation field of a JSON answer, else the prose without box markup."""
    if not text:
        return ""
    body = strip_think(text)
    obj = first_object(body)
    if obj is not None:
        lowered = {str(k).lower(): v for k, v in obj.items()}
        for key in EXPLANATION_KEYS:
            if isinstance(lowered.get(key), str) and lowered[key].strip():
                return lowered[key].strip()[:MAX_EXPLANATION]
    return " ".join(_BOX_MARKUP.sub(" ", body).split())[:MAX_EXPLANATION]
