"""Photo-like PNG files for benchmarks: a real photo, resized, with a little noise per copy.

Each copy is a different file that compresses like a photo (about 450 KB at 448x512), so a
client that encodes images cannot win by meeting the same bytes twice unless the data really
repeats an image.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

PHOTO = Path(__file__).resolve().parents[1] / "examples" / "photos" / "images" / "astronaut.jpg"
#: The size of GAVEL's benchmark images in the figures (width, height).
SIZE = (448, 512)
#: Noise of +-6 levels puts a 448x512 PNG at about 450 KB.
NOISE = 6


def photo_pngs(folder: Path, count: int, size: tuple[int, int] = SIZE, seed: int = 0) -> list[Path]:
    """``count`` PNG files in ``folder`` (made once; an existing one is kept)."""
    folder.mkdir(parents=True, exist_ok=True)
    base = np.asarray(Image.open(PHOTO).convert("RGB").resize(size), dtype=np.int16)
    rng = np.random.default_rng(seed)
    paths = []
    for index in range(count):
        path = folder / f"photo-{index:05d}.png"
        noise = rng.integers(-NOISE, NOISE + 1, size=base.shape, dtype=np.int16)
        if not path.exists():
            pixels = np.clip(base + noise, 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(path, format="PNG")
        paths.append(path)
    return paths
