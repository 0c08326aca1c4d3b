"""Images as data URLs: the size limit, and what the URL decodes to."""

from __future__ import annotations

import base64
import io

import numpy as np
from PIL import Image

from gavel.media.image_urls import data_url, encode_image, fit_within


def _decoded(url: str) -> Image.Image:
    header, _, payload = url.partition(",")
    assert header in ("data:image/png;base64", "data:image/jpeg;base64")
    return Image.open(io.BytesIO(base64.b64decode(payload)))


def test_the_longer_side_is_brought_to_the_limit_and_the_aspect_kept() -> None:
    assert fit_within((1000, 500), 400) == (400, 200)
    assert fit_within((300, 901), 300) == (100, 300)  # 300 * 300 / 901 = 99.9
    assert fit_within((3000, 1), 30) == (30, 1)  # never a side of zero
    assert fit_within((200, 100), 400) == (200, 100)
    assert fit_within((200, 100), None) == (200, 100)


def test_a_png_is_lossless_and_a_jpeg_is_sent_as_jpeg() -> None:
    pixels = np.random.default_rng(0).integers(0, 255, (20, 30, 3), dtype=np.uint8)
    image = Image.fromarray(pixels)
    url, size = encode_image(image, (30, 20), jpeg=False)
    assert size == (30, 20)
    assert np.array_equal(np.asarray(_decoded(url)), pixels)
    url, size = encode_image(image.convert("RGBA"), (15, 10), jpeg=True)
    sent = _decoded(url)
    assert (sent.format, sent.mode, sent.size, size) == ("JPEG", "RGB", (15, 10), (15, 10))


def test_file_bytes_are_carried_unchanged() -> None:
    assert data_url(b"\x89PNG", "PNG") == "data:image/png;base64,iVBORw=="
    assert data_url(b"\xff\xd8", "JPEG").startswith("data:image/jpeg;base64,")
