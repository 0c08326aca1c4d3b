"""Images as the ``data:`` URLs an OpenAI-style chat message carries.

Every path that sends images to a served model (an OpenAI-compatible server, a Ray Data vLLM
stage) must send the same pixels for the same input, or their answers could not be compared:
the same size limit, the same resampling, the same JPEG quality. So they share this.
"""

from __future__ import annotations

import base64
import io

from PIL import Image

#: High enough that the model sees what the image shows, not compression blocks.
JPEG_QUALITY = 95


def fit_within(size: tuple[int, int], max_side: int | None) -> tuple[int, int]:
    """``size`` scaled down (aspect kept) so its longer side is at most ``max_side``."""
    width, height = size
    if max_side is None or max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def data_url(data: bytes, image_format: str) -> str:
    """``data`` (the bytes of a ``JPEG`` or ``PNG`` file) as a base64 ``data:`` URL."""
    mime = "image/jpeg" if image_format == "JPEG" else "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def encode_image(
    image: Image.Image, target: tuple[int, int], jpeg: bool
) -> tuple[str, tuple[int, int]]:
    """``image`` resized to ``target`` and saved as JPEG (or PNG, lossless) in a data URL;
    returns the URL and the size sent."""
    if jpeg or image.mode not in ("RGB", "RGBA", "L"):
        image = image.convert("RGB")
    if image.size != target:
        image = image.resize(target, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    if jpeg:
        image.save(buffer, format="JPEG", quality=JPEG_QUALITY)
    else:
        image.save(buffer, format="PNG")
    return data_url(buffer.getvalue(), "JPEG" if jpeg else "PNG"), image.size
