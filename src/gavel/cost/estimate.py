"""The dry run's estimate for one model's requests: how many, how many already answered, the
tokens in and out, and the cost.

Nothing is sent: the requests are built as the run builds them, the resume file and the answer
cache are read (the cache only when its file exists; it is never created), the texts counted
with :mod:`gavel.cost.tokens`, the images sized from their headers and counted with the
family's rule (:mod:`gavel.cost.image_tokens`), and videos scanned (packets only, no decoding)
for the number and size of the frames the sampling takes.

The output tokens are the one figure that cannot be known before the answers: when earlier
answers exist (the resume file, cache hits) their mean reply length is used, otherwise
``--max-tokens``, an upper bound.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gavel.cost.image_tokens import ImageRule
from gavel.cost.ledger import read_usage
from gavel.cost.prices import Price
from gavel.cost.tokens import TokenCounter
from gavel.errors import GavelError
from gavel.media.kinds import VIDEO_SUFFIXES
from gavel.media.sampling import FrameSampling
from gavel.requests import Request


@dataclass
class Estimate:
    """One model's part of a dry run (``role``: "model" or "judge")."""

    role: str
    model: str
    requests: int = 0
    resumed: int = 0
    cached: int = 0
    to_send: int = 0
    text_tokens: int = 0
    text_method: str = ""
    images: int = 0
    image_tokens: int = 0
    image_method: str = ""
    output_tokens: int = 0
    #: The expected length of one reply (what ``output_tokens`` is made of).
    output_per_request: float = 0.0
    output_method: str = ""
    price: Price | None = None
    cost: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def input_tokens(self) -> int:
        return self.text_tokens + self.image_tokens


@dataclass
class Sending:
    """How the requests go out: what counts their tokens and shapes their images."""

    counter: TokenCounter
    image_rule: ImageRule
    max_image_side: int | None = None
    sampling: FrameSampling = field(default_factory=FrameSampling)
    max_tokens: int | None = None


def estimate(role: str, model: str, requests: Iterable[Request], sending: Sending,
             resume: Path | None, cache: Path | None, identity: str,
             price: Price | None) -> Estimate:  # fmt: skip
    """Count ``requests`` against the resume file and the cache; tokens and cost of the rest."""
    result = Estimate(role, model, text_method=sending.counter.method, price=price)
    earlier = read_usage(resume)
    replies = list(earlier.reply_tokens)
    store = _open_cache(cache)
    sizes = _Sizes(sending)
    try:
        for request in requests:
            result.requests += 1
            if request.sample_id in earlier.answered:
                result.resumed += 1
                continue
            if store is not None:
                hit = store.get(store.key(identity, request))
                if hit is not None:
                    result.cached += 1
                    if "completion_tokens" in hit.usage:
                        replies.append(hit.usage["completion_tokens"])
                    continue
            result.to_send += 1
            text, images, image_tokens = sizes.tokens(request)
            result.text_tokens += text
            result.images += images
            result.image_tokens += image_tokens
    finally:
        if store is not None:
            store.close()
    result.image_method = sending.image_rule.name if result.images else "no images"
    result.notes.extend(sizes.notes)
    if sizes.unreadable > SHOWN_UNREADABLE:
        result.notes.append(
            f"not counted: {sizes.unreadable - SHOWN_UNREADABLE} more unreadable images or "
            f"videos ({sizes.unreadable} in all)"
        )
    _outputs(result, replies, sending.max_tokens)
    if price is not None:
        result.cost = price.cost(result.input_tokens, result.output_tokens)
    return result


def input_tokens(sending: Sending) -> Callable[[Request], int]:
    """The input tokens of one request as the dry run counts them (text and images): what a
    batch run's budget adds ``max_tokens`` of reply to, for each request's upper bound."""
    sizes = _Sizes(sending)

    def count(request: Request) -> int:
        text, _, images = sizes.tokens(request)
        return text + images

    return count


def _outputs(result: Estimate, replies: list[int], max_tokens: int | None) -> None:
    if replies:
        result.output_per_request = sum(replies) / len(replies)
        result.output_method = (
            f"mean of {len(replies)} earlier answers ({result.output_per_request:.1f} tokens each)"
        )
    elif max_tokens:
        result.output_per_request = float(max_tokens)
        result.output_method = f"--max-tokens {max_tokens} each (an upper bound)"
    else:
        result.output_method = "unknown: no token limit and no earlier answers"
    result.output_tokens = round(result.output_per_request * result.to_send)


def _open_cache(path: Path | None):
    """The answer cache when its file exists (a dry run never creates one)."""
    if path is None or not Path(path).is_file():
        return None
    from gavel.runner.cache import AnswerCache

    return AnswerCache(path)


#: Unreadable images or videos named one by one in the notes; the rest are counted.
SHOWN_UNREADABLE = 5


class _Sizes:
    """The sizes as sent of a request's images, and of a video's sampled frames, remembered by
    path (a video's two questions share one scan)."""

    def __init__(self, sending: Sending):
        self.sending = sending
        self.known: dict[Path, list[tuple[int, int, bool]]] = {}
        self.notes: list[str] = []
        self.unreadable = 0  # files that could not be read: named (up to a few), then counted

    def tokens(self, request: Request) -> tuple[int, int, int]:
        """``(text tokens, images and frames, their tokens)`` of one request."""
        sending = self.sending
        texts = [request.prompt] if request.system is None else [request.system, request.prompt]
        images = image_tokens = 0
        for path in request.images:
            for width, height, frame in self.of(Path(path)):
                rule = sending.image_rule
                images += 1
                image_tokens += (rule.frame if frame else rule.image)(width, height)
        return sending.counter.chat(texts), images, image_tokens

    def of(self, path: Path) -> list[tuple[int, int, bool]]:
        if path not in self.known:
            try:
                found = self._video(path) if path.suffix.lower() in VIDEO_SUFFIXES else [
                    (*self._image(path), False)
                ]  # fmt: skip
            except (OSError, GavelError) as error:
                self.unreadable += 1
                if len(self.notes) < SHOWN_UNREADABLE:
                    self.notes.append(f"not counted: {path}: {error}")
                found = []
            self.known[path] = found
        return self.known[path]

    def _fit(self, width: int, height: int) -> tuple[int, int]:
        from gavel.media.image_urls import fit_within

        return fit_within((width, height), self.sending.max_image_side)

    def _image(self, path: Path) -> tuple[int, int]:
        from PIL import Image

        from gavel.media.pixels import apply_pixel_limit, refusal

        apply_pixel_limit()
        try:
            with Image.open(path) as image:  # reads the header only
                return self._fit(*image.size)
        except Image.DecompressionBombError as error:
            raise refusal(path, error) from None

    def _video(self, path: Path) -> list[tuple[int, int, bool]]:
        import av

        from gavel.media.frames import _video_stream
        from gavel.media.sampling import choose_indices
        from gavel.media.video_index import read_index

        try:
            with av.open(str(path)) as container:
                stream = _video_stream(container, path)
                index = read_index(container, stream)
                size = self._fit(stream.codec_context.width, stream.codec_context.height)
        except av.error.FFmpegError as error:
            raise GavelError(f"cannot read video: {error}") from None
        kept = choose_indices(index.count, index.rate, self.sending.sampling)
        return [(*size, True)] * len(kept)
