"""What training sees, shown before any training: each example's prompt as tokenized and the
tokens that carry the loss.

Why: a wrong chat template or a cut answer is invisible in a loss curve; decoded tokens, with
the prompt (no loss) and the answer (loss) apart and counted, show it at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ExamplePreview:
    """One example as the model is trained on it."""

    id: str
    prompt_tokens: int
    answer_tokens: int
    truncated: bool
    prompt_text: str
    answer_text: str


@dataclass(frozen=True)
class Preview:
    """The data's size, and its first examples, each encoded only when it is reached."""

    data: Path
    examples: int
    images: int
    shown: Iterator[ExamplePreview]


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
    """Load the data and the base model (coordinate tokens added) as ``gavel train sft`` does,
    and encode the first ``count`` examples; trains nothing.

    The encoder (Pillow) and the model loader are imported here, not with the module, so that
    the command line's help and :mod:`gavel.api.training` stay quick to import.
    """
    from gavel.train.masking import IGNORE, ChatEncoder, end_token_ids
    from gavel.train.model import add_coord_tokens, load_base, set_max_pixels
    from gavel.train.sft_data import load_examples
    from gavel.train.template import load_response_template

    loaded = load_examples(
        data, load_response_template(template), prompt=prompt, image_root=image_root
    )
    processor, model = load_base(base_model)
    if max_pixels:
        set_max_pixels(processor, max_pixels)
    add_coord_tokens(processor, model)
    tokenizer = processor.tokenizer
    encoder = ChatEncoder(
        processor,
        max_length=max_length,
        end_ids=end_token_ids(tokenizer, getattr(model, "generation_config", None)),
    )

    def shown() -> Iterator[ExamplePreview]:
        for example in loaded.examples[:count]:
            encoded = encoder.encode(example)
            ids = encoded.features["input_ids"][0].tolist()
            labels = encoded.features["labels"][0].tolist()
            pairs = list(zip(ids, labels, strict=True))
            yield ExamplePreview(
                id=example.id,
                prompt_tokens=encoded.prompt_tokens,
                answer_tokens=encoded.answer_tokens,
                truncated=encoded.truncated,
                prompt_text=shown_tokens(tokenizer, [t for t, label in pairs if label == IGNORE]),
                answer_text=shown_tokens(tokenizer, [t for t, label in pairs if label != IGNORE]),
            )

    return Preview(data, len(loaded.examples), loaded.images, shown())


def shown_tokens(tokenizer: Any, ids: list[int]) -> str:
    """Decoded tokens, with long runs of one token (image placeholders) shown as ``tok×N``."""
    parts: list[str] = []
    start = 0
    while start < len(ids):
        end = start
        while end < len(ids) and ids[end] == ids[start]:
            end += 1
        run = end - start
        if run > 3:
            parts.append(f"{tokenizer.decode([ids[start]])}×{run}")
        else:
            parts.append(tokenizer.decode(ids[start:end]))
        start = end
    return "".join(parts)
