"""Training as functions: what ``gavel train sft|preview`` do (docs/train.md).

``sft`` fine-tunes a model into the paper's supervised baseline from a :class:`TrainSettings`
(one field per flag of ``gavel train sft``, checked when built); ``preview`` (the first
examples as encoded: prompt tokens without loss, answer tokens with it) shows what training
would see. Nothing heavy (torch, transformers) is imported until one of them is called, so a
program can build and check settings cheaply first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gavel.train.preview import ExamplePreview, Preview, preview
from gavel.train.settings import BOUNDS, CHOICES, SCHEDULES, TrainSettings
from gavel.train.template import BUILTIN

if TYPE_CHECKING:
    from gavel.train.trainer import TrainResult

__all__ = [
    "BOUNDS",
    "BUILTIN",
    "CHOICES",
    "SCHEDULES",
    "ExamplePreview",
    "Preview",
    "TrainSettings",
    "preview",
    "sft",
]


def sft(settings: TrainSettings) -> TrainResult:
    """Train (or continue training) the run in ``settings.out``; the result says how far it got
    (finished, or stopped at a checkpoint by ``stop_after``) and the losses logged."""
    from gavel.train.trainer import train

    return train(settings)
