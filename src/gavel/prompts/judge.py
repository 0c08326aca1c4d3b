"""The judge's prompts of the GAVEL paper (appendix A.3), word for word.

They are kept with the other prompt texts rather than in :mod:`gavel.judge.protocol` because
every reader sets aside text copied from them (a model that parrots the rubric earns no
verdict, no box and no score), and the readers sit below the judge.
"""

from __future__ import annotations

from gavel.prompts import PromptTexts

SYSTEM_PROMPT = "You are an evaluator. Output only a valid JSON object."

HALLUCINATION_PROMPT = """Compare the following two texts:
Prediction: {prediction}
Ground truth: {ground_truth}
Consider whether the prediction agrees with the ground truth in meaning, including the hallucination conclusion and the explanation.
Rate the prediction from 1 to 5:
5: fully consistent.
4: mostly consistent with only minor differences.
3: partially consistent but missing important details.
2: weakly related or largely inconsistent.
1: irrelevant or wrong.
Reply with a JSON object only:
{{ "score": 1-5, "reason": "one short sentence" }}"""

NO_HALLUCINATION_PROMPT = """The ground truth hallucination label is: NO HALLUCINATION.
This means the prediction should clearly indicate that there is no hallucination and that the information is grounded or correct.
Prediction: {prediction}
Judge only whether the prediction correctly expresses no hallucination or an equivalent meaning, such as no error, description matches the image, or everything is correct.
Ignore wording differences and focus on whether it clearly indicates no hallucination.
Rate the prediction from 1 to 5:
5: clearly and correctly states no hallucination, or that the information is grounded and correct.
4: basically indicates no hallucination but with minor ambiguity.
2-3: unclear or ambiguous about hallucination status.
1: clearly wrong, e.g., claims hallucination or provides hallucinated or incorrect information.
Reply with a JSON object only:
{{ "score": 1-5, "reason": "one short sentence" }}"""


#: The judge's prompts as sent: two templates and the system message.
JUDGE_PROMPTS = PromptTexts((HALLUCINATION_PROMPT, NO_HALLUCINATION_PROMPT), (SYSTEM_PROMPT,))
