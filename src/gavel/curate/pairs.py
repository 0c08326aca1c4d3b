"""Candidate image–sentence pairs: the record, reading with located errors, atomic writing.

A pairs file (JSONL) is what the curation steps hand each other: ``gavel curate captions`` and
``gavel curate import`` write one, ``gavel curate score`` adds the alignment rating to each line,
and ``gavel annotate init`` imports it. ``image`` is relative to the images folder given to the
command that made the file, never absolute, so a project folder can move as a whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from gavel.benchmarks.gavel.data import safe_relative_path
from gavel.errors import DataError
from gavel.io.files import atomic_write_lines
from gavel.io.jsonl import HashingReader, decode_line

#: How a pair was made: a VLM wrote the sentence for the image, or the image was generated
#: from the text.
IMAGE_TO_TEXT = "image-to-text"
TEXT_TO_IMAGE = "text-to-image"
DIRECTIONS = (IMAGE_TO_TEXT, TEXT_TO_IMAGE)
MAX_CAPTION = 2000


class Pair(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One candidate: an image, one sentence about it, where they came from, and the rating."""

    id: str
    image: str
    caption: str
    direction: str = IMAGE_TO_TEXT
    #: The model that wrote the sentence (image-to-text) or made the image (text-to-image).
    source: str | None = None
    #: Position of the sentence in the text it was split from (0-based).
    sentence: int | None = None
    #: The alignment rating (1 = does not describe the image, 5 = every claim correct).
    alignment: float | None = None
    alignment_reason: str | None = None
    alignment_model: str | None = None
    #: Why the rating failed (the pair is kept out of ``--below`` selections).
    alignment_error: str | None = None


_DECODER = msgspec.json.Decoder(Pair)
_ENCODER = msgspec.json.Encoder()


def read_pairs(path: str | Path) -> Iterator[Pair]:
    """Validated pairs of a file; the first problem raises a :class:`DataError` with its line."""
    path = Path(path)
    seen: dict[str, int] = {}
    for number, line in HashingReader(path):
        pair = decode_line(_DECODER, path, number, line, Pair)
        yield check_pair(pair, path, number, seen)


def check_pair(pair: Pair, path: Path, number: int, seen: dict[str, int]) -> Pair:
    """Check one pair (unique id, safe relative image path, a sentence, a known direction)."""
    if not pair.id.strip():
        raise DataError(path, number, "id", "empty id")
    if pair.id in seen:
        raise DataError(
            path, number, "id", f"duplicate id {pair.id!r} (first on line {seen[pair.id]})"
        )
    seen[pair.id] = number
    image, error = safe_relative_path(pair.image)
    if error:
        raise DataError(path, number, "image", error)
    if not pair.caption.strip():
        raise DataError(path, number, "caption", "empty caption")
    if len(pair.caption) > MAX_CAPTION:
        raise DataError(path, number, "caption", f"longer than {MAX_CAPTION} characters")
    if pair.direction not in DIRECTIONS:
        raise DataError(path, number, "direction", f"expected one of {', '.join(DIRECTIONS)}")
    pair.image = image  # type: ignore[assignment]
    return pair


def write_pairs(path: str | Path, pairs: Iterable[Pair]) -> int:
    """Write all pairs at once (temporary file, then rename); returns how many."""
    lines = [_ENCODER.encode(pair) for pair in pairs]
    atomic_write_lines(path, lines)
    return len(lines)


def replies_path(out: Path) -> Path:
    """The raw answers kept beside a curate command's output (``pairs.jsonl`` ->
    ``pairs.replies.jsonl``), so a rerun asks only what was not answered."""
    return out.with_name(f"{out.stem}.replies.jsonl")
