"""A chat example to model inputs whose labels cover the assistant's answer and nothing else.

The prompt is tokenized exactly as the hf adapter tokenizes it at evaluation time: the chat
template with ``add_generation_prompt=True``, passed with the image through the processor
(which expands the image placeholder into the vision tokens). The answer is the rest of the
rendered conversation, tokenized on its own and appended, up to and including the model's
end-of-turn token, which is the token generation stops at. Tokenizing the two parts separately
(rather than the joined text) keeps the prompt's tokens identical to what the model sees when it
is asked, even where a BPE merge could have crossed the boundary.

Labels are ``-100`` (ignored by the loss) on every prompt token: the system and user turns, the
vision tokens and the assistant header; the loss is computed only on the answer, as in the
paper's appendix A.2. Chat templates that end an assistant turn without an end token (LLaVA-1.5)
get the tokenizer's end-of-sequence token appended, so the model still learns to stop.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from PIL import Image

from gavel.errors import ConfigError, DataError, GavelError
from gavel.regular_files import require_regular
from gavel.train.sft_data import ChatExample

IGNORE = -100


@dataclass
class Encoded:
    """One example as tensors (batch dimension 1), with its lengths for accounting."""

    features: dict[str, Any]
    prompt_tokens: int
    answer_tokens: int
    truncated: bool


def end_token_ids(tokenizer: Any, generation_config: Any = None) -> list[int]:
    """The ids generation stops at: the generation config's, else the tokenizer's EOS."""
    eos = getattr(generation_config, "eos_token_id", None) if generation_config else None
    if eos is None:
        eos = tokenizer.eos_token_id
    ids = [eos] if isinstance(eos, int) else list(eos or [])
    if not ids:
        raise ConfigError("the tokenizer has no end-of-sequence token, so answers cannot end")
    return ids


class ChatEncoder:
    """Turns :class:`ChatExample` records into ``input_ids``, ``labels`` and vision inputs."""

    def __init__(self, processor: Any, *, max_length: int, end_ids: Iterable[int]):
        self.processor = processor
        self.tokenizer = processor.tokenizer
        self.max_length = max_length
        self.end_ids = list(end_ids)
        if not self.end_ids:
            raise ConfigError("need at least one end-of-turn token id")

    def texts(self, example: ChatExample) -> tuple[str, str]:
        """The prompt as the model is asked (generation prompt included) and the answer text
        that follows it in the full conversation (end-of-turn markup included)."""
        apply = self.processor.apply_chat_template
        prompt = apply(
            example.messages(with_answer=False), add_generation_prompt=True, tokenize=False
        )
        full = apply(example.messages(), tokenize=False)
        if not full.startswith(prompt):
            raise ConfigError(
                "the chat template renders the assistant turn in a way that does not extend "
                "its generation prompt, so the answer tokens cannot be separated from the "
                f"prompt (prompt ends {prompt[-40:]!r}, conversation has {full[: len(prompt)][-40:]!r})"
            )
        return prompt, full[len(prompt) :]

    def answer_ids(self, answer_text: str) -> list[int]:
        """The answer's token ids, ending with the first end-of-turn token."""
        ids = self.tokenizer(answer_text, add_special_tokens=False)["input_ids"]
        for position, token in enumerate(ids):
            if token in self.end_ids:
                return ids[: position + 1]
        stripped = self.tokenizer(answer_text.rstrip(), add_special_tokens=False)["input_ids"]
        return [*stripped, self.end_ids[0]]

    def encode(self, example: ChatExample) -> Encoded:
        import torch

        prompt_text, answer_text = self.texts(example)
        image = _open_rgb(example.image)
        inputs = self.processor(text=[prompt_text], images=[image], return_tensors="pt")
        prompt_ids = inputs["input_ids"]
        n_prompt = int(prompt_ids.shape[1])
        if n_prompt >= self.max_length:
            raise GavelError(
                f"sample {example.id!r}: the prompt alone is {n_prompt} tokens (image included), "
                f"at least --max-length {self.max_length}; raise --max-length or use smaller "
                "images (--max-pixels)"
            )
        answer = self.answer_ids(answer_text)
        room = self.max_length - n_prompt
        truncated = len(answer) > room
        answer = answer[:room]
        answer_tensor = torch.tensor([answer], dtype=prompt_ids.dtype)
        features: dict[str, Any] = {}
        for key, value in inputs.items():
            if _is_sequence(key, value, n_prompt):
                fill = 1 if key == "attention_mask" else 0
                tail = answer_tensor if key == "input_ids" else torch.full_like(answer_tensor, fill)
                features[key] = torch.cat([value, tail.to(value.dtype)], dim=1)
            else:
                features[key] = value
        labels = torch.full((1, n_prompt + len(answer)), IGNORE, dtype=torch.long)
        labels[0, n_prompt:] = answer_tensor[0]
        features["labels"] = labels
        return Encoded(features, n_prompt, len(answer), truncated)


def _is_sequence(key: str, value: Any, length: int) -> bool:
    """A per-token tensor of the prompt (input ids, attention mask, token type ids, …), not a
    vision input that happens to have as many columns (``image_grid_thw`` is ``1 × 3``)."""
    if any(part in key for part in ("pixel", "grid", "image")):
        return False
    shape = getattr(value, "shape", None)
    return shape is not None and len(shape) == 2 and shape[0] == 1 and shape[1] == length


def _open_rgb(path: Any) -> Image.Image:
    """The image as the hf adapter gives it to the processor: read, converted to RGB."""
    try:
        require_regular(path)  # Pillow would block on a FIFO, or read a device without end
        image = Image.open(path)
        image.load()
    except DataError as error:
        raise GavelError(f"cannot read image {path}: {error.message}") from None
    except (OSError, Image.DecompressionBombError) as error:
        raise GavelError(f"cannot read image {path}: {error}") from None
    return image.convert("RGB") if image.mode != "RGB" else image
