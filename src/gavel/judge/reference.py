"""A rule-based reference score for explanations of synthetic GAVEL samples.

Why it exists: the offline proxy judge maps a similarity to 1–5, and that mapping has to be
fitted against *something* that reads the prediction as the paper's rubric does. On synthetic
data the injected error is known word for word (``scenes.jsonl`` records
``{"category", "claim", "truth"}``, e.g. claim "red", truth "blue"), so a few transparent rules
can say whether an explanation names the error. This is a reference for calibration and for
checking the proxy, not a judge for real data: it needs the error record.

The ladder for a sample **with** a hallucination follows the paper's rubric (5 fully
consistent, 4 mostly consistent, 3 partially consistent but missing important details, 2 weakly
related, 1 irrelevant or wrong):

====  =====================================================================================
5     verdict "yes" and the explanation names both the wrong claim and the truth
4     verdict "yes", names the truth only (the correction is there; what the caption said
      is left implicit)
3     verdict "yes", names the claim only (the error is located, the correction is missing)
2     verdict "yes", names neither (right conclusion, nothing that matches: vague, empty, or
      about another detail)
1     verdict "no": says there is no hallucination where there is one
====  =====================================================================================

An unclear verdict (none found) costs one step: 4, 3, 2, 1 for both / truth / claim / neither.

For a sample **without** a hallucination, along the paper's second rubric (5 clearly no
hallucination, 4 with minor ambiguity, 2–3 unclear, 1 claims a hallucination):

====  =====================================================================================
5     verdict "no", and the explanation neither hedges nor describes an error
4     verdict "no", with a hedge ("probably", "I am not sure", "seems")
3     verdict unclear, but the explanation says the caption is correct, without hedging
2     verdict "no" while the explanation describes an error (self-contradictory); or
      verdict unclear without a clear statement either way
1     verdict "yes"; or verdict unclear and the explanation describes an error
====  =====================================================================================

Matching: a word or phrase is *named* when it occurs as a whole word (or whole phrase),
case-insensitive, with spaces and hyphens interchangeable and a plural "s"/"es" allowed on single
words; a few equivalents count too (digits for number words, "big" for "large", "tiny" for
"small", "filled" for "solid", "hollow" for "outlined", "no pattern" for "plain", "top left" or
"middle left" for the place phrases "in the top left" and "on the left"). A place must not
continue into another place ("at the top" is not named by "at the top left"). The rules do not
check the order of the two words, so "it is red, not blue" names both when the truth is blue.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gavel.judge.items import OK, Judged, JudgeItem, not_answered
from gavel.synth.vocabulary import NUMBER_WORDS, PLACES

NAME = "rule-reference (synthetic)"
VERSION = "1"

#: Words that count as naming a vocabulary word (besides the word itself).
EQUIVALENTS: dict[str, tuple[str, ...]] = {
    "large": ("big",),
    "small": ("tiny",),
    "solid": ("filled",),
    "outlined": ("hollow",),
    "plain": ("no pattern", "unpatterned"),
    **{word: (str(number),) for number, word in NUMBER_WORDS.items()},
}

_HEDGES = re.compile(
    r"\b(maybe|might|perhaps|possibly|probably|likely|seems?|appears?|not (?:entirely |quite )?"
    r"sure|unsure|uncertain|hard to (?:tell|say)|difficult to (?:tell|say)|cannot (?:be sure|"
    r"tell|verify)|can't (?:be sure|tell|verify)|i think|i believe|mostly|largely)\b",
    re.IGNORECASE,
)
#: Phrases that deny an error; removed before looking for error words, so "no error" is not one.
_DENIALS = re.compile(
    r"\b(?:no|without(?: any)?|free of)\s+(?:(?:visible|obvious|apparent)\s+)?"
    r"(?:errors?|mistakes?|hallucinations?|mismatch(?:es)?|inaccurac(?:y|ies))\b"
    r"|\bnothing\b[^.;]{0,20}?\b(?:wrong|incorrect|inaccurate)\b"
    r"|\bnot\s+(?:wrong|incorrect|inaccurate)\b",
    re.IGNORECASE,
)
_ERRORS = re.compile(
    r"\b(wrong(?:ly)?|incorrect(?:ly)?|inaccurate(?:ly)?|errors?|mistake[ns]?|mismatch(?:es)?|"
    r"hallucinat\w*|(?:does not|doesn't|do not|don't) match|not match|actually|instead|in fact|"
    r"rather than|but\b[^.;]*?\b(?:is|are))\b",
    re.IGNORECASE,
)
_CORRECT = re.compile(
    r"\b(match(?:es|ing)?|correct(?:ly)?|accurate(?:ly)?|grounded|consistent|true|right)\b",
    re.IGNORECASE,
)
_VERDICT_PREFIX = re.compile(r"^\s*Hallucination:\s*(?:yes|no|unclear)\.\s*", re.IGNORECASE)


def explanation_of(prediction: str) -> str:
    """The prose of a prediction text, without the "Hallucination: yes." that
    :func:`gavel.judge.protocol.prediction_text` puts before it."""
    return _VERDICT_PREFIX.sub("", prediction, count=1).strip()


def _phrase_pattern(phrase: str, plural: bool) -> str:
    words = [re.escape(w) for w in phrase.lower().split()]
    body = r"[\s-]+".join(words)
    if plural and len(words) == 1:
        body += r"(?:e?s)?"
    return body


@cache
def _matcher(word: str) -> re.Pattern[str]:
    """The regex that finds ``word`` (a vocabulary word or a place phrase) or an equivalent."""
    word = word.strip().lower()
    if word in PLACES:
        row, column = PLACES[word]
        forms = {word, f"{row} {column}"}
        if (row, column) == ("middle", "center"):
            forms.add("in the middle")
        if row == "middle":
            forms.add(f"center {column}")
        bodies = [_phrase_pattern(f, plural=False) for f in sorted(forms)]
        # A place must not run on into a more specific one ("at the top" vs "at the top left").
        tail = r"(?![\s-]+(?:left|right|center|centre|middle)\b)"
        return re.compile(r"(?<![\w-])(?:" + "|".join(bodies) + r")(?![\w-])" + tail, re.I)
    forms = {word, *EQUIVALENTS.get(word, ())}
    bodies = [_phrase_pattern(f, plural=True) for f in sorted(forms)]
    return re.compile(r"(?<![\w-])(?:" + "|".join(bodies) + r")(?![\w-])", re.IGNORECASE)


def names(text: str, word: str) -> bool:
    """Does ``text`` name ``word`` (whole word or phrase, case-insensitive, with equivalents)?"""
    return bool(word.strip()) and _matcher(word).search(text) is not None


def describes_error(text: str) -> bool:
    """Does the text say something is wrong (after removing denials such as "no error")?"""
    return _ERRORS.search(_DENIALS.sub(" ", text)) is not None


def hedges(text: str) -> bool:
    return _HEDGES.search(text) is not None


def says_correct(text: str) -> bool:
    """Does the text state that the caption is right ("matches", "correct", "no error")?"""
    return _CORRECT.search(text) is not None or _DENIALS.search(text) is not None


@dataclass(frozen=True)
class Reference:
    score: int
    reason: str


def score_hallucinated(verdict: bool | None, explanation: str, claim: str, truth: str) -> Reference:
    """The ladder for a sample with a hallucination (see the module docstring)."""
    if verdict is False:
        return Reference(1, "says there is no hallucination")
    has_claim, has_truth = names(explanation, claim), names(explanation, truth)
    if has_claim and has_truth:
        score, what = 5, "names the wrong claim and the truth"
    elif has_truth:
        score, what = 4, "names the truth but not the wrong claim"
    elif has_claim:
        score, what = 3, "names the wrong claim but not the truth"
    else:
        score, what = 2, "names neither the wrong claim nor the truth"
    if verdict is None:
        return Reference(max(1, score - 1), f"unclear verdict; {what}")
    return Reference(score, what)


def score_clean(verdict: bool | None, explanation: str) -> Reference:
    """The ladder for a sample without a hallucination (see the module docstring)."""
    if verdict is True:
        return Reference(1, "claims a hallucination")
    error = describes_error(explanation)
    if verdict is False:
        if error:
            return Reference(2, "says no hallucination but describes an error")
        if hedges(explanation):
            return Reference(4, "says no hallucination, with a hedge")
        return Reference(5, "says no hallucination")
    if error:
        return Reference(1, "unclear verdict; describes an error")
    if says_correct(explanation) and not hedges(explanation):
        return Reference(3, "unclear verdict; says the caption is correct")
    return Reference(2, "unclear verdict; ambiguous")


def reference_score(
    hallucinated: bool, verdict: bool | None, explanation: str, error: Mapping[str, Any] | None
) -> Reference:
    """The reference score of one prediction. ``explanation`` is the prose without the verdict
    prefix; ``error`` is the sample's ``{"category", "claim", "truth"}`` (None when clean)."""
    if not hallucinated:
        return score_clean(verdict, explanation)
    if not error or not error.get("claim") or not error.get("truth"):
        raise ValueError("a sample with a hallucination needs its error's claim and truth")
    return score_hallucinated(verdict, explanation, str(error["claim"]), str(error["truth"]))


