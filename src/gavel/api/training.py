"""Training as functions: what ``gavel train sft|preview`` do (docs/train.md).

``sft`` fine-tunes a model into the paper's supervised baseline from a :class:`TrainSettings`
(one field per flag of ``gavel train sft``, checked when built); ``preview`` shows what training
would see. Nothing heavy (torch, transformers) is imported until one of them is called, so a
program can build and check settings cheaply first.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gavel.train.settings import SCHEDULES, TrainSettings
from gavel.train.template import BUILTIN

if TYPE_CHECKING:
    from gavel.train.preview import Preview
    from gavel.train.trainer import TrainResult

__all__ = ["BUILTIN", "SCHEDULES", "TrainSettings", "preview", "sft"]


def sft(settings: TrainSettings) -> TrainResult:
    """Train (or continue training) the run in ``settings.out``; the result says how far it got
    (finished, or stopped at a checkpoint by ``stop_after``) and the losses logged."""
    from gavel.train.trainer import train

    return train(settings)


def preview(
    data: Path,
    base_model: str,
    *,
    image_root: Path | None = None,
    template: str = "json",
    prompt: str = "gavel_v1",
    max_length: int = 4096,
    max_pixels: int | None = None,
    count: int = 2,
) -> Preview:
    """The first ``count`` examples as ``gavel train sft`` would encode them: the prompt's
    tokens (no loss) and the answer's (loss), counted; each is encoded as it is read."""
    from gavel.train.preview import preview as encode_first

    return encode_first(
        data,
        base_model,
        image_root=image_root,
        template=template,
        prompt=prompt,
        max_length=max_length,
        max_pixels=max_pixels,
        count=count,
    )
