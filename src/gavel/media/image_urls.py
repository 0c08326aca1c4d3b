"""Images as the ``data:`` URLs an OpenAI-style chat message carries.

Every path that sends images to a served model (an OpenAI-compatible server, a Ray Data vLLM
stage) must send the same pixels for the same input, or their answers could not be compared:
the same size limit, the same resampling, the same JPEG quality, the same rule for when a file
goes byte for byte. So they share this.

An unchanged PNG or JPEG file is sent as it is, without decoding it: its size comes from the
header, and whether it is rotated (an EXIF orientation a server may or may not apply) from its
metadata. For a PNG that is a walk over its chunk headers: Pillow's ``getexif`` would decode
the whole image to look for an ``eXIf`` chunk after the pixels, milliseconds per request.

The URL is kept as ASCII bytes with its JSON quotes (:attr:`EncodedImage.quoted`): base64 needs
no escaping, so a request body can take it as it is (``msgspec.Raw``) instead of scanning and
copying hundreds of kilobytes per request to encode it again.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Any

import msgspec
from PIL import Image

from gavel.errors import DataError, GavelError
from gavel.media.pixels import apply_pixel_limit, refusal
from gavel.regular_files import read_small

try:  # SIMD base64, about fifty times the standard library's speed on a 600 KB image
    from pybase64 import b64encode
except ImportError:  # pragma: no cover - a core dependency; the standard library as fallback
    from base64 import b64encode  # type: ignore[assignment]

#: High enough that the model sees what the image shows, not compression blocks.
JPEG_QUALITY = 95
#: The largest image file read (whole, once per run): far above any image a server takes, and
#: a bound on what one file can cost in memory.
MAX_FILE_BYTES = 256 << 20
#: How ``image_format`` may say images are sent: ``auto`` keeps unchanged PNG and JPEG files.
IMAGE_FORMATS = ("auto", "png", "jpeg")
#: The EXIF tag of the orientation (1: as stored).
ORIENTATION = 0x0112
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_MIME = {"JPEG": b"image/jpeg", "PNG": b"image/png"}


class EncodedImage:
    """One image as sent: its data URL and the size sent (width, height)."""

    __slots__ = ("quoted", "raw", "size")

    def __init__(self, quoted: bytes, size: tuple[int, int]):
        #: The data URL as a JSON string, quotes included (ASCII bytes).
        self.quoted = quoted
        #: The same bytes for a ``msgspec`` body: taken as they are, never re-encoded.
        self.raw = msgspec.Raw(quoted)
        self.size = size

    @property
    def url(self) -> str:
        """The data URL as text (for callers that build their own messages)."""
        return self.quoted[1:-1].decode("ascii")

    @property
    def nbytes(self) -> int:
        """What holding it costs, roughly (the URL is most of it)."""
        return len(self.quoted) + 200


def fit_within(size: tuple[int, int], max_side: int | None) -> tuple[int, int]:
    """``size`` scaled down (aspect kept) so its longer side is at most ``max_side``."""
    width, height = size
    if max_side is None or max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def encoded(data: bytes, image_format: str, size: tuple[int, int]) -> EncodedImage:
    """``data`` (the bytes of a ``JPEG`` or ``PNG`` file) as a base64 data URL."""
    mime = _MIME["JPEG" if image_format == "JPEG" else "PNG"]
    return EncodedImage(b'"data:' + mime + b";base64," + b64encode(data) + b'"', size)


def data_url(data: bytes, image_format: str) -> str:
    """``data`` (the bytes of a ``JPEG`` or ``PNG`` file) as a base64 ``data:`` URL."""
    return encoded(data, image_format, (0, 0)).url


def encode_image(image: Image.Image, target: tuple[int, int], jpeg: bool) -> EncodedImage:
    """``image`` resized to ``target`` and saved as JPEG (or PNG, lossless) in a data URL."""
    if jpeg or image.mode not in ("RGB", "RGBA", "L"):
        image = image.convert("RGB")
    if image.size != target:
        image = image.resize(target, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    if jpeg:
        image.save(buffer, format="JPEG", quality=JPEG_QUALITY)
    else:
        image.save(buffer, format="PNG")
    return encoded(buffer.getvalue(), "JPEG" if jpeg else "PNG", image.size)


def encode_file(path: Path, max_side: int | None, image_format: str = "auto") -> EncodedImage:
    """The image file at ``path`` as sent: byte for byte when ``image_format`` is ``auto`` and it
    is a PNG or JPEG that needs no resizing and is not rotated by its EXIF orientation;
    otherwise decoded and re-encoded (as JPEG when it came from a JPEG or ``jpeg`` is asked,
    else PNG). Errors name the file."""
    apply_pixel_limit()
    try:
        # A FIFO or a device is refused, not read forever (or until memory runs out).
        data = read_small(path, MAX_FILE_BYTES, "an image")
        image = Image.open(io.BytesIO(data))
        source = image.format
        size = image.size
        target = fit_within(size, max_side)
        if (
            image_format == "auto"
            and target == size
            and source in ("PNG", "JPEG")
            and not is_rotated(image, data)
        ):
            return encoded(data, source, size)
        image.load()
    except Image.DecompressionBombError as error:
        raise refusal(path, error) from None
    except DataError as error:
        raise GavelError(f"cannot read image {path}: {error.message}") from None
    except (OSError, SyntaxError, ValueError) as error:
        raise GavelError(f"cannot read image {path}: {error}") from None
    jpeg = image_format == "jpeg" or (image_format == "auto" and source == "JPEG")
    return encode_image(image, target, jpeg)


def encode_frame(frame: Any, max_side: int | None, image_format: str = "auto") -> EncodedImage:
    """One decoded video frame (an RGB array) as sent: JPEG unless ``png`` is asked."""
    image = Image.fromarray(frame)
    return encode_image(image, fit_within(image.size, max_side), image_format != "png")


def is_rotated(image: Image.Image, data: bytes) -> bool:
    """Whether the file's EXIF orientation asks for a rotation. Servers may or may not apply
    it, so such a file is re-encoded, which leaves the tag out: every server sees the pixels
    as stored. A PNG without an ``eXIf`` chunk has no EXIF to read, which its chunk headers
    tell without decoding the pixels."""
    if image.format == "PNG" and "exif" not in image.info and not _png_has_exif(data):
        return False
    return image.getexif().get(ORIENTATION, 1) != 1


def _png_has_exif(data: bytes) -> bool:
    """Whether a PNG file holds an ``eXIf`` chunk (a walk over the chunk headers; a file cut
    short, or with a chunk running past its end, counts as having one: Pillow then decides)."""
    if not data.startswith(_PNG_SIGNATURE):
        return True
    offset = len(_PNG_SIGNATURE)
    end = len(data)
    while offset + 8 <= end:
        length, kind = struct.unpack_from(">I4s", data, offset)
        if kind == b"eXIf":
            return True
        if kind == b"IEND":
            return False
        offset += 12 + length  # length, type, data, CRC
    return True
