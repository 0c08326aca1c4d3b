"""Text-to-image candidates made elsewhere: images with the prompts that produced them.

Image generators run outside gavel (diffusion pipelines, hosted APIs), so this step only reads
their output: a prompts file naming each image and its prompt. A multi-sentence prompt becomes
one pair per sentence, as a caption does, unless ``whole`` keeps it in one piece.

Accepted prompts files:

- JSONL, one object per line: ``{"image": "gen/0001.png", "prompt": "...", "source": "sd-3.5"}``
  (``source`` and ``id`` optional);
- CSV or TSV with a header row naming the columns ``image`` and ``prompt`` (and optionally
  ``source``, ``id``).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gavel.benchmarks.gavel.data import safe_relative_path
from gavel.curate.images import resolve_image
from gavel.curate.pairs import MAX_CAPTION, TEXT_TO_IMAGE, Pair, write_pairs
from gavel.curate.sentences import split_sentences
from gavel.errors import DataError
from gavel.io.jsonl import parse_json
from gavel.io.reading import bounded_lines


@dataclass(frozen=True)
class PromptRow:
    line: int
    image: str
    prompt: str
    source: str | None
    id: str | None


@dataclass
class ImportResult:
    prompts: int
    pairs: int


def read_prompts(path: str | Path) -> Iterator[PromptRow]:
    """Rows of a prompts file (JSONL, CSV or TSV by extension), each checked for its fields."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, None, None, "file not found")
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        yield from _read_table(path, "\t" if suffix == ".tsv" else ",")
    else:
        yield from _read_jsonl(path)


def _read_jsonl(path: Path) -> Iterator[PromptRow]:
    with path.open("rb") as handle:
        for number, text in enumerate(bounded_lines(handle, path), start=1):
            if not text.strip():
                continue
            value = parse_json(text, path, number)  # not UTF-8, too deep, lone surrogates
            if not isinstance(value, dict):
                raise DataError(path, number, None, "expected a JSON object")
            yield _row(path, number, value)


def _read_table(path: Path, delimiter: str) -> Iterator[PromptRow]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        missing = {"image", "prompt"} - set(reader.fieldnames or [])
        if missing:
            raise DataError(path, 1, None, f"header lacks column(s) {', '.join(sorted(missing))}")
        for row in reader:
            yield _row(path, reader.line_num, row)


def _row(path: Path, number: int, value: dict) -> PromptRow:
    for name in ("image", "prompt"):
        if not isinstance(value.get(name), str) or not value[name].strip():
            raise DataError(path, number, name, "missing or empty")
    for name in ("source", "id"):
        if value.get(name) is not None and not isinstance(value[name], str):
            raise DataError(path, number, name, "must be a string")
    return PromptRow(
        number,
        value["image"],
        value["prompt"],
        value.get("source") or None,
        value.get("id") or None,
    )


def import_prompts(
    images: str | Path,
    prompts: str | Path,
    out: str | Path,
    *,
    source: str | None = None,
    whole: bool = False,
    min_words: int = 3,
) -> ImportResult:
    """Pairs from generated images and their prompts; every image must exist under ``images``."""
    pairs: list[Pair] = []
    rows = 0
    ids: set[str] = set()
    for row in read_prompts(prompts):
        rows += 1
        image, _ = safe_relative_path(row.image)
        if image is None or resolve_image(images, image) is None:
            raise DataError(
                prompts, row.line, "image", f"{row.image!r} is not an image file inside {images}"
            )
        if whole and len(row.prompt) > MAX_CAPTION:
            raise DataError(prompts, row.line, "prompt", f"longer than {MAX_CAPTION} characters")
        base = row.id or image
        if base in ids:
            raise DataError(prompts, row.line, "id", f"{base!r} appears twice")
        ids.add(base)
        sentences = (
            [" ".join(row.prompt.split())]
            if whole
            else split_sentences(row.prompt, min_words=min_words)
        )
        for index, sentence in enumerate(sentences):
            pairs.append(
                Pair(
                    id=base if whole else f"{base}#{index}",
                    image=image,
                    caption=sentence,
                    direction=TEXT_TO_IMAGE,
                    source=row.source or source,
                    sentence=None if whole else index,
                )
            )
    write_pairs(out, pairs)
    return ImportResult(prompts=rows, pairs=len(pairs))
