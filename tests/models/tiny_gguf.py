"""A tiny random-weight LLaVA-style model in GGUF, written here with the ``gguf`` package: a
2-layer Llama text model with a character-level SentencePiece vocabulary (byte fallback), and a
2-layer CLIP vision tower with LLaVA's two-layer MLP projector (``--mmproj``), for
``llama-server`` in the tests. Nothing is downloaded. Its answers mean nothing.

Tensors are written in PyTorch's (out, in) layout, which GGUF stores reversed, as llama.cpp's
own converter does. Greedy decoding never picks a control or byte token (their output rows are
zero while the others are random), so every answer is printable ASCII.

Not collected by pytest (the name does not start with ``test_``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: Text model sizes (the projector's output is the text model's embedding).
EMBED, LAYERS, HEADS, FFN, CONTEXT = 64, 2, 4, 128, 16384
#: Vision tower sizes: 32 x 32 images in 8 x 8 patches, 16 patches (and a class token).
V_EMBED, V_LAYERS, V_HEADS, V_FFN, IMAGE, PATCH = 32, 2, 2, 48, 32, 8
#: A ChatML template (strings only: llama-server passes multimodal content with its markers).
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _vocabulary():
    import gguf

    kinds = gguf.TokenType
    tokens = [("<unk>", kinds.UNKNOWN), ("<s>", kinds.CONTROL), ("</s>", kinds.CONTROL)]
    tokens += [(f"<0x{byte:02X}>", kinds.BYTE) for byte in range(256)]
    tokens += [("\u2581", kinds.NORMAL)]  # SentencePiece's space
    tokens += [(chr(code), kinds.NORMAL) for code in range(33, 127)]
    return tokens


def write_text_model(path: Path, seed: int = 0) -> Path:
    """The Llama text model (``-m``)."""
    import gguf

    rng = np.random.default_rng(seed)
    vocab = _vocabulary()
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("gavel-tiny-llava")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(EMBED // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list([text for text, _ in vocab])
    writer.add_token_scores([0.0 if kind != gguf.TokenType.NORMAL else -1.0 for _, kind in vocab])
    writer.add_token_types([int(kind) for _, kind in vocab])
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_chat_template(CHAT_TEMPLATE)

    def weight(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    writer.add_tensor("token_embd.weight", weight(len(vocab), EMBED))
    for layer in range(LAYERS):
        block = f"blk.{layer}"
        writer.add_tensor(f"{block}.attn_norm.weight", np.ones(EMBED, np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{block}.{name}.weight", weight(EMBED, EMBED))
        writer.add_tensor(f"{block}.ffn_norm.weight", np.ones(EMBED, np.float32))
        writer.add_tensor(f"{block}.ffn_gate.weight", weight(FFN, EMBED))
        writer.add_tensor(f"{block}.ffn_up.weight", weight(FFN, EMBED))
        writer.add_tensor(f"{block}.ffn_down.weight", weight(EMBED, FFN))
    writer.add_tensor("output_norm.weight", np.ones(EMBED, np.float32))
    output = weight(len(vocab), EMBED)
    printable = np.array([kind == gguf.TokenType.NORMAL for _, kind in vocab])
    output[~printable] = 0.0  # greedy decoding then only ever picks printable characters
    writer.add_tensor("output.weight", output)
    _finish(writer)
    return path


def write_projector(path: Path, seed: int = 1) -> Path:
    """The CLIP vision tower with LLaVA's MLP projector (``--mmproj``)."""
    import gguf

    rng = np.random.default_rng(seed)
    writer = gguf.GGUFWriter(str(path), "clip")
    writer.add_name("gavel-tiny-llava-mmproj")
    writer.add_string("clip.projector_type", "mlp")
    writer.add_bool("clip.has_vision_encoder", True)
    writer.add_bool("clip.has_text_encoder", False)
    writer.add_bool("clip.use_gelu", True)
    writer.add_uint32("clip.vision.image_size", IMAGE)
    writer.add_uint32("clip.vision.patch_size", PATCH)
    writer.add_uint32("clip.vision.embedding_length", V_EMBED)
    writer.add_uint32("clip.vision.feed_forward_length", V_FFN)
    writer.add_uint32("clip.vision.block_count", V_LAYERS)
    writer.add_uint32("clip.vision.attention.head_count", V_HEADS)
    writer.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-5)
    writer.add_uint32("clip.vision.projection_dim", EMBED)
    writer.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    writer.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    writer.add_uint32("general.file_type", int(gguf.LlamaFileType.ALL_F32))

    def weight(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    def zeros(size: int) -> np.ndarray:
        return np.zeros(size, np.float32)

    patches = (IMAGE // PATCH) ** 2
    writer.add_tensor("v.patch_embd.weight", weight(V_EMBED, 3, PATCH, PATCH))
    writer.add_tensor("v.class_embd", weight(V_EMBED))
    writer.add_tensor("v.position_embd.weight", weight(patches + 1, V_EMBED))
    writer.add_tensor("v.pre_ln.weight", np.ones(V_EMBED, np.float32))
    writer.add_tensor("v.pre_ln.bias", zeros(V_EMBED))
    for layer in range(V_LAYERS):
        block = f"v.blk.{layer}"
        for name in ("attn_q", "attn_k", "attn_v", "attn_out"):
            writer.add_tensor(f"{block}.{name}.weight", weight(V_EMBED, V_EMBED))
            writer.add_tensor(f"{block}.{name}.bias", zeros(V_EMBED))
        for name in ("ln1", "ln2"):
            writer.add_tensor(f"{block}.{name}.weight", np.ones(V_EMBED, np.float32))
            writer.add_tensor(f"{block}.{name}.bias", zeros(V_EMBED))
        writer.add_tensor(f"{block}.ffn_up.weight", weight(V_FFN, V_EMBED))
        writer.add_tensor(f"{block}.ffn_up.bias", zeros(V_FFN))
        writer.add_tensor(f"{block}.ffn_down.weight", weight(V_EMBED, V_FFN))
        writer.add_tensor(f"{block}.ffn_down.bias", zeros(V_EMBED))
    writer.add_tensor("mm.0.weight", weight(EMBED, V_EMBED))
    writer.add_tensor("mm.0.bias", zeros(EMBED))
    writer.add_tensor("mm.2.weight", weight(EMBED, EMBED))
    writer.add_tensor("mm.2.bias", zeros(EMBED))
    _finish(writer)
    return path


def _finish(writer) -> None:
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
