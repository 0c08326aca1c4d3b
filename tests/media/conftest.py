"""Real encoded test videos made with PyAV, and the reference every sampler is checked against:
decoding every frame in order and converting each, as gavel did before it could seek."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

av = pytest.importorskip("av", reason="writing a test video needs PyAV")
np = pytest.importorskip("numpy")


def picture(i: int, width: int, height: int) -> np.ndarray:
    """Frame ``i``: a sliding gradient and a moving square, so frames differ and are predicted
    from their neighbours (B-frames then carry real motion)."""
    y, x = np.mgrid[0:height, 0:width]
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[..., 0] = (x * 4 + i * 9) % 256
    image[..., 1] = (y * 5 + i * 3) % 256
    image[..., 2] = (x + y + i * 17) % 256
    side = max(2, min(width, height) // 4)
    left, top = (i * 3) % max(1, width - side), (i * 2) % max(1, height - side)
    image[top : top + side, left : left + side] = (255, 255, 255)
    return image


@pytest.fixture
def write_video():
    def write(
        path: Path,
        frames: int = 40,
        *,
        codec: str = "libx264",
        size: tuple[int, int] = (64, 48),
        rate: int = 8,
        pix_fmt: str = "yuv420p",
        options: dict[str, str] | None = None,
        stamps: list[int] | None = None,
        time_base: Fraction | None = None,
        rotation: int | None = None,
        format: str | None = None,
        container_options: dict[str, str] | None = None,
    ) -> Path:
        width, height = size
        with av.open(str(path), "w", format=format, options=container_options or {}) as out:
            stream = out.add_stream(codec, rate=rate, options=options or {})
            stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
            if time_base is not None:
                stream.codec_context.time_base = time_base
                stream.time_base = time_base
            if rotation is not None:
                stream.set_display_rotation(rotation)
            for i in range(frames):
                frame = av.VideoFrame.from_ndarray(picture(i, width, height), format="rgb24")
                if stamps is not None:
                    frame.pts = stamps[i]
                    frame.time_base = time_base
                for packet in stream.encode(frame):
                    out.mux(packet)
            for packet in stream.encode():
                out.mux(packet)
        return path

    return write


def decode_everything(path: Path) -> tuple[list[np.ndarray], list[float], float]:
    """Every frame as RGB, every frame's time, and the rate: the full decode gavel's frames
    must equal (an independent, deliberately naive reading)."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        images, stamps = [], []
        for frame in container.decode(stream):
            images.append(frame.to_ndarray(format="rgb24"))
            stamps.append(frame.time)
        rate = float(stream.average_rate) if stream.average_rate else 0.0
    if not rate:
        rate = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else 1.0
    return images, stamps, rate


@pytest.fixture
def full_decode():
    return decode_everything
