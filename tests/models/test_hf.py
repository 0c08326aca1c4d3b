"""The hf adapter on tiny random-weight models built here, offline.

Every model is made from a config, with a BPE tokenizer trained in-process on a few words, and
saved to a temporary directory: nothing is downloaded. Random weights answer nonsense, so the
tests check the plumbing (chat template, images, batching, sizes, usage), not the answers.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gavel.errors import ConfigError
from gavel.requests import Request

torch = pytest.importorskip("torch", reason="the hf adapter needs torch (gavel-eval[hf])")
transformers = pytest.importorskip(
    "transformers", reason="the hf adapter needs transformers (gavel-eval[hf])"
)
tokenizers = pytest.importorskip("tokenizers", reason="the tiny test tokenizer needs tokenizers")

from gavel.models.hf import HFModel, from_spec  # noqa: E402
from gavel.train.tiny import (  # noqa: E402  (the tiny chat formats, shared with training)
    LLAVA_SPECIALS,
    LLAVA_TEMPLATE,
    QWEN_MAX_PIXELS,
    QWEN_MIN_PIXELS,
    QWEN_SPECIALS,
    QWEN_TEMPLATE,
)

WORDS = [
    "the", "a", "an", "of", "in", "on", "to", "is", "are", "what", "where", "which", "box",
    "image", "picture", "object", "person", "dog", "cat", "car", "red", "green", "blue", "left",
    "right", "top", "bottom", "answer", "question", "describe", "find", "locate", "there", "yes",
    "no", "user", "assistant", "system",
]  # fmt: skip


def _tokenizer(specials: list[str]) -> object:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    corpus = [" ".join(WORDS[i:] + WORDS[:i]) for i in range(len(WORDS))]
    tokenizer.train_from_iterator(corpus + ["0123456789 [](),.:<>"] * 5, trainer)
    return tokenizer


def _build_qwen(directory: Path) -> Path:
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    raw = _tokenizer(QWEN_SPECIALS)
    ids = {token: raw.token_to_id(token) for token in QWEN_SPECIALS}
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    config = Qwen2VLConfig(
        text_config={
            "vocab_size": raw.get_vocab_size(), "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
            "max_position_embeddings": 512,
            "rope_parameters": {"rope_type": "default", "mrope_section": [2, 3, 3],
                                "rope_theta": 10000.0},
            "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config={
            "depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2,
            "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )  # fmt: skip
    torch.manual_seed(0)
    model = Qwen2VLForConditionalGeneration(config).eval()
    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(
            min_pixels=QWEN_MIN_PIXELS, max_pixels=QWEN_MAX_PIXELS
        ),
        video_processor=Qwen2VLVideoProcessor(
            min_pixels=QWEN_MIN_PIXELS, max_pixels=QWEN_MAX_PIXELS
        ),
        tokenizer=tokenizer,
        chat_template=QWEN_TEMPLATE,
    )
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


def _build_llava(directory: Path) -> Path:
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    raw = _tokenizer(LLAVA_SPECIALS)
    ids = {token: raw.token_to_id(token) for token in LLAVA_SPECIALS}
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
            image_size=28, patch_size=14, projection_dim=32,
        ),
        text_config=LlamaConfig(
            vocab_size=raw.get_vocab_size(), hidden_size=32, intermediate_size=64,
            num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
            max_position_embeddings=256, bos_token_id=ids["<s>"], eos_token_id=ids["</s>"],
            pad_token_id=ids["<pad>"],
        ),
        image_token_id=ids["<image>"],
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )  # fmt: skip
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config).eval()
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28}
        ),
        tokenizer=tokenizer,
        patch_size=14,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        image_token="<image>",
        chat_template=LLAVA_TEMPLATE,
    )
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build_qwen(tmp_path_factory.mktemp("tiny-qwen2-vl"))


@pytest.fixture(scope="module")
def llava_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build_llava(tmp_path_factory.mktemp("tiny-llava"))


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(0)
    paths = []
    for index, (width, height) in enumerate([(100, 70), (64, 90)]):
        path = folder / f"image{index}.png"
        Image.fromarray(rng.integers(0, 255, (height, width, 3), dtype=np.uint8)).save(path)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def qwen(qwen_dir: Path) -> HFModel:
    return from_spec(
        str(qwen_dir), device="cpu", dtype="float32", max_new_tokens=6, batch_size=2,
        box_format="resized-pixel", temperature=None, base_urls=(), api_key_env=None,
    )  # fmt: skip


@pytest.fixture(scope="module")
def llava(llava_dir: Path) -> HFModel:
    return from_spec(str(llava_dir), device="cpu", dtype="float32", max_tokens=6, batch_size=2)


def _request(images: list[Path], index: int, prompt: str = "find the dog") -> Request:
    return Request(f"s{index}", "grounding", prompt, images=(images[index],))


def test_qwen_answers_with_usage_and_sizes(qwen: HFModel, images: list[Path]) -> None:
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize

    answer = qwen.answer(_request(images, 0))
    assert isinstance(answer.text, str)
    assert answer.sent_size == (100, 70)
    height, width = smart_resize(
        70, 100, factor=28, min_pixels=QWEN_MIN_PIXELS, max_pixels=QWEN_MAX_PIXELS
    )
    assert answer.input_size == (width, height)
    assert answer.input_size != answer.sent_size
    assert answer.usage["prompt_tokens"] > 10
    assert 1 <= answer.usage["completion_tokens"] <= 6
    # Fewer than the 6 tokens allowed: it stopped at its end token. Which way this random
    # model goes is not known; each is forced in the tests below.
    assert answer.finish_reason in ("stop", "length")
    if answer.usage["completion_tokens"] < 6:
        assert answer.finish_reason == "stop"
    assert answer.usage["total_tokens"] == (
        answer.usage["prompt_tokens"] + answer.usage["completion_tokens"]
    )
    assert qwen.answer(_request(images, 0)) == answer  # greedy is deterministic
    assert qwen.capabilities.multi_image and qwen.capabilities.video
    assert qwen.capabilities.box_format == "resized-pixel"
    settings = qwen.settings()
    assert settings["adapter"] == "hf-transformers"
    assert settings["max_new_tokens"] == 6 and settings["temperature"] == 0.0


def _qwen_generating(qwen_dir: Path, folder: Path, **settings) -> HFModel:
    """The tiny Qwen2-VL with generation settings of its checkpoint changed."""
    import shutil

    shutil.copytree(qwen_dir, folder)
    config = transformers.GenerationConfig.from_pretrained(folder)
    for name, value in settings.items():
        setattr(config, name, value)
    config.save_pretrained(folder)
    return from_spec(str(folder), device="cpu", dtype="float32", max_new_tokens=4)


def _end_tokens(model: HFModel) -> list[int]:
    eos = model.generation_config.eos_token_id
    return list(eos) if isinstance(eos, (list, tuple)) else [eos]


def test_an_answer_the_token_limit_cuts_off_is_marked_length(
    qwen: HFModel, qwen_dir: Path, images: list[Path], tmp_path: Path
) -> None:
    """With its end tokens suppressed the model cannot stop: all 4 tokens, cut off."""
    model = _qwen_generating(qwen_dir, tmp_path / "qwen", suppress_tokens=_end_tokens(qwen))
    answer = model.answer(_request(images, 0))
    assert answer.usage["completion_tokens"] == 4
    assert answer.finish_reason == "length"


def test_an_answer_that_ends_at_its_end_token_is_marked_stop(
    qwen: HFModel, qwen_dir: Path, images: list[Path], tmp_path: Path
) -> None:
    """With every token but one end token suppressed, the first token generated ends it."""
    end = _end_tokens(qwen)[0]
    vocabulary = qwen.model.get_output_embeddings().weight.shape[0]
    others = [token for token in range(vocabulary) if token != end]
    model = _qwen_generating(qwen_dir, tmp_path / "qwen", suppress_tokens=others)
    answer = model.answer(_request(images, 0))
    assert answer.usage["completion_tokens"] == 1
    assert answer.finish_reason == "stop"
    assert answer.text == ""  # the end token itself is not text


def test_qwen_batch_equals_single_calls(qwen: HFModel, images: list[Path]) -> None:
    requests = [
        _request(images, 0, "find the dog"),
        _request(images, 1, "where is the red car on the left of the picture"),
    ]
    single = [qwen.answer(request) for request in requests]
    assert qwen.answer_batch(requests) == single
    assert single[1].input_size is not None and single[1].sent_size == (64, 90)


def test_qwen_several_images_and_text_only(qwen: HFModel, images: list[Path]) -> None:
    both = qwen.answer(Request("m", "grounding", "compare", images=tuple(images)))
    assert both.sent_size == (100, 70)
    assert both.input_size == qwen.answer(_request(images, 0)).input_size
    text_only = qwen.answer(Request("t", "caption", "describe a dog"))
    assert isinstance(text_only.text, str)
    assert text_only.input_size is None and text_only.sent_size is None


def test_llava_answers_batch_and_no_input_size(llava: HFModel, images: list[Path]) -> None:
    requests = [_request(images, 0), _request(images, 1, "is there a cat in the image")]
    single = [llava.answer(request) for request in requests]
    assert all(isinstance(answer.text, str) for answer in single)
    assert [answer.input_size for answer in single] == [None, None]
    assert single[0].sent_size == (100, 70)
    assert single[0].usage["prompt_tokens"] > 4 and single[0].usage["completion_tokens"] >= 1
    assert llava.answer_batch(requests) == single
    assert not llava.capabilities.multi_image and not llava.capabilities.video
    with pytest.raises(Exception, match="one image"):
        llava.answer(Request("m", "grounding", "compare", images=tuple(images)))


def test_max_image_side_downscales_what_is_sent(qwen_dir: Path, images: list[Path]) -> None:
    model = HFModel(str(qwen_dir), device="cpu", max_new_tokens=2, max_image_side=50)
    answer = model.answer(_request(images, 0))
    assert answer.sent_size == (50, 35)
    assert answer.input_size is not None


def test_sampling_is_seeded(qwen_dir: Path, images: list[Path]) -> None:
    model = HFModel(str(qwen_dir), device="cpu", max_new_tokens=4, temperature=1.0, seed=3)
    assert model.answer(_request(images, 0)) == model.answer(_request(images, 0))
    assert model.settings()["seed"] == 3


def test_spec_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs a model"):
        from_spec("")
    with pytest.raises(ConfigError, match="not a directory"):
        from_spec(str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="local"):
        from_spec("nobody-gavel-test/not-a-cached-model", device="cpu")
    with pytest.raises(ConfigError, match="unknown option"):
        from_spec(str(tmp_path), colour="red")
    with pytest.raises(ConfigError, match="base_urls"):
        from_spec(str(tmp_path), base_urls=("http://x:8000/v1",))
    with pytest.raises(ConfigError, match="dtype"):
        from_spec(str(tmp_path), dtype="int3")


def test_video_frames_go_in_as_several_images(
    qwen_dir: Path, tmp_path: Path, counting_video
) -> None:
    video = counting_video(tmp_path / "clip.mp4", 8, step=20)
    model = HFModel(str(qwen_dir), device="cpu", max_new_tokens=2, frames=3)
    text, frames, sent = model._prepare(Request("v", "video", "what happens", images=(video,)))
    assert len(frames) == 3 and sent == (64, 48)
    assert text.count("<|image_pad|>") == 3
    answer = model.answer(Request("v", "video", "what happens", images=(video,)))
    assert answer.sent_size == (64, 48) and answer.input_size is not None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_bfloat16(qwen_dir: Path, images: list[Path]) -> None:
    model = HFModel(str(qwen_dir), device="cuda", dtype="bfloat16", max_new_tokens=4)
    assert model.settings()["loaded_dtype"] == "bfloat16"
    answer = model.answer(_request(images, 0))
    assert isinstance(answer.text, str) and answer.input_size is not None
    assert model.answer_batch([_request(images, 0), _request(images, 1)])[0].input_size


def test_missing_torch_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "torch", None)
    with pytest.raises(ConfigError, match=r"gavel-eval\[hf\]"):
        from_spec("some/model")


# --- batches: the same tokens as one request at a time ------------------------------------


@pytest.fixture(scope="module")
def qwen25_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gavel.train.tiny import build_qwen25_vl

    return build_qwen25_vl(tmp_path_factory.mktemp("tiny-qwen2.5-vl"))


@pytest.fixture(scope="module")
def varied_images(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Images of six sizes, so the Qwen requests carry 4 to 16 vision tokens each."""
    folder = tmp_path_factory.mktemp("varied")
    rng = np.random.default_rng(1)
    paths = []
    for index, (width, height) in enumerate(
        [(100, 70), (64, 90), (56, 56), (120, 40), (30, 30), (112, 112)]
    ):
        path = folder / f"v{index}.png"
        Image.fromarray(rng.integers(0, 255, (height, width, 3), dtype=np.uint8)).save(path)
        paths.append(path)
    return paths


