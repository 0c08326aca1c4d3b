"""Images as data URLs: the size limit, what the URL decodes to, and when a file goes as it is."""

from __future__ import annotations

import base64
import io
import json
import os
import struct
import zlib
from pathlib import Path

import msgspec
import numpy as np
import pytest
from PIL import Image

from gavel.errors import GavelError
from gavel.media import image_urls
from gavel.media.image_urls import (
    data_url,
    encode_file,
    encode_frame,
    encode_image,
    fit_within,
    is_rotated,
)


def _decoded(url: str) -> Image.Image:
    header, _, payload = url.partition(",")
    assert header in ("data:image/png;base64", "data:image/jpeg;base64")
    return Image.open(io.BytesIO(base64.b64decode(payload)))


def _pixels(height: int = 20, width: int = 30) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 255, (height, width, 3), dtype=np.uint8)


def _png(pixels: np.ndarray, orientation: int | None = None) -> bytes:
    buffer = io.BytesIO()
    image = Image.fromarray(pixels)
    if orientation is None:
        image.save(buffer, format="PNG")
    else:
        exif = Image.Exif()
        exif[0x0112] = orientation
        image.save(buffer, format="PNG", exif=exif)
    return buffer.getvalue()


def _chunks(data: bytes) -> list[bytes]:
    """A PNG's chunks, each whole (length, type, data, CRC)."""
    found, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack_from(">I", data, offset)
        found.append(data[offset : offset + 12 + length])
        offset += 12 + length
    return found


def _exif_after_pixels(data: bytes) -> bytes:
    """The same PNG with its eXIf chunk moved after the image data (the PNG extension allows
    it; Pillow then finds it only by decoding the whole image)."""
    chunks = _chunks(data)
    exif = [c for c in chunks if c[4:8] == b"eXIf"]
    rest = [c for c in chunks if c[4:8] != b"eXIf"]
    assert len(exif) == 1 and rest[-1][4:8] == b"IEND"
    return data[:8] + b"".join(rest[:-1] + exif + rest[-1:])


def test_the_longer_side_is_brought_to_the_limit_and_the_aspect_kept() -> None:
    assert fit_within((1000, 500), 400) == (400, 200)
    assert fit_within((300, 901), 300) == (100, 300)  # 300 * 300 / 901 = 99.9
    assert fit_within((3000, 1), 30) == (30, 1)  # never a side of zero
    assert fit_within((200, 100), 400) == (200, 100)
    assert fit_within((200, 100), None) == (200, 100)


def test_a_png_is_lossless_and_a_jpeg_is_sent_as_jpeg() -> None:
    pixels = _pixels()
    image = Image.fromarray(pixels)
    sent = encode_image(image, (30, 20), jpeg=False)
    assert sent.size == (30, 20)
    assert np.array_equal(np.asarray(_decoded(sent.url)), pixels)
    sent = encode_image(image.convert("RGBA"), (15, 10), jpeg=True)
    shown = _decoded(sent.url)
    assert (shown.format, shown.mode, shown.size, sent.size) == ("JPEG", "RGB", (15, 10), (15, 10))
    frame = encode_frame(pixels, 15)
    assert _decoded(frame.url).format == "JPEG" and frame.size == (15, 10)
    assert _decoded(encode_frame(pixels, None, "png").url).format == "PNG"


def test_file_bytes_are_carried_unchanged() -> None:
    assert data_url(b"\x89PNG", "PNG") == "data:image/png;base64,iVBORw=="
    assert data_url(b"\xff\xd8", "JPEG").startswith("data:image/jpeg;base64,")


def test_the_url_is_a_json_string_a_body_takes_as_it_is(tmp_path) -> None:
    path = tmp_path / "a.png"
    path.write_bytes(_png(_pixels()))
    sent = encode_file(path, None)
    assert json.loads(sent.quoted) == sent.url
    body = msgspec.json.encode({"content": [{"image_url": {"url": sent.raw}}]})
    assert json.loads(body) == {"content": [{"image_url": {"url": sent.url}}]}
    assert sent.url == "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()


def test_an_unchanged_png_or_jpeg_goes_byte_for_byte_and_others_are_encoded(tmp_path) -> None:
    pixels = _pixels(40, 60)
    png, jpeg, gif = tmp_path / "a.png", tmp_path / "b.jpg", tmp_path / "c.gif"
    png.write_bytes(_png(pixels))
    Image.fromarray(pixels).save(jpeg, quality=80)
    Image.fromarray(pixels).save(gif)
    for path in (png, jpeg):
        sent = encode_file(path, None)
        assert base64.b64decode(sent.url.partition(",")[2]) == path.read_bytes()
        assert sent.size == (60, 40)
    resized = encode_file(png, 30)
    assert (resized.size, _decoded(resized.url).size, _decoded(resized.url).format) == (
        (30, 20), (30, 20), "PNG")  # fmt: skip
    assert _decoded(encode_file(jpeg, 30).url).format == "JPEG"  # a JPEG stays a JPEG
    assert _decoded(encode_file(gif, None).url).format == "PNG"
    assert _decoded(encode_file(png, None, "jpeg").url).format == "JPEG"


def test_a_rotated_png_is_re_encoded_wherever_its_exif_chunk_stands(tmp_path) -> None:
    pixels = _pixels()
    plain, before = _png(pixels), _png(pixels, orientation=6)
    after = _exif_after_pixels(before)
    assert [c[4:8] for c in _chunks(after)][-2:] == [b"eXIf", b"IEND"]
    for data, rotated in ((plain, False), (before, True), (after, True)):
        assert is_rotated(Image.open(io.BytesIO(data)), data) is rotated
        path = tmp_path / "r.png"
        path.write_bytes(data)
        sent = base64.b64decode(encode_file(path, None).url.partition(",")[2])
        assert (sent != data) is rotated  # re-encoded: the tag left out
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(sent))), pixels)
    upright = _exif_after_pixels(_png(pixels, orientation=1))
    assert not is_rotated(Image.open(io.BytesIO(upright)), upright)


def test_a_png_cut_short_is_left_to_pillow_and_a_broken_file_is_named(tmp_path) -> None:
    data = _png(_pixels())
    cut = data[: len(data) - 20]  # no IEND: the chunk walk cannot tell, Pillow decides
    assert is_rotated(Image.open(io.BytesIO(cut)), cut) is False
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + b"\0" * 5)
    with pytest.raises(GavelError, match=r"cannot read image .*broken\.png"):
        encode_file(broken, None)
    garbage = tmp_path / "garbage.png"
    garbage.write_bytes(zlib.compress(b"not an image"))
    with pytest.raises(GavelError, match=r"garbage\.png"):
        encode_file(garbage, None)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_a_device_or_a_huge_file_is_refused_not_read(tmp_path, monkeypatch) -> None:
    # A FIFO nobody writes to would block the read forever, /dev/zero would never end it.
    pipe = tmp_path / "pipe.png"
    os.mkfifo(pipe)
    with pytest.raises(GavelError, match=r"cannot read image .*pipe\.png: is a FIFO"):
        encode_file(pipe, None)
    with pytest.raises(GavelError, match=r"cannot read image /dev/zero: is a device"):
        encode_file(Path("/dev/zero"), None)
    monkeypatch.setattr(image_urls, "MAX_FILE_BYTES", 1024)
    big = tmp_path / "big.png"
    big.write_bytes(_png(np.zeros((64, 64, 3), dtype=np.uint8)) + b"\0" * 2048)
    with pytest.raises(GavelError, match=r"big\.png: larger than 1 KiB, too large for an image"):
        encode_file(big, None)
