"""A real tokenizer for the cost tests: a byte-level BPE trained here, in-process, on the texts
the tests send (judge prompts, GAVEL prompts, captions), and saved as ``tokenizer.json`` in a
folder, as a model's tokenizer folder holds it. The loopback server counts its ``usage`` with
it and gavel's dry run is given the same folder, so the two count independently with one
tokenizer: the server the chat as it renders it, gavel the texts it will send."""

from __future__ import annotations

from pathlib import Path

import pytest

from gavel.examples import example_dir
from gavel.judge.protocol import HALLUCINATION_PROMPT, NO_HALLUCINATION_PROMPT, SYSTEM_PROMPT
from gavel.prompts import load_template

SPECIAL = ["<|im_start|>", "<|im_end|>"]


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory) -> Path:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    corpus = [SYSTEM_PROMPT, HALLUCINATION_PROMPT, NO_HALLUCINATION_PROMPT,
              load_template("gavel_v1").text]  # fmt: skip
    corpus += (example_dir("photos") / "gavel.jsonl").read_text().splitlines()
    tokenizer = tokenizers.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=800,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(corpus * 3, trainer)
    folder = tmp_path_factory.mktemp("tokenizer")
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


@pytest.fixture
def counting_server(fake, tokenizer_dir):
    """A loopback server whose usage is counted with the trained tokenizer."""
    from tokenizers import Tokenizer

    with fake.FakeOpenAIServer() as running:
        running.tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
        yield running