PROMPTS = [
    "find the dog",
    "is there a red car on the left of the picture or a blue one on the right",
    "what",
    "describe the image and find which box is the cat",
    "yes",
    "where is the person in the picture",
]


def _varied_requests(images: list[Path], *, multi_image: bool) -> list[Request]:
    """Prompts and images of different lengths, so every batch is padded."""
    requests = [
        Request(f"v{i}", "grounding", prompt, images=(image,))
        for i, (prompt, image) in enumerate(zip(PROMPTS, images, strict=True))
    ]
    if multi_image:
        requests.append(Request("two", "grounding", "compare", images=(images[0], images[5])))
        requests.append(Request("text", "caption", "describe a dog on the left"))
    return requests


class GenerateRecorder:
    """Wraps the real ``generate`` of a model and keeps what it was given and what it made."""

    def __init__(self, generate):
        self.generate = generate
        self.calls: list[tuple[object, object]] = []

    def __call__(self, **inputs):
        output = self.generate(**inputs)
        self.calls.append((inputs["attention_mask"].clone(), output.clone()))
        return output

    def tokens(self, eos: set[int]) -> list[list[int]]:
        """Every generated row of every call, in order, cut after its end token."""
        rows = []
        for mask, output in self.calls:
            for row in output[:, mask.shape[1] :].tolist():
                end = next((i + 1 for i, token in enumerate(row) if token in eos), len(row))
                rows.append(row[:end])
        return rows


