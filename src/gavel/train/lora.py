"""LoRA on the language model, with the grown embeddings and the LM head fully trainable.

LoRA alone cannot learn the coordinate tokens: their embedding rows and output rows are new, and
a low-rank update of the attention and MLP weights never touches them. So the input embeddings
and the LM head are ``modules_to_save`` (trained in full and saved with the adapter), which is
the paper's "input embeddings and LM head trainable" under a parameter-efficient budget. With
tied embeddings (small Qwen models) the two trained copies are kept tied.

Adapters go on the language model's attention and MLP projections only; the vision encoder is
left alone. After training the adapter is merged, so the saved model is an ordinary checkpoint
that ``hf:`` loads without peft.
"""

from __future__ import annotations

import re
from typing import Any

from gavel.errors import ConfigError

#: Linear layers of the decoder blocks that get adapters (Llama/Qwen/Mistral naming), under
#: the language model only: vision towers reuse names such as ``q_proj``.
DEFAULT_TARGETS = r".*language_model.*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)"
MODULES_TO_SAVE = ["embed_tokens", "lm_head"]


def require_peft() -> Any:
    try:
        import peft
    except ImportError as error:
        raise ConfigError(f"--lora needs peft: pip install 'gavel-eval[train]' ({error})") from None
    return peft


def apply_lora(
    model: Any,
    *,
    rank: int = 16,
    alpha: int = 32,
    dropout: float = 0.05,
    targets: str | None = None,
) -> Any:
    """The model wrapped with LoRA adapters; only adapters, embeddings and head are trainable."""
    peft = require_peft()
    pattern = targets or DEFAULT_TARGETS
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise ConfigError(f"--lora-targets is not a regular expression: {error}") from None
    matched = [name for name, _ in model.named_modules() if compiled.fullmatch(name)]
    if not matched:
        raise ConfigError(
            f"no module of this model matches the LoRA targets {pattern!r}; give "
            "--lora-targets with a regular expression over module names"
        )
    present = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    missing = [name for name in MODULES_TO_SAVE if name not in present]
    if missing:
        raise ConfigError(f"this model has no {', '.join(missing)} module to keep trainable")
    config = peft.LoraConfig(
        r=rank,
        lora_alpha=alpha,
        lora_dropout=dropout,
        target_modules=pattern,
        modules_to_save=list(MODULES_TO_SAVE),
        ensure_weight_tying=_tied(model),
        bias="none",
    )
    return peft.get_peft_model(model, config)


def _tied(model: Any) -> bool:
    """Whether the input embeddings and the LM head share one weight (small Qwen models)."""
    inputs, outputs = model.get_input_embeddings(), model.get_output_embeddings()
    return outputs is not None and inputs.weight.data_ptr() == outputs.weight.data_ptr()


def merged(model: Any) -> Any:
    """The plain transformers model with the adapters folded into its weights."""
    if hasattr(model, "merge_and_unload"):
        return model.merge_and_unload()
    return model
