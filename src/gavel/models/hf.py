"""``hf:PATH``: a local Hugging Face transformers vision-language model, run in this process.

The model is loaded with ``AutoModelForImageTextToText`` and its ``AutoProcessor``, always with
``local_files_only=True``: ``PATH`` is a directory holding a saved model, or a hub-style name
(``Qwen/Qwen2.5-VL-7B-Instruct``) that is only looked up in the local Hugging Face cache. Nothing
is ever downloaded; fetch a model beforehand (``hf download NAME``).

One request is one single-turn chat built with the model's own chat template: the images (or a
video's sampled frames, as several images) first, then the prompt. Several requests can be
answered together (:meth:`HFModel.answer_batch`), padded on the left: a decoder-only model
continues from the end of its input, so padding must come first, masked out by the attention
mask (and, for Qwen2-VL's 3D rotary positions, left out of the position ids, which transformers
derives from that mask). :meth:`HFModel.request_length` counts a request's input tokens without
reading its pixels, so a runner can put requests of similar length in one batch
(:mod:`gavel.runner.batched`). ``temperature`` 0 is greedy decoding.

Sizes: ``Answer.sent_size`` is the first image's size as given to the processor (after the
optional ``max_image_side`` downscale). For processors that resize images themselves and report
the patch grid (Qwen2-VL, Qwen2.5-VL: ``image_grid_thw``), ``Answer.input_size`` is the first
image's size as the model saw it (grid × patch size), which is what the ``resized-pixel`` box
convention scales back from; for other processors it is ``None``.

torch and transformers are imported only when a model is built, so ``import gavel`` never needs
them; without them the factory raises :class:`~gavel.errors.ConfigError` naming the extra.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from gavel.errors import ConfigError, DataError, GavelError
from gavel.media.frames import sample_frames
from gavel.media.kinds import VIDEO_SUFFIXES
from gavel.media.pixels import apply_pixel_limit, refusal
from gavel.media.sampling import sampling_from_options
from gavel.regular_files import require_regular
from gavel.requests import Answer, Capabilities, Request

log = logging.getLogger(__name__)

ADAPTER = "hf-transformers"
DTYPES = ("auto", "float32", "bfloat16", "float16")
#: Model types whose chat templates and training take several images in one turn.
MULTI_IMAGE_TYPES = frozenset({
    "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "idefics2", "idefics3", "smolvlm",
    "llava_onevision", "llava_next_video", "internvl", "gemma3", "mistral3", "aya_vision",
    "kimi_vl", "glm4v", "ovis2", "phi4_multimodal", "pixtral",
})  # fmt: skip
INSTALL_HINT = "pip install 'gavel-eval[hf]'"
#: Requests per forward pass when none is given. On a GPU one request leaves most of the chip
#: idle while the weights are read for every new token, so a batch is nearly free up to memory;
#: 8 fits a 7B model's activations and caches (8 x ~2,500 tokens) beside its weights on a 24 GB
#: card. On the CPU arithmetic (the long image prefill) takes a larger share as models grow, so
#: batches gain less (bench/hf_batch.py: x1.3 at 4 and x1.9 at 16 for a 115M-parameter text
#: model, against x3.2 and x7.8 for the tiny one), while a batch's wait before its first line
#: and the work a crash loses grow with its size; 4 takes a good part of the gain for a
#: bounded wait.
DEFAULT_BATCH_SIZE = {"cuda": 8, "cpu": 4}


def _require() -> tuple[Any, Any]:
    """torch and transformers, or a ConfigError that says how to install them."""
    try:
        import torch
        import transformers
    except ImportError as error:
        raise ConfigError(
            f"the hf adapter needs torch and transformers: {INSTALL_HINT} ({error})"
        ) from None
    return torch, transformers


def _resolve_source(argument: str) -> str:
    """A local directory, or a hub-style name to look up in the local cache only."""
    if not argument:
        raise ConfigError(
            "hf needs a model: hf:/path/to/model or hf:ORG/NAME (from the local cache)"
        )
    path = Path(argument).expanduser()
    if path.is_dir():
        return str(path)
    if argument.startswith(("/", ".", "~")) or path.exists():
        raise ConfigError(f"hf: {argument!r} is not a directory holding a saved model")
    return argument


def check_settings(
    dtype: str,
    max_new_tokens: int,
    temperature: float,
    batch_size: int | None,
    max_image_side: int | None,
) -> None:
    """The checks every ``hf:`` model's settings pass, in the process that loads the model and
    in a driver that only describes it (:mod:`gavel.models.hf_plan`), so both refuse alike."""
    if dtype not in DTYPES:
        raise ConfigError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    if max_new_tokens < 1:
        raise ConfigError("max_new_tokens must be at least 1")
    if temperature < 0:
        raise ConfigError("temperature must be 0 (greedy) or more")
    if batch_size is not None and batch_size < 1:
        raise ConfigError("batch_size must be at least 1")
    if max_image_side is not None and max_image_side < 1:
        raise ConfigError("max_image_side must be a positive number of pixels")


class HFModel:
    """A transformers image-text-to-text model with its processor and chat template.

    ``device``: ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (the GPU when there is one). ``dtype``:
    ``auto`` (the checkpoint's), ``float32``, ``bfloat16`` or ``float16``. ``batch_size``: how
    many requests :meth:`answer_batch` sends through the model at once; ``None``: 8 on a GPU, 4
    on the CPU (:data:`DEFAULT_BATCH_SIZE`). ``multi_image``: whether
    the model takes several images in one turn (needed for videos); ``None`` decides from the
    model type. ``seed`` seeds torch before each sampled batch (``temperature`` > 0).
    A video is sent as its sampled frames: ``frames`` spread evenly (8 by default), or one
    every ``1 / fps`` seconds, at most ``max_frames`` (:mod:`gavel.media.sampling`).
    """

    def __init__(
        self,
        source: str,
        *,
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: int = 1024,
        temperature: float = 0.0,
        batch_size: int | None = None,
        box_format: str | None = None,
        max_image_side: int | None = None,
        frames: int | None = None,
        fps: float | None = None,
        max_frames: int | None = None,
        multi_image: bool | None = None,
        seed: int = 0,
    ):
        check_settings(dtype, max_new_tokens, temperature, batch_size, max_image_side)
        sampling = sampling_from_options(frames, fps, max_frames)
        torch, transformers = _require()
        self._torch = torch
        self.source = _resolve_source(source)
        self.name = source
        self.device = self._pick_device(device)
        self.dtype = dtype
        self.max_new_tokens = max_new_tokens
        self.temperature = float(temperature)
        self.batch_size = batch_size or DEFAULT_BATCH_SIZE[self.device.partition(":")[0]]
        self.box_format = box_format
        self.max_image_side = max_image_side
        self.sampling = sampling
        self.seed = seed
        self._lock = threading.Lock()

        torch_dtype: Any = "auto" if dtype == "auto" else getattr(torch, dtype)
        try:
            self.processor = transformers.AutoProcessor.from_pretrained(
                self.source, local_files_only=True
            )
            self.model = transformers.AutoModelForImageTextToText.from_pretrained(
                self.source, local_files_only=True, dtype=torch_dtype
            )
        except (OSError, ValueError, KeyError) as error:
            raise ConfigError(
                f"hf: cannot load {source!r} from local files ({error}); gavel never downloads "
                "models: give a directory, or fetch the model first (hf download NAME)"
            ) from None
        self.model.to(self.device)
        self.model.eval()

        self.tokenizer: Any = getattr(self.processor, "tokenizer", None)
        if self.tokenizer is None:
            raise ConfigError(f"hf: the processor of {source!r} has no tokenizer")
        template = getattr(self.processor, "chat_template", None) or getattr(
            self.tokenizer, "chat_template", None
        )
        if not template:
            raise ConfigError(f"hf: {source!r} has no chat template (needed to build prompts)")
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

        self.model_type = str(getattr(self.model.config, "model_type", ""))
        if multi_image is None:
            multi_image = self.model_type in MULTI_IMAGE_TYPES
        self.multi_image = bool(multi_image)
        self.capabilities = Capabilities(
            images=True,
            multi_image=self.multi_image,
            video=self.multi_image,
            max_image_side=max_image_side,
            box_format=box_format,
        )
        self.generation_config = self._generation_config()
        self.commit = getattr(self.model.config, "_commit_hash", None)
        # str(): torch.__version__ is a str subclass the manifest's JSON encoder rejects.
        self.versions = {
            "torch": str(torch.__version__),
            "transformers": str(transformers.__version__),
        }

    def __repr__(self) -> str:
        return f"HFModel({self.name!r}, device={self.device!r}, dtype={self.dtype!r})"

    def _pick_device(self, device: str) -> str:
        torch = self._torch
        if device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cpu" or device == "cuda" or device.startswith("cuda:"):
            if device != "cpu" and not torch.cuda.is_available():
                raise ConfigError(f"hf: device {device!r} asked for, but torch sees no GPU")
            return device
        raise ConfigError(f"device must be cpu, cuda, cuda:N or auto, not {device!r}")

    def _generation_config(self) -> Any:
        config = copy.deepcopy(self.model.generation_config)
        config.max_new_tokens = self.max_new_tokens
        config.max_length = None
        if self.temperature > 0:
            config.do_sample = True
            config.temperature = self.temperature
        else:  # greedy: drop the checkpoint's sampling settings so they neither apply nor warn
            config.do_sample = False
            config.temperature = None
            config.top_p = None
            config.top_k = None
        config.num_beams = 1
        if config.pad_token_id is None:
            config.pad_token_id = self.tokenizer.pad_token_id
        eos = config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
            config.eos_token_id = eos
        self._eos = set(eos if isinstance(eos, (list, tuple)) else [eos]) - {None}
        return config

    # --- the adapter protocol ----------------------------------------------------------------

    def settings(self) -> dict[str, Any]:
        """Everything that changes answers, for the manifest."""
        return {
            "adapter": ADAPTER,
            "model": self.name,
            "source": self.source,
            "commit": self.commit,
            "model_type": self.model_type,
            "device": self.device,
            "dtype": self.dtype,
            "loaded_dtype": str(self.model.dtype).removeprefix("torch."),
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "seed": self.seed if self.temperature > 0 else None,
            "batch_size": self.batch_size,
            "max_image_side": self.max_image_side,
            "frames": self.sampling.describe(),
            "box_format": self.box_format,
            "versions": dict(self.versions),
        }

    def answer(self, request: Request) -> Answer:
        return self.answer_batch([request])[0]

    def answer_batch(self, requests: Sequence[Request]) -> list[Answer]:
        """The answers to ``requests``, in order, ``batch_size`` at a time (left-padded).

        A request whose image cannot be read raises :class:`~gavel.errors.GavelError` before
        anything is generated.
        """
        prepared = [self._prepare(request) for request in requests]
        answers: list[Answer] = []
        for start in range(0, len(prepared), self.batch_size):
            answers.extend(self._generate(prepared[start : start + self.batch_size]))
        return answers

    def request_length(self, request: Request) -> int:
        """How many input tokens ``request`` becomes, counted without decoding its pixels.

        The chat text is tokenized with one placeholder per image, and each placeholder is
        replaced by the processor's own count for an image of that size (read from the file's
        header; for a video, its frame size from the container). This is what the processor
        would produce for the request alone, so a runner can sort by it to batch requests of
        similar length and pad little. When the processor cannot count vision tokens, each
        image counts one token, and a file that cannot be measured counts none (its error comes
        when it is answered): sorting only saves padding, it never changes an answer, so an
        estimate is enough then.
        """
        sizes: list[tuple[int, int]] = []
        for path in request.images:
            path = Path(path)
            size = _video_size(path) if path.suffix.lower() in VIDEO_SUFFIXES else _image_size(path)
            count = self._frames_per_video() if path.suffix.lower() in VIDEO_SUFFIXES else 1
            if size is not None:
                sizes.extend([self._fitted_size(size)] * count)
        content: list[dict[str, Any]] = [{"type": "image"} for _ in sizes]
        content.append({"type": "text", "text": request.prompt})
        text = self.processor.apply_chat_template(
            [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
        )
        length = len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        return length - len(sizes) + sum(self._image_tokens(sizes))

    def _frames_per_video(self) -> int:
        """Frames a video becomes: the count of a uniform sampling; for a rate, its cap (an
        upper bound, enough for sorting, and no decoding needed)."""
        if self.sampling.mode == "uniform":
            return self.sampling.count
        return self.sampling.max_frames

    def _image_tokens(self, sizes: list[tuple[int, int]]) -> list[int]:
        """The processor's vision tokens per image of these (width, height) sizes, or 1 each."""
        if not sizes:
            return []
        counter = getattr(self.processor, "_get_num_multimodal_tokens", None)
        try:
            counts = counter(image_sizes=[(height, width) for width, height in sizes])  # type: ignore[misc]
            tokens = [int(count) for count in counts["num_image_tokens"]]
        except Exception:  # no counter, or one this processor does not implement
            return [1] * len(sizes)
        return tokens if len(tokens) == len(sizes) else [1] * len(sizes)

    def close(self) -> None:
        """Free the model's memory (the object cannot answer afterwards)."""
        self.model = None
        if self._torch.cuda.is_available():
            self._torch.cuda.empty_cache()

    # --- request building --------------------------------------------------------------------

    def _prepare(self, request: Request) -> tuple[str, list[Image.Image], tuple[int, int] | None]:
        """The chat text, the images in order and the first image's size as given."""
        images: list[Image.Image] = []
        for path in request.images:
            path = Path(path)
            if path.suffix.lower() in VIDEO_SUFFIXES:
                if not self.multi_image:
                    raise GavelError(
                        f"{self.name} takes one image per turn, so it cannot take the video {path}"
                    )
                sampled = sample_frames(path, self.sampling)
                images.extend(self._fit(Image.fromarray(frame)) for frame in sampled.images)
            else:
                images.append(self._fit(_open_image(path)))
        if len(images) > 1 and not self.multi_image:
            raise GavelError(f"{self.name} takes one image per turn, not {len(images)}")
        content: list[dict[str, Any]] = [{"type": "image"} for _ in images]
        content.append({"type": "text", "text": request.prompt})
        messages = [{"role": "user", "content": content}]
        text = self.processor.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False
        )
        return text, images, images[0].size if images else None

    def _fit(self, image: Image.Image) -> Image.Image:
        if image.mode != "RGB":
            image = image.convert("RGB")
        target = self._fitted_size(image.size)
        if target == image.size:
            return image
        return image.resize(target, Image.Resampling.LANCZOS)

    def _fitted_size(self, size: tuple[int, int]) -> tuple[int, int]:
        """The size an image of ``size`` is given to the processor at (``max_image_side``)."""
        side = self.max_image_side
        if side is None or max(size) <= side:
            return size
        scale = side / max(size)
        return (max(1, round(size[0] * scale)), max(1, round(size[1] * scale)))

    # --- generation --------------------------------------------------------------------------

    def _generate(
        self, batch: list[tuple[str, list[Image.Image], tuple[int, int] | None]]
    ) -> list[Answer]:
        torch = self._torch
        if self.model is None:
            raise GavelError(f"{self.name} was closed")
        texts = [text for text, _, _ in batch]
        images = [image for _, group, _ in batch for image in group]
        inputs = self.processor(
            text=texts, images=images or None, padding=True, return_tensors="pt"
        )
        input_sizes = self._input_sizes(inputs, [len(group) for _, group, _ in batch])
        inputs = inputs.to(self.device)
        if "pixel_values" in inputs and inputs["pixel_values"].is_floating_point():
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        with self._lock, torch.inference_mode():
            if self.temperature > 0:
                torch.manual_seed(self.seed)
            try:
                output = self.model.generate(**inputs, generation_config=self.generation_config)
            except torch.OutOfMemoryError:
                # Hand the failed batch's blocks back, so the same requests in smaller batches
                # (what the batched runner tries next) find the memory free.
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                raise
        prompt_length = inputs["input_ids"].shape[1]
        generated = output[:, prompt_length:].tolist()
        prompt_tokens = inputs["attention_mask"].sum(dim=1).tolist()
        answers = []
        for row, prompt_count, (_, _, sent), input_size in zip(
            generated, prompt_tokens, batch, input_sizes, strict=True
        ):
            count = len(row)
            finish_reason = "length"  # no end-of-sequence token: max_new_tokens cut it off
            for index, token in enumerate(row):
                if token in self._eos:
                    count = index + 1
                    finish_reason = "stop"
                    break
            text = self.tokenizer.decode(row[:count], skip_special_tokens=True)
            usage = {
                "prompt_tokens": int(prompt_count),
                "completion_tokens": count,
                "total_tokens": int(prompt_count) + count,
            }
            answers.append(
                Answer(
                    text,
                    sent_size=sent,
                    input_size=input_size,
                    usage=usage,
                    finish_reason=finish_reason,
                )
            )
        return answers

    def _input_sizes(self, inputs: Any, counts: list[int]) -> list[tuple[int, int] | None]:
        """Each request's first image as the model saw it, from the processor's patch grid."""
        grid = inputs.get("image_grid_thw")
        patch = getattr(getattr(self.processor, "image_processor", None), "patch_size", None)
        if grid is None or not isinstance(patch, int):
            return [None] * len(counts)
        rows = grid.tolist()
        sizes: list[tuple[int, int] | None] = []
        first = 0
        for count in counts:
            if count:
                _, grid_h, grid_w = rows[first]
                sizes.append((int(grid_w) * patch, int(grid_h) * patch))
            else:
                sizes.append(None)
            first += count
        return sizes