@pytest.mark.parametrize("family", ["qwen2-vl", "qwen2.5-vl", "llava"])
def test_greedy_batches_give_the_tokens_of_single_requests(
    family: str, request: pytest.FixtureRequest, varied_images: list[Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    directory = request.getfixturevalue(
        {"qwen2-vl": "qwen_dir", "qwen2.5-vl": "qwen25_dir", "llava": "llava_dir"}[family]
    )
    model = HFModel(str(directory), device="cpu", dtype="float32", max_new_tokens=10)
    requests = _varied_requests(varied_images, multi_image=model.multi_image)
    recorder = GenerateRecorder(model.model.generate)
    monkeypatch.setattr(model.model, "generate", recorder)

    single = [model.answer(r) for r in requests]
    single_tokens = recorder.tokens(model._eos)
    recorder.calls.clear()
    model.batch_size = 3  # an uneven last batch too
    batched = model.answer_batch(requests)
    batched_tokens = recorder.tokens(model._eos)

    assert len(recorder.calls) == -(-len(requests) // 3)
    # Every batch was padded (on the left) ...
    masks = [mask for mask, _ in recorder.calls if mask.shape[0] > 1]
    assert all(not mask.all() and mask[:, -1].all() for mask in masks)
    # ... the answers are not trivial (different, long), so equality says something ...
    assert len({tuple(tokens) for tokens in single_tokens}) >= len(requests) - 1
    assert sum(len(tokens) == 10 for tokens in single_tokens) >= len(requests) // 2
    # ... and each request got exactly the tokens it gets alone.
    assert batched_tokens == single_tokens
    assert batched == single


def test_default_batch_size_follows_the_device(qwen_dir: Path) -> None:
    model = HFModel(str(qwen_dir), device="cpu", max_new_tokens=1)
    assert model.batch_size == 4 and model.settings()["batch_size"] == 4
    assert HFModel(str(qwen_dir), device="cpu", batch_size=5).settings()["batch_size"] == 5
    with pytest.raises(ConfigError, match="batch_size"):
        HFModel(str(qwen_dir), device="cpu", batch_size=0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_default_batch_size_on_a_gpu(qwen_dir: Path) -> None:
    assert HFModel(str(qwen_dir), device="cuda", max_new_tokens=1).batch_size == 8


@pytest.mark.parametrize("family", ["qwen2-vl", "llava"])
def test_request_length_is_what_the_processor_makes(
    family: str, request: pytest.FixtureRequest, varied_images: list[Path]
) -> None:
    directory = request.getfixturevalue({"qwen2-vl": "qwen_dir", "llava": "llava_dir"}[family])
    for side in (None, 50):
        model = HFModel(str(directory), device="cpu", max_new_tokens=1, max_image_side=side)
        for item in _varied_requests(varied_images, multi_image=model.multi_image):
            text, images, _ = model._prepare(item)
            made = model.processor(text=[text], images=images or None, return_tensors="pt")
            assert model.request_length(item) == made["input_ids"].shape[1], item.sample_id


def test_request_length_of_a_video_and_of_an_unreadable_image(
    qwen_dir: Path, tmp_path: Path, counting_video
) -> None:
    model = HFModel(str(qwen_dir), device="cpu", max_new_tokens=1, frames=3)
    video = Request("v", "video", "what happens", images=(counting_video(tmp_path / "c.mp4", 8),))
    text, frames, _ = model._prepare(video)
    made = model.processor(text=[text], images=frames, return_tensors="pt")
    assert model.request_length(video) == made["input_ids"].shape[1]
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    # Only the sort key suffers: the text alone is counted, the error comes when answering.
    assert model.request_length(Request("b", "g", "what", images=(broken,))) == (
        model.request_length(Request("b", "g", "what"))
    )


def test_the_equality_check_sees_padding_on_the_wrong_side(
    qwen25_dir: Path, varied_images: list[Path]
) -> None:
    """Right padding puts pad tokens between a prompt and its answer: the padded requests'
    answers change, so the equality above is a real check of the padding and positions."""
    model = HFModel(str(qwen25_dir), device="cpu", dtype="float32", max_new_tokens=10)
    requests = _varied_requests(varied_images, multi_image=False)
    single = [model.answer(r) for r in requests]
    model.batch_size = 3
    model.tokenizer.padding_side = "right"
    try:
        batched = model.answer_batch(requests)
    finally:
        model.tokenizer.padding_side = "left"
    assert sum(a != b for a, b in zip(batched, single, strict=True)) >= 3


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_an_image_or_video_that_is_a_pipe_is_refused_not_waited_on(tmp_path):
    # Pillow and av would block on a FIFO nobody writes to: sorting by size skips it, and
    # reading it is a clear error naming it (the sample's model error in a run).
    from gavel.errors import GavelError
    from gavel.models.hf import _image_size, _open_image, _video_size

    pipe, clip = tmp_path / "pipe.png", tmp_path / "clip.mp4"
    os.mkfifo(pipe)
    os.mkfifo(clip)
    assert _image_size(pipe) is None and _video_size(clip) is None
    with pytest.raises(GavelError, match=r"cannot read image .*pipe\.png: is a FIFO"):
        _open_image(pipe)
    with pytest.raises(GavelError, match=r"cannot read image /dev/zero: is a device"):
        _open_image(Path("/dev/zero"))
