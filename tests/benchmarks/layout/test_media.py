"""A Hub cell with bytes but no file name is named by its first bytes: the loaders tell a video
from an image by the suffix, so a video named ``.bin`` would be sent as an image and fail."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from gavel.benchmarks.layout.media import Media
from gavel.media.kinds import VIDEO_SUFFIXES


def _image_bytes(image_format: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (10, 20, 30)).save(buffer, format=image_format)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("image_format", "suffix"),
    [
        ("PNG", ".png"),
        ("JPEG", ".jpg"),
        ("GIF", ".gif"),
        ("BMP", ".bmp"),
        ("WEBP", ".webp"),
        ("TIFF", ".tiff"),
    ],
)
def test_an_image_is_named_by_its_format(image_format, suffix):
    data = _image_bytes(image_format)
    assert Media(None, data).suffix() == suffix
    assert Image.open(io.BytesIO(data)).format == image_format  # the bytes are what they say


#: The first bytes of each container, as its specification lays them out.
VIDEOS = {
    "mp4": (b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00", ".mp4"),
    "QuickTime with ftyp": (b"\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00", ".mov"),
    "QuickTime opening with moov": (b"\x00\x00\x01\x00moov\x00\x00\x00\x6cmvhd", ".mov"),
    "QuickTime opening with mdat": (b"\x00\x10\x00\x00mdat\x00\x00\x00\x00\x00\x00", ".mov"),
    "AVI": (b"RIFF\x24\x10\x00\x00AVI LIST", ".avi"),
    "Matroska or WebM": (b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81", ".webm"),
    "MPEG program stream": (b"\x00\x00\x01\xba\x44\x00\x04\x00\x04\x01", ".mpg"),
    "MPEG-1 video": (b"\x00\x00\x01\xb3\x14\x00\xf0\x13\xff\xff", ".mpg"),
}


@pytest.mark.parametrize("container", VIDEOS)
def test_a_video_is_named_so_that_it_is_sent_as_a_video(container):
    head, suffix = VIDEOS[container]
    named = Media(None, head + b"\x00" * 64).suffix()
    assert named == suffix and named in VIDEO_SUFFIXES


def test_a_cell_s_own_name_wins_and_unknown_bytes_are_bin(tmp_path):
    assert Media("clip.MKV", b"\x89PNG\r\n\x1a\n").suffix() == ".MKV"
    assert Media(None, b"RIFF\x00\x00\x00\x00WAVEfmt ").suffix() == ".bin"  # audio: not ours
    assert Media(None, b"plain text").suffix() == ".bin"
    assert Media(None, b"GIF8moov" + b"\x00" * 8).suffix() == ".gif"  # a signature comes first
    source = tmp_path / "file"
    source.write_bytes(VIDEOS["AVI"][0])
    assert Media(None, source=source).suffix() == ".avi"  # a file to copy: its head is read