def _image_size(path: Path) -> tuple[int, int] | None:
    """An image's (width, height) from its header, or None when it cannot be read."""
    try:
        require_regular(path)  # a FIFO would block Pillow's read forever
        with Image.open(path) as image:
            return image.size
    except (OSError, DataError, Image.DecompressionBombError):
        return None


def _video_size(path: Path) -> tuple[int, int] | None:
    """A video's frame (width, height) from its container, or None when it cannot be read."""
    try:
        import av

        require_regular(path)  # av would wait for a FIFO's writer
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            width, height = stream.codec_context.width, stream.codec_context.height
    except Exception:  # no PyAV, no video stream, not a container: only the sort key suffers
        return None
    return (width, height) if width and height else None


def _open_image(path: Path) -> Image.Image:
    apply_pixel_limit()
    try:
        require_regular(path)  # a FIFO would block Pillow's read forever, a device never end
        image = Image.open(path)
        image.load()
    except Image.DecompressionBombError as error:
        raise refusal(path, error) from None
    except DataError as error:
        raise GavelError(f"cannot read image {path}: {error.message}") from None
    except OSError as error:
        raise GavelError(f"cannot read image {path}: {error}") from None
    return image


#: Options ``from_spec`` accepts (the constructor's keyword arguments).
SPEC_OPTIONS = (
    "device", "dtype", "max_new_tokens", "temperature", "batch_size", "box_format",
    "max_image_side", "frames", "fps", "max_frames", "multi_image", "seed",
)  # fmt: skip
#: Command-line options of other adapters, accepted when empty (the CLI passes every flag).
_FOREIGN_OPTIONS = ("base_urls", "base_url", "api_key_env")


def from_spec(argument: str, **options: Any) -> HFModel:
    """The factory behind ``hf:PATH``: ``argument`` is a model directory or a hub-style name
    resolved only from the local cache.

    Options left as ``None`` keep their defaults, so a command line can pass every flag;
    ``max_tokens`` is accepted as another name for ``max_new_tokens``.
    """
    return HFModel(argument, **hf_options(options))


def hf_options(options: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :class:`HFModel` that ``options`` (a command line's, every
    flag passed, None for not given) make; unknown and foreign ones refused."""
    options = dict(options)
    if "max_tokens" in options:
        value = options.pop("max_tokens")
        if options.get("max_new_tokens") is None:
            options["max_new_tokens"] = value
    for name in _FOREIGN_OPTIONS:
        if name in options and options.pop(name) not in (None, (), [], ""):
            raise ConfigError(f"the hf model runs in this process and takes no {name}")
    unknown = sorted(set(options) - set(SPEC_OPTIONS))
    if unknown:
        raise ConfigError(
            f"unknown option(s) for hf: {', '.join(unknown)}; known: {', '.join(SPEC_OPTIONS)}"
        )
    return {name: value for name, value in options.items() if value is not None}
