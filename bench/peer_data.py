"""The two jobs of ``bench/peers.py``, made in a temporary folder.

- ``images``: GAVEL samples with 448 x 512 PNG images of about 450 KB each, made from the
  example photos (resized, plus a little Gaussian noise per image, so that they compress as
  photos do rather than as flat synthetic scenes); ``captions_per_image`` captions may share
  one image, as in the real data, where several models captioned each image.
- ``video``: ``gavel synth --benchmark videohallucer`` pairs, two questions each, every
  question asked with its video's sampled frames.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

PHOTOS = Path(__file__).resolve().parents[1] / "examples" / "photos"
IMAGE_SIZE = (448, 512)  # width, height
#: Standard deviation of the noise, in 8-bit levels: about 450 KB per PNG at this size (the
#: photos alone give 190-400 KB, their smooth areas compressing far better than real ones).
NOISE_SIGMA = 4.0


@dataclass(frozen=True)
class Job:
    """One job every harness runs: its data and what the server must receive."""

    name: str
    benchmark: str
    data: Path
    requests: int
    images_per_request: int
    about: str  # one line for the printed header


def image_job(folder: Path, samples: int, captions_per_image: int) -> Job:
    """``samples`` GAVEL samples over ``ceil(samples / captions_per_image)`` PNG images."""
    records = [json.loads(line) for line in (PHOTOS / "gavel.jsonl").read_text().splitlines()]
    by_photo: dict[str, list[dict]] = {}
    for record in records:
        by_photo.setdefault(record["image"], []).append(record)
    photos = sorted(by_photo)
    (folder / "images").mkdir(parents=True)
    count = math.ceil(samples / captions_per_image)
    sizes = [
        _noisy_png(PHOTOS / photos[k % len(photos)], folder / "images", k) for k in range(count)
    ]
    lines = []
    for index in range(samples):
        k = index // captions_per_image
        captions = by_photo[photos[k % len(photos)]]
        record = captions[(index + k // len(photos)) % len(captions)]
        lines.append(_sample(record, index, f"images/{k:05d}.png"))
    data = folder / "gavel.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    about = (
        f"{samples} GAVEL samples, {count} PNG images {IMAGE_SIZE[0]}x{IMAGE_SIZE[1]} "
        f"(mean {sum(sizes) / len(sizes) / 1000:.0f} KB; {captions_per_image} caption(s) per image)"
    )
    return Job("images", "gavel", data, samples, 1, about)


def photo_pngs(folder: Path, count: int) -> list[Path]:
    """``count`` distinct PNG images (each example photo in turn, with its own noise)."""
    photos = sorted((PHOTOS / "images").glob("*.jpg"))
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        _noisy_png(photos[k % len(photos)], folder, k)
    return [folder / f"{k:05d}.png" for k in range(count)]


def _noisy_png(photo: Path, folder: Path, index: int) -> int:
    """Image ``index``: the photo resized, with noise seeded by the index; its size in bytes."""
    with Image.open(photo) as opened:
        pixels = np.asarray(
            opened.convert("RGB").resize(IMAGE_SIZE, Image.Resampling.LANCZOS), np.float32
        )
    noise = np.random.default_rng(index).normal(0.0, NOISE_SIGMA, pixels.shape)
    noisy = np.clip(np.rint(pixels + noise), 0, 255).astype(np.uint8)
    path = folder / f"{index:05d}.png"
    Image.fromarray(noisy).save(path, format="PNG")
    return path.stat().st_size


def _sample(record: dict, index: int, image: str) -> dict:
    """An example caption moved onto a resized image: its boxes scaled with the pixels."""
    sx, sy = IMAGE_SIZE[0] / record["width"], IMAGE_SIZE[1] / record["height"]
    boxes = [[x * sx, y * sy, w * sx, h * sy] for x, y, w, h in record["boxes"]]
    width, height = IMAGE_SIZE
    return {**record, "id": f"s{index:05d}", "image": image, "boxes": boxes,
            "width": width, "height": height}  # fmt: skip


def video_job(folder: Path, questions: int, frames: int) -> Job:
    """VideoHallucer pairs from ``gavel synth`` (``ceil(questions / 2)`` pairs)."""
    pairs = math.ceil(questions / 2)
    data = folder / "videohallucer"
    done = subprocess.run(
        [sys.executable, "-m", "gavel", "synth", "--benchmark", "videohallucer",
         "--n", str(pairs), "--seed", "0", "--out", str(data)],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"gavel synth failed: {done.stderr.strip()[-2000:]}")
    videos = sum(1 for _ in data.glob("*/videos/*.mp4"))
    about = (
        f"{pairs} VideoHallucer pairs from gavel synth ({2 * pairs} questions, {videos} videos), "
        f"{frames} frames per question"
    )
    return Job("video", "videohallucer", data, 2 * pairs, frames, about)
