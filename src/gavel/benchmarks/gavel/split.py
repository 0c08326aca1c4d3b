"""Splitting a GAVEL file into train/validation(/test) files by image (``gavel data split``).

GAVEL pairs one image with several captions; a model trained on one caption of an image and
validated on another has seen the validation image, which flatters the validation score. So
the split is over images: all lines of an image go to the same split.

Sizes are numbers of images: a fraction of them (``0.1``) or a count (``200``). Which images go
where is a seeded permutation of the sorted image paths, so the same file and seed always give
the same split, whatever the line order. Lines keep their file order and every field (unknown
ones too); only ``split`` is set. Every line is validated first (as ``gavel data validate``), so
the outputs are valid GAVEL files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
import numpy as np

from gavel.benchmarks.gavel.data import GavelLoader
from gavel.errors import ConfigError, DataError
from gavel.io.files import atomic_write_lines
from gavel.records import GavelSample

TRAIN = "train"


@dataclass(frozen=True)
class SplitPart:
    """One output: its split name, file, and what went into it."""

    name: str
    path: Path
    samples: int
    images: int


def parse_size(text: str) -> float | int:
    """``0.1`` (a fraction of the images, in (0, 1)) or ``200`` (a number of images)."""
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(
            f"a split size is a fraction (0.1) or a count (200), not {text!r}"
        ) from None
    if 0 < value < 1:
        return value
    if value >= 1 and value == int(value):
        return int(value)
    raise ConfigError(
        f"a split size is a fraction in (0, 1) or a whole number of images, not {text!r}"
    )


def image_counts(total: int, sizes: Mapping[str, float | int]) -> dict[str, int]:
    """Images per held-out split; the rest is ``train``, which must keep at least one."""
    counts: dict[str, int] = {}
    for name, size in sizes.items():
        counts[name] = max(1, round(size * total)) if isinstance(size, float) else int(size)
    held_out = sum(counts.values())
    if held_out >= total:
        raise ConfigError(
            f"the held-out splits take {held_out} of {total} images, leaving none for training"
        )
    return counts


def assign_images(images: list[str], counts: Mapping[str, int], seed: int) -> dict[str, str]:
    """image -> split name: a seeded permutation of the sorted paths, cut in order."""
    order = np.random.default_rng(seed).permutation(len(images))
    ordered = [sorted(images)[i] for i in order]
    assignment: dict[str, str] = {}
    start = 0
    for name, count in counts.items():
        for image in ordered[start : start + count]:
            assignment[image] = name
        start += count
    for image in ordered[start:]:
        assignment[image] = TRAIN
    return assignment


def refuse_held_out(path: str | Path, samples: Sequence[GavelSample], doing: str) -> None:
    """Stop when a file mixes in samples marked for another split (``test``, ``val``): training
    on them, or splitting them again, would leak held-out images into training."""
    held_out = Counter(s.split for s in samples if s.split not in (None, "train"))
    if held_out:
        marked = ", ".join(f"{n} marked split {name!r}" for name, n in sorted(held_out.items()))
        raise DataError(
            path,
            None,
            "split",
            f"{marked}: refusing to {doing} held-out samples; use the training part only "
            "(gavel data split writes STEM.train.jsonl, gavel annotate export --split-by-image "
            "writes OUT.train.jsonl)",
        )


def split_file(
    path: str | Path,
    sizes: Mapping[str, float | int],
    *,
    seed: int = 0,
    out_dir: str | Path | None = None,
    image_root: str | Path | None = None,
) -> list[SplitPart]:
    """Write ``OUT_DIR/STEM.train.jsonl`` and one file per held-out split in ``sizes``.

    ``out_dir`` defaults to the data file's folder, where the image paths stay valid.
    """
    path = Path(path)
    if TRAIN in sizes:
        raise ConfigError("train is the remainder; give the sizes of the held-out splits only")
    loader = GavelLoader(path, image_root)
    lines: list[tuple[str, bytes]] = []
    samples = []
    for number, raw in loader.lines():
        sample = loader.parse(number, raw)  # validates, and normalizes the image path
        lines.append((sample.image, raw))
        samples.append(sample)
    if not lines:
        raise DataError(path, None, None, "no samples in file")
    refuse_held_out(path, samples, "split again")
    images = sorted({image for image, _ in lines})
    assignment = assign_images(images, image_counts(len(images), sizes), seed)

    folder = Path(out_dir) if out_dir is not None else path.parent
    names = [TRAIN, *sizes]
    outputs = {name: folder / f"{path.stem}.{name}.jsonl" for name in names}
    for output in outputs.values():
        if output.resolve() == path.resolve():
            raise ConfigError(f"{output} is the input file; choose another --out-dir")
    grouped: dict[str, list[bytes]] = {name: [] for name in names}
    seen: dict[str, set[str]] = {name: set() for name in names}
    for image, raw in lines:
        name = assignment[image]
        record = msgspec.json.decode(raw)
        record["split"] = name
        grouped[name].append(msgspec.json.encode(record))
        seen[name].add(image)
    parts = []
    for name in names:
        atomic_write_lines(outputs[name], grouped[name])
        parts.append(SplitPart(name, outputs[name], len(grouped[name]), len(seen[name])))
    return parts
