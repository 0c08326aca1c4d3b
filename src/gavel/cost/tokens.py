"""Counting the text tokens of a request, with the model family's own tokenizer when one is
already on this machine.

Three sources, best first, and the counter says which one it is so a report never passes an
estimate off as a count:

- a tokenizer folder given on the command line (``--tokenizer DIR``): its ``tokenizer.json``
  loaded with ``tokenizers``, or, without one, the folder loaded by ``transformers`` with
  ``local_files_only`` (nothing is downloaded);
- ``tiktoken`` for OpenAI models, only when the model's encoding file is already in tiktoken's
  cache: ``tiktoken.get_encoding`` would otherwise fetch it from the network;
- otherwise an estimate of one token per :data:`CHARS_PER_TOKEN` characters, OpenAI's rule of
  thumb for English text ("one token is roughly 4 characters",
  help.openai.com/en/articles/4936856).

A chat request costs a few tokens more than its texts: the template's role markers. The
counter adds OpenAI's published allowance (3 tokens per message and 3 that prime the reply,
cookbook "How to count tokens with tiktoken"), which is close for other templates too.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gavel.errors import ConfigError

CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 3
REPLY_PRIMING = 3
#: Where tiktoken keeps the encodings it downloaded (its ``load.read_file_cached``).
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


@dataclass
class TokenCounter:
    """``count(text)`` in tokens; ``method`` names the tokenizer or says it is an estimate."""

    encode: Callable[[str], int]
    method: str
    exact: bool

    def count(self, text: str) -> int:
        return self.encode(text) if text else 0

    def chat(self, texts: list[str]) -> int:
        """Tokens of a chat of these messages' texts, with the template allowance."""
        return sum(self.count(t) + TOKENS_PER_MESSAGE for t in texts) + REPLY_PRIMING


def estimate_counter() -> TokenCounter:
    return TokenCounter(
        lambda text: math.ceil(len(text) / CHARS_PER_TOKEN),
        f"estimate (~{CHARS_PER_TOKEN} characters a token; give --tokenizer DIR to count)",
        exact=False,
    )


def folder_counter(folder: Path, flag: str = "--tokenizer") -> TokenCounter:
    """The tokenizer saved in ``folder``; a ConfigError naming the folder when there is none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{flag} {folder}: not a folder (give a tokenizer folder)")
    single = folder / "tokenizer.json"
    if single.is_file():
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(single))
        except Exception as error:  # the library's own error types vary by version
            raise ConfigError(f"{single}: not a tokenizer file ({error})") from None
        return TokenCounter(
            lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids),
            f"tokenizer {folder}",
            exact=True,
        )
    try:
        from transformers import AutoTokenizer

        loaded = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except ImportError:
        raise ConfigError(
            f"{flag} {folder}: no tokenizer.json there, and reading other tokenizer files needs "
            "transformers (pip install transformers)"
        ) from None
    except Exception as error:
        raise ConfigError(f"{flag} {folder}: no tokenizer could be read there ({error})") from None
    return TokenCounter(
        lambda text: len(loaded.encode(text, add_special_tokens=False)),
        f"tokenizer {folder}",
        exact=True,
    )


def tiktoken_counter(model: str) -> TokenCounter | None:
    """tiktoken's encoding of ``model`` when both tiktoken and that encoding's file are on this
    machine already; None otherwise (never a download)."""
    try:
        import tiktoken
        from tiktoken.model import encoding_name_for_model
    except ImportError:
        return None
    try:
        name = encoding_name_for_model(model.rsplit("/", 1)[-1])
    except KeyError:
        return None
    if not _tiktoken_cached(name):
        return None
    try:
        encoding = tiktoken.get_encoding(name)
    except Exception:  # a cache file that is cut short: tiktoken would fetch it again
        return None
    return TokenCounter(
        lambda text: len(encoding.encode(text, disallowed_special=())),
        f"tiktoken {name}",
        exact=True,
    )


def _tiktoken_cached(name: str) -> bool:
    """Whether tiktoken's cache has the encoding file (its own naming: the SHA-1 of the URL in
    ``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR`` or the temporary folder's data-gym-cache)."""
    folder = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if folder == "":
        return False  # caching switched off: tiktoken would download
    root = Path(folder) if folder else Path(tempfile.gettempdir()) / "data-gym-cache"
    key = hashlib.sha1(TIKTOKEN_URL.format(name=name).encode()).hexdigest()
    return (root / key).is_file()


def counter_for(model: str, folder: Path | None, flag: str = "--tokenizer") -> TokenCounter:
    """The best counter available for ``model`` without the network."""
    if folder is not None:
        return folder_counter(folder, flag)
    return tiktoken_counter(model) or estimate_counter()
