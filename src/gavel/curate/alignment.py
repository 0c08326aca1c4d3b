"""Rating how well each candidate sentence describes its image, to pick pairs for annotators.

The GAVEL paper sends every candidate pair to a VLM (GPT-5 mini) for an alignment score and
forwards the low-scoring ones to people: a pair the model finds well aligned is rarely a
hallucination, so annotators spend their time where errors are likely. The paper does not
publish its prompt; ours (``prompts/alignment_v1.txt``) asks for a 1–5 rating and a one-sentence
reason, and its SHA-256 is stored with every rating.

Requests go through :func:`gavel.runner.async_runner.run_async` (concurrency, retries, answer
cache, crash-safe resume). A reply is read leniently (code fences, prose around the JSON, a
score as a string or "4/5"); one without a valid rating is asked again up to
``invalid_retries`` times and then fails (:class:`gavel.runner.validating.ValidatingModel`), so
only valid ratings reach the cache. A request's id is the pair id plus a digest of the prompt,
the image path and the rating model's identity (adapter, endpoint, name and settings, as in the
answer cache's key), so a changed sentence, prompt or ``--model`` is asked afresh instead of
reusing a stale rating from the replies file, and ``alignment_model`` names the model that
actually answered.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.benchmarks.registry import echo_filter
from gavel.curate.images import resolve_image
from gavel.curate.pairs import Pair, read_pairs, replies_path, write_pairs
from gavel.errors import DataError
from gavel.io.predictions import PredictionReader
from gavel.parsing.structured import strip_think, structured_candidates
from gavel.prompts import Template, load_template
from gavel.requests import Model, Request
from gavel.runner.async_runner import AsyncRunSummary, run_sync
from gavel.runner.cache import model_identity
from gavel.runner.validating import ValidatingModel

TASK = "alignment"
DEFAULT_TEMPLATE = "alignment_v1"
LOWEST, HIGHEST = 1, 5
DEFAULT_INVALID_RETRIES = 2
MAX_REASON = 500
_KEYS = ("score", "rating", "alignment", "alignment_score")
# Not a range ("1-5", the prompt's own placeholder) and not a JSON value cut off right after
# its digit ('{"score": 1' may as well be the start of "1-5").
_SCORE_IN_PROSE = re.compile(
    r"(?:(\")|(?<!\"))(?:score|rating|alignment)\W{0,4}\s*(?:is\s*)?[:=]?\s*\**\s*"
    r"([1-5](?:\.0)?)(?:\s*/\s*5)?\b(?!\s*-\s*\d)(?(1)(?=\s*\"?\s*[,}]))",
    re.IGNORECASE,
)
_BARE = re.compile(r"^\s*\**([1-5])(?:\s*/\s*5)?\**\s*$")


@dataclass(frozen=True)
class Rating:
    score: int
    reason: str


def read_rating(text: str | None) -> Rating | None:
    """The 1–5 rating and reason in a reply, or None when it holds no valid rating."""
    if not text:
        return None
    text = echo_filter().remove(strip_think(text)).text  # copied prompt text is no rating
    for value in structured_candidates(text):
        if isinstance(value, list) and value and isinstance(value[0], dict):
            value = value[0]
        if isinstance(value, dict):
            for key in _KEYS:
                if key in value:
                    score = _as_score(value[key])
                    if score is None:
                        return None
                    reason = value.get("reason") or value.get("explanation") or ""
                    return Rating(score, str(reason).strip()[:MAX_REASON])
    match = _SCORE_IN_PROSE.search(text) or _BARE.match(text)
    if match is None:
        return None
    return Rating(int(float(match.group(2) if match.re is _SCORE_IN_PROSE else match.group(1))), "")


def _as_score(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip().split("/")[0].strip()
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, int | float) and float(value).is_integer():
        score = int(value)
        return score if LOWEST <= score <= HIGHEST else None
    return None


def validating_rater(model: Model, template: Template, invalid_retries: int) -> ValidatingModel:
    """The rating model: replies without a valid rating are asked again, then fail."""
    return ValidatingModel(
        model,
        lambda text: read_rating(text) is not None,
        invalid_retries=invalid_retries,
        extra_settings={
            "alignment_prompt": template.name,
            "alignment_prompt_sha256": template.sha256,
        },
        expected="valid rating",
    )


@dataclass
class ScoreResult:
    """What a scoring run produced."""

    pairs: int
    rated: int
    failed: int
    kept: int
    run: AsyncRunSummary


def request_for(pair: Pair, root: Path, template: Template, identity: str = "") -> Request:
    """The rating request of one pair; its id changes whenever what is asked, or whom
    (``identity``, from :func:`gavel.runner.cache.model_identity`), changes."""
    path = resolve_image(root, pair.image)
    if path is None:
        raise DataError(
            root,
            None,
            "image",
            f"{pair.image!r} (pair {pair.id!r}) is not an image file inside {root}",
        )
    prompt = template.render(caption=pair.caption)
    asked = f"{template.sha256}\0{pair.image}\0{prompt}\0{identity}"
    digest = hashlib.sha256(asked.encode()).hexdigest()
    return Request(
        sample_id=f"{pair.id}#{digest[:16]}",
        task=TASK,
        prompt=prompt,
        images=(path,),
        fields={"caption": pair.caption},
    )


def score_pairs(
    pairs_file: str | Path,
    images: str | Path,
    model: Model,
    out: str | Path,
    *,
    below: float | None = None,
    template: Template | None = None,
    replies: str | Path | None = None,
    invalid_retries: int = DEFAULT_INVALID_RETRIES,
    **run_options: Any,
) -> ScoreResult:
    """Rate every pair; write them with their rating (only those rated below ``below`` if given)."""
    images, out = Path(images), Path(out)
    template = template or load_template(DEFAULT_TEMPLATE)
    pairs = list(read_pairs(pairs_file))
    identity = model_identity(model)
    requests = [request_for(pair, images, template, identity) for pair in pairs]
    replies = Path(replies) if replies is not None else replies_path(out)
    rater = validating_rater(model, template, invalid_retries)
    summary = run_sync(rater, requests, replies, total=len(requests), **run_options)
    answers = {p.id: p for p in PredictionReader(replies)}
    scored: list[Pair] = []
    rated = failed = 0
    for pair, request in zip(pairs, requests, strict=True):
        answer = answers.get(request.sample_id)
        rating = read_rating(answer.response) if answer and answer.error is None else None
        # the model named in the reply: it is the one whose rating this is
        pair.alignment_model = (answer.model if answer else None) or model.name
        if rating is None:
            failed += 1
            pair.alignment = pair.alignment_reason = None
            pair.alignment_error = (answer.error if answer else None) or "not rated"
        else:
            rated += 1
            pair.alignment, pair.alignment_reason = float(rating.score), rating.reason
            pair.alignment_error = None
        if below is None or (pair.alignment is not None and pair.alignment < below):
            scored.append(pair)
    write_pairs(out, scored)
    return ScoreResult(pairs=len(pairs), rated=rated, failed=failed, kept=len(scored), run=summary)
