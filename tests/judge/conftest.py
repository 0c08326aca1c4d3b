"""The judge tests' shared reference: the paper's judge prompts as printed (appendix A.3)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

# Appendix A.3 of the GAVEL paper, as printed (line breaks are not preserved in the print).
PAPER_SYSTEM = "You are an evaluator. Output only a valid JSON object."
PAPER_HALLUCINATION = (
    "Compare the following two texts: Prediction: {prediction} Ground truth: {ground_truth} "
    "Consider whether the prediction agrees with the ground truth in meaning, including the "
    "hallucination conclusion and the explanation. Rate the prediction from 1 to 5: 5: fully "
    "consistent. 4: mostly consistent with only minor differences. 3: partially consistent but "
    "missing important details. 2: weakly related or largely inconsistent. 1: irrelevant or "
    'wrong. Reply with a JSON object only: { "score": 1-5, "reason": "one short sentence" }'
)
PAPER_NO_HALLUCINATION = (
    "The ground truth hallucination label is: NO HALLUCINATION. This means the prediction should "
    "clearly indicate that there is no hallucination and that the information is grounded or "
    "correct. Prediction: {prediction} Judge only whether the prediction correctly expresses no "
    "hallucination or an equivalent meaning, such as no error, description matches the image, or "
    "everything is correct. Ignore wording differences and focus on whether it clearly indicates "
    "no hallucination. Rate the prediction from 1 to 5: 5: clearly and correctly states no "
    "hallucination, or that the information is grounded and correct. 4: basically indicates no "
    "hallucination but with minor ambiguity. 2-3: unclear or ambiguous about hallucination status. "
    "1: clearly wrong, e.g., claims hallucination or provides hallucinated or incorrect "
    'information. Reply with a JSON object only: { "score": 1-5, "reason": "one short sentence" }'
)


def flat(text: str) -> str:
    """Whitespace-insensitive form: the print does not preserve line breaks."""
    return " ".join(text.split())


@pytest.fixture
def paper():
    """``paper.system``, ``paper.hallucination``, ``paper.no_hallucination``, ``paper.flat``."""
    return SimpleNamespace(
        system=PAPER_SYSTEM,
        hallucination=PAPER_HALLUCINATION,
        no_hallucination=PAPER_NO_HALLUCINATION,
        flat=flat,
    )
