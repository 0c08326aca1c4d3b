"""The base model made ready for the baseline: local loading, coordinate tokens, trainable parts.

The 1,025 coordinate tokens are added as *normal* added tokens, not special ones: the hf adapter
decodes answers with ``skip_special_tokens=True`` (to drop end and padding tokens), which would
silently delete special coordinate tokens from every answer. Added tokens are matched whole
before the BPE runs, so ``<p-37>`` is always one token in training data and in answers.

The embedding matrix and the LM head grow by those rows, each new row starting at the mean of
the trained vocabulary's rows; both stay trainable, as the paper's appendix A.2 says. Freezing
the vision encoder by default is gavel's choice (the paper does not say).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gavel.errors import ConfigError
from gavel.train.coords import COORD_TOKENS

#: Parameter-name fragments of vision encoders (Qwen-VL ``visual``, LLaVA ``vision_tower``,
#: Idefics ``vision_model``), frozen unless training the vision side is asked for.
VISION_PARTS = ("visual.", "vision_tower.", "vision_model.", "vision_encoder.")
DTYPES = ("float32", "bfloat16", "float16")


def require() -> tuple[Any, Any]:
    """torch and transformers, or a ConfigError naming the extra to install."""
    try:
        import torch
        import transformers
    except ImportError as error:
        raise ConfigError(
            f"training needs torch, transformers and accelerate: pip install "
            f"'gavel-eval[train]' ({error})"
        ) from None
    return torch, transformers


def load_base(source: str, dtype: str = "float32") -> tuple[Any, Any]:
    """The processor and model of a local checkpoint; never downloads (as ``hf:``)."""
    torch, transformers = require()
    if dtype not in DTYPES:
        raise ConfigError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    path = Path(source).expanduser()
    if not path.is_dir() and source.startswith(("/", ".", "~")):
        raise ConfigError(f"--base-model {source!r} is not a directory holding a saved model")
    try:
        processor = transformers.AutoProcessor.from_pretrained(source, local_files_only=True)
        model = transformers.AutoModelForImageTextToText.from_pretrained(
            source, local_files_only=True, dtype=getattr(torch, dtype)
        )
    except (OSError, ValueError, KeyError) as error:
        raise ConfigError(
            f"cannot load {source!r} from local files ({error}); gavel never downloads "
            "models: give a directory, or fetch the model first (hf download NAME)"
        ) from None
    if getattr(processor, "tokenizer", None) is None:
        raise ConfigError(f"the processor of {source!r} has no tokenizer")
    if not (getattr(processor, "chat_template", None) or processor.tokenizer.chat_template):
        raise ConfigError(f"{source!r} has no chat template; the baseline uses the model's own")
    return processor, model


def add_coord_tokens(processor: Any, model: Any) -> int:
    """Add ``<p-512>`` … ``<p512>`` as normal tokens and grow the embeddings; returns how many
    were new (0 when the model already has them, as a trained baseline does)."""
    tokenizer = processor.tokenizer
    added = tokenizer.add_tokens(list(COORD_TOKENS), special_tokens=False)
    ids = tokenizer.convert_tokens_to_ids(list(COORD_TOKENS))
    if len(set(ids)) != len(COORD_TOKENS) or tokenizer.unk_token_id in ids:
        raise ConfigError("the tokenizer did not take the coordinate tokens as single tokens")
    special = set(tokenizer.all_special_tokens)
    if special & set(COORD_TOKENS):
        raise ConfigError(
            "this tokenizer has coordinate tokens registered as special tokens; answers decoded "
            "with skip_special_tokens would lose them"
        )
    if added:
        original = min(ids)  # the rows below the new tokens hold the trained vocabulary
        if model.get_input_embeddings().weight.shape[0] < len(tokenizer):
            model.resize_token_embeddings(len(tokenizer))
        _initialize_rows(model, ids, original)
    return added


def _initialize_rows(model: Any, ids: list[int], original: int) -> None:
    """Start every coordinate row at the mean of the trained vocabulary's rows, in the input
    embeddings and the LM head (once when tied). Models whose matrix is padded past the
    tokenizer (Qwen2.5-VL-7B: 152,064 rows for 151,665 tokens) would otherwise give the first
    coordinate tokens untrained padding rows without any resize."""
    import torch

    with torch.no_grad():
        seen: set[int] = set()
        for layer in (model.get_input_embeddings(), model.get_output_embeddings()):
            weight = getattr(layer, "weight", None)
            if weight is None or id(weight) in seen:
                continue
            seen.add(id(weight))
            mean = weight[:original].float().mean(dim=0)
            weight[ids] = mean.to(weight.dtype)


def coord_token_ids(tokenizer: Any) -> list[int]:
    return list(tokenizer.convert_tokens_to_ids(list(COORD_TOKENS)))


def set_max_pixels(processor: Any, max_pixels: int) -> None:
    """Cap the image size of a Qwen-VL-style processor (the number of vision tokens grows with
    the pixels). The cap is saved with the trained model, so evaluation sees the same images.

    transformers 5 keeps the budget in ``size`` (``shortest_edge`` = min pixels,
    ``longest_edge`` = max pixels); 4.x also had ``min_pixels``/``max_pixels`` attributes.
    """
    image_processor = getattr(processor, "image_processor", None)
    size = getattr(image_processor, "size", None)
    pixel_budget = hasattr(image_processor, "temporal_patch_size")  # the Qwen-VL family
    if image_processor is None or not pixel_budget:
        raise ConfigError(
            "--max-pixels applies to processors with a pixel budget (Qwen2-VL, Qwen2.5-VL, "
            "Qwen3-VL); this processor resizes images its own way"
        )
    minimum = _get(size, "shortest_edge") or getattr(image_processor, "min_pixels", None) or 0
    if max_pixels < minimum:
        raise ConfigError(
            f"--max-pixels {max_pixels} is below the processor's minimum of {minimum} pixels"
        )
    if size is not None and _get(size, "longest_edge") is not None:
        size["longest_edge"] = max_pixels
    if getattr(image_processor, "max_pixels", None) is not None:
        image_processor.max_pixels = max_pixels


def _get(mapping: Any, key: str) -> Any:
    try:
        return mapping[key]
    except (KeyError, TypeError, AttributeError):
        return None


def freeze_vision(model: Any) -> int:
    """Freeze the vision encoder's parameters; returns how many tensors were frozen."""
    frozen = 0
    for name, parameter in model.named_parameters():
        if any(part in name for part in VISION_PARTS):
            parameter.requires_grad_(False)
            frozen += 1
    return frozen


def count_parameters(model: Any) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    trainable = total = 0
    for parameter in model.parameters():
        total += parameter.numel()
        if parameter.requires_grad:
            trainable += parameter.numel()
    return trainable, total
