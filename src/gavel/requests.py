"""The model adapter protocol: one request in, one answer out.

An adapter knows nothing about benchmarks beyond the request it is given. It declares what it
can take (images, several images or frames, video) and the box convention its answers use, so
the parser never has to guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class Capabilities:
    images: bool = True
    multi_image: bool = False
    video: bool = False
    max_image_side: int | None = None
    box_format: str | None = None


@dataclass(frozen=True)
class Request:
    """What a benchmark asks of a model for one sample."""

    sample_id: str
    task: str
    prompt: str
    images: tuple[Path, ...] = ()
    #: The sample's text fields (caption, question) for models that read them directly.
    fields: dict[str, str] = field(default_factory=dict)
    #: A system message sent before the prompt (the judge's protocol has one; benchmarks don't).
    system: str | None = None
    #: Chat messages (``{"role": ..., "content": ...}``) sent after the prompt: a re-ask that
    #: shows the model its own reply and says what was wrong with it.
    followup: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True)
class Answer:
    text: str
    sent_size: tuple[int, int] | None = None
    input_size: tuple[int, int] | None = None
    usage: dict[str, int] = field(default_factory=dict)
    #: The server's reason for stopping (``stop``; ``length``: cut off by the token limit).
    finish_reason: str | None = None
    #: What the prediction's ``meta`` records of how the answer came (``{"repaired": 1}``).
    meta: dict[str, Any] | None = None


class Model(Protocol):
    name: str
    capabilities: Capabilities

    def settings(self) -> dict[str, Any]:
        """Everything about the model that changes its answers, for the manifest."""
        ...

    def answer(self, request: Request) -> Answer: ...


class BatchModel(Model, Protocol):
    """A model that answers several requests in one pass (an in-process transformers model).

    ``answer_batch`` returns one answer per request, in order; ``batch_size`` is how many it
    takes at once by default. ``request_length`` (optional) is a request's input length in
    tokens, which a runner sorts by so that a batch pads little.
    """

    batch_size: int

    def answer_batch(self, requests: Sequence[Request]) -> list[Answer]: ...


class ServedModel(Model, Protocol):
    """A model behind a server (the OpenAI-compatible adapter, or a wrapper of one): it answers
    without blocking a thread, and holds connections that ``aclose`` closes."""

    async def answer_async(self, request: Request) -> Answer: ...

    async def aclose(self) -> None: ...