def load_errors(scenes: Path) -> dict[str, dict[str, str] | None]:
    """Each sample's error record from a synthetic set's ``scenes.jsonl``."""
    errors: dict[str, dict[str, str] | None] = {}
    with scenes.open() as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                if "error" not in record:
                    raise ValueError(
                        f"{scenes} has no error records; regenerate it with this gavel version"
                    )
                errors[record["id"]] = record["error"]
    return errors


class ReferenceJudge:
    """The reference as a judge (same interface as the others), for synthetic sets only."""

    name = NAME

    def __init__(self, errors: Mapping[str, Mapping[str, Any] | None]) -> None:
        self.errors = errors

    def settings(self) -> dict[str, Any]:
        return {"judge": NAME, "version": VERSION, "rules": "gavel.judge.reference"}

    def judge(self, items: Sequence[JudgeItem], progress: bool = False) -> list[Judged]:
        del progress  # rules are instant
        return [self.judge_one(item) for item in items]

    def judge_one(self, item: JudgeItem) -> Judged:
        if item.prediction is None:
            return not_answered(item)
        if item.id not in self.errors:
            raise KeyError(f"no error record for sample {item.id}")
        found = reference_score(
            item.hallucinated,
            item.verdict,
            explanation_of(item.prediction),
            self.errors[item.id],
        )
        return Judged(
            id=item.id, column=item.column, status=OK, score=found.score, reason=found.reason
        )
