"""GAVEL annotations to supervised chat examples: the prompt gavel evaluates with, and the answer.

The user turn is built by the same code that builds evaluation requests
(:func:`gavel.benchmarks.gavel.prompt.build_requests`, with the ``coord-tokens`` box instruction), so
the trained model is evaluated on exactly the prompt it was trained on; a different prompt at
evaluation time is the commonest way to lose a fine-tune's gains. The assistant turn is the
response template filled with the annotation, each gold box quantized to coordinate tokens
against the original image size (the loader has already turned ``x, y, w, h`` into corners and
clipped boxes to the image).

Pure Python: nothing here needs torch; :mod:`gavel.train.masking` tokenizes the examples.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gavel.benchmarks.gavel.data import GavelLoader
from gavel.benchmarks.gavel.prompt import build_requests
from gavel.benchmarks.gavel.split import refuse_held_out
from gavel.errors import ConfigError, DataError
from gavel.prompts import Template, load_template
from gavel.records import GavelSample
from gavel.train.coords import box_tokens
from gavel.train.template import ResponseTemplate

#: The box convention the baseline is trained on and evaluated with.
BOX_FORMAT = "coord-tokens"


def prompt_template(name: str) -> Template:
    """A gavel prompt template by name, or a ConfigError (not a traceback) for a typo."""
    try:
        return load_template(name)
    except (FileNotFoundError, OSError, ValueError):
        raise ConfigError(
            f"unknown prompt template {name!r}; gavel ships gavel_v1 (the GAVEL prompt)"
        ) from None


@dataclass(frozen=True)
class ChatExample:
    """One training conversation: a single user turn (image + prompt) and the answer."""

    id: str
    image: Path
    prompt: str
    response: str

    def messages(self, *, with_answer: bool = True) -> list[dict[str, object]]:
        """The conversation in the content-parts form chat templates (and the hf adapter) use."""
        user: dict[str, object] = {
            "role": "user",
            "content": [{"type": "image"}, {"type": "text", "text": self.prompt}],
        }
        if not with_answer:
            return [user]
        answer: dict[str, object] = {
            "role": "assistant",
            "content": [{"type": "text", "text": self.response}],
        }
        return [user, answer]


def response_for(sample: GavelSample, template: ResponseTemplate) -> str:
    """The assistant text for one annotation, boxes as coordinate tokens."""
    tokens = [box_tokens(box, sample.width, sample.height) for box in sample.boxes]
    return template.render(sample.hallucinated, sample.explanation, tokens)


def build_examples(
    samples: Iterable[GavelSample],
    image_root: Path,
    template: ResponseTemplate,
    prompt: str = "gavel_v1",
) -> Iterator[ChatExample]:
    """Examples in data order; ``prompt`` is the name of a gavel prompt template."""
    samples = list(samples)
    requests = build_requests(samples, image_root, prompt_template(prompt), BOX_FORMAT)
    for sample, request in zip(samples, requests, strict=True):
        yield ChatExample(
            id=sample.id,
            image=Path(request.images[0]),
            prompt=request.prompt,
            response=response_for(sample, template),
        )


@dataclass(frozen=True)
class LoadedData:
    """Examples with the facts about their file that go into the run's settings."""

    examples: list[ChatExample]
    sha256: str
    clipped_boxes: int
    images: int


def load_examples(
    path: str | Path,
    template: ResponseTemplate,
    *,
    prompt: str = "gavel_v1",
    image_root: str | Path | None = None,
) -> LoadedData:
    """Read and validate a GAVEL file (as ``gavel data validate`` does) into examples.

    Every image must exist: a missing one is an error before training starts, not a crash an
    hour into it.
    """
    loader = GavelLoader(path, image_root)
    samples = list(loader)
    if not samples:
        raise DataError(path, None, None, "no samples in file")
    refuse_held_out(path, samples, "train on")
    for sample in samples:
        if not (loader.image_root / sample.image).is_file():
            raise DataError(
                path, None, "image", f"sample {sample.id!r}: image {sample.image!r} not found"
            )
    examples = list(build_examples(samples, loader.image_root, template, prompt))
    return LoadedData(
        examples=examples,
        sha256=loader.sha256,
        clipped_boxes=loader.report.clipped_boxes,
        images=len({sample.image for sample in samples}),
    )
