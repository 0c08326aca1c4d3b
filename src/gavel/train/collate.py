"""Batching encoded examples: pad the token sequences, join the vision inputs.

Sequences are padded on the right (training needs no left padding: nothing is generated), with
the pad token for ``input_ids``, ``-100`` for ``labels`` and 0 for masks and token types. Vision
inputs are joined along their first dimension, which is how every processor family batches
them: Qwen-VL's flattened patches and ``image_grid_thw`` rows, LLaVA's ``images × 3 × H × W``,
Idefics' ``batch × tiles × 3 × H × W`` (where examples with fewer tiles are padded with zero
images, which Idefics skips, and a zero ``pixel_attention_mask``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gavel.train.masking import IGNORE, Encoded


class Collator:
    """``collate_fn`` for a DataLoader over :class:`~gavel.train.masking.Encoded` items."""

    def __init__(self, pad_token_id: int):
        self.pad_token_id = pad_token_id

    def __call__(self, items: Sequence[Encoded]) -> dict[str, Any]:
        import torch

        if not items:
            raise ValueError("empty batch")
        length = max(item.features["input_ids"].shape[1] for item in items)
        batch: dict[str, Any] = {}
        for key in items[0].features:
            values = [item.features[key] for item in items]
            if _is_token_sequence(key, values, items):
                fill = {"input_ids": self.pad_token_id, "labels": IGNORE}.get(key, 0)
                rows = [
                    torch.nn.functional.pad(value, (0, length - value.shape[1]), value=fill)
                    for value in values
                ]
                batch[key] = torch.cat(rows, dim=0)
            else:
                batch[key] = join(values)
        # Not a model input: the training loop pops it to count answers cut by --max-length.
        batch["truncated"] = torch.tensor([item.truncated for item in items])
        return batch


def _is_token_sequence(key: str, values: list[Any], items: Sequence[Encoded]) -> bool:
    return key == "labels" or all(
        value.dim() == 2 and value.shape == item.features["input_ids"].shape
        and not any(part in key for part in ("pixel", "grid", "image"))
        for value, item in zip(values, items, strict=True)
    )  # fmt: skip


def join(values: list[Any]) -> Any:
    """Concatenate along dimension 0, zero-padding the other dimensions to the largest."""
    import torch

    shapes = [tuple(value.shape) for value in values]
    if len({shape[1:] for shape in shapes}) == 1:
        return torch.cat(values, dim=0)
    if len({len(shape) for shape in shapes}) != 1:
        raise ValueError(f"cannot batch tensors of different ranks: {shapes}")
    target = [max(sizes) for sizes in zip(*[shape[1:] for shape in shapes], strict=True)]
    padded = []
    for value in values:
        pad: list[int] = []
        for size, want in zip(reversed(value.shape[1:]), reversed(target), strict=True):
            pad += [0, want - size]
        padded.append(torch.nn.functional.pad(value, pad, value=0))
    return torch.cat(padded, dim=0)
