"""Tiny random-weight models and data for the training tests, built offline once per session.

Nothing is downloaded: the models come from configs (:mod:`gavel.train.tiny`) with a tokenizer
trained in-process. Fixtures that need torch skip with the reason when it is not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gavel.train.tiny import build_llava, build_qwen25_vl, tiny_dataset

#: The trained fixture: 32 samples, 20 epochs of 8 steps (640 sample passes): enough for the
#: tiny model to map the caption's colour to its quadrant, not only to learn the format.
TRAIN_EPOCHS = 20


@pytest.fixture(scope="session", autouse=True)
def _one_thread():
    """Tiny models train fastest on one thread; on a busy two-core machine the default two
    threads wait on each other and run ten times slower."""
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _need_torch() -> None:
    pytest.importorskip("torch", reason="training needs torch (pip install 'gavel-eval[train]')")
    pytest.importorskip(
        "transformers", reason="training needs transformers (pip install 'gavel-eval[train]')"
    )


@pytest.fixture(scope="session")
def qwen_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _need_torch()
    return build_qwen25_vl(tmp_path_factory.mktemp("tiny-qwen2.5-vl"))


@pytest.fixture(scope="session")
def llava_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _need_torch()
    return build_llava(tmp_path_factory.mktemp("tiny-llava"))


@pytest.fixture(scope="session")
def mixed_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """16 images, each with a true and a wrong caption (32 lines)."""
    return tiny_dataset(tmp_path_factory.mktemp("tiny-data-mixed"), 32)


@pytest.fixture(scope="session")
def boxed_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """32 images with wrong captions, each with one box: what the trained fixture learns."""
    return tiny_dataset(tmp_path_factory.mktemp("tiny-data-boxed"), 32, clean=False)


@pytest.fixture(scope="session")
def trained(tmp_path_factory: pytest.TempPathFactory, qwen_dir: Path, boxed_data: Path):
    """The tiny Qwen2.5-VL fully fine-tuned on ``boxed_data``: (settings, result)."""
    pytest.importorskip("accelerate", reason="training needs accelerate (gavel-eval[train])")
    from gavel.train.trainer import TrainSettings, train

    settings = TrainSettings(
        data=str(boxed_data),
        base_model=str(qwen_dir),
        out=str(tmp_path_factory.mktemp("trained")),
        epochs=TRAIN_EPOCHS,
        batch_size=4,
        grad_accum=1,
        lr=1e-2,
        warmup_ratio=0.0,
        save_every=50,
        progress=False,
    )
    return settings, train(settings)
