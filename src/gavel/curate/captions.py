"""Image-to-text candidates: a model describes each image, each sentence becomes a pair.

The model's answers go through :func:`gavel.runner.async_runner.run_async` into a replies file
(the predictions format), so captioning gets the runner's concurrency, retries, answer cache
and crash-safe resume: rerunning the command sends only the images not answered yet. The pairs
file is then rebuilt from all replies and written atomically.

A reply is keyed by the image, the prompt and the model's identity (adapter, endpoint, name and
settings, as in the answer cache's key): a rerun with another ``--prompt-file`` or ``--model``
asks afresh instead of passing off the old model's sentences as the new one's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.curate.images import list_images
from gavel.curate.pairs import IMAGE_TO_TEXT, Pair, replies_path, write_pairs
from gavel.curate.sentences import split_sentences
from gavel.io.predictions import PredictionReader
from gavel.parsing.structured import strip_think
from gavel.prompts import Template, load_template
from gavel.requests import Model, Request
from gavel.runner.async_runner import AsyncRunSummary, run_sync
from gavel.runner.cache import model_identity

TASK = "caption"
DEFAULT_TEMPLATE = "caption_v1"


@dataclass
class CaptionResult:
    """What a captioning run produced."""

    images: int
    pairs: int
    failed: int
    run: AsyncRunSummary


def request_id(relative: str, template: Template, identity: str) -> str:
    """``IMAGE#DIGEST``: the image, plus a digest of the prompt and the model's identity."""
    asked = f"{template.sha256}\0{relative}\0{identity}"
    return f"{relative}#{hashlib.sha256(asked.encode()).hexdigest()[:16]}"


def caption_requests(
    root: Path, images: list[str], template: Template, identity: str = ""
) -> Iterator[Request]:
    for relative in images:
        yield Request(
            sample_id=request_id(relative, template, identity),
            task=TASK,
            prompt=template.text,
            images=(root / relative,),
        )


def caption_images(
    root: str | Path,
    model: Model,
    out: str | Path,
    *,
    template: Template | None = None,
    replies: str | Path | None = None,
    min_words: int = 3,
    **run_options: Any,
) -> CaptionResult:
    """Caption every image under ``root`` and write one pair per sentence to ``out``."""
    root, out = Path(root), Path(out)
    template = template or load_template(DEFAULT_TEMPLATE)
    images = list_images(root)
    replies = Path(replies) if replies is not None else replies_path(out)
    identity = model_identity(model)
    summary = run_sync(
        model,
        caption_requests(root, images, template, identity),
        replies,
        total=len(images),
        **run_options,
    )
    answers = {p.id: p for p in PredictionReader(replies)}
    pairs: list[Pair] = []
    failed = 0
    for relative in images:
        answer = answers.get(request_id(relative, template, identity))
        if answer is None or answer.error is not None:
            failed += 1
            continue
        text = strip_think(answer.response or "")
        for index, sentence in enumerate(split_sentences(text, min_words=min_words)):
            pairs.append(
                Pair(
                    id=f"{relative}#{index}",
                    image=relative,
                    caption=sentence,
                    direction=IMAGE_TO_TEXT,
                    source=answer.model or model.name,
                    sentence=index,
                )
            )
    write_pairs(out, pairs)
    return CaptionResult(images=len(images), pairs=len(pairs), failed=failed, run=summary)
