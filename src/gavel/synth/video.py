"""Short synthetic videos: shapes that move, appear, disappear and change colour.

A video is a list of :class:`Track` s drawn frame by frame and encoded with H.264 (PyAV), so any
video reader opens it. Timing is in seconds; a track is visible in ``[start, end)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from gavel.synth.difficulty import Difficulty
from gavel.synth.render import damage
from gavel.synth.scenes import shape_polygon
from gavel.synth.vocabulary import BACKGROUND, CLOSE_COLORS, COLORS

FPS = 8
WIDTH, HEIGHT = 320, 240


@dataclass(frozen=True)
class Track:
    kind: str
    color: str
    side: float
    start_xy: tuple[float, float]
    end_xy: tuple[float, float]
    start: float
    end: float
    #: (time, colour) from which the track is drawn in another colour.
    recolor: tuple[float, str] | None = None
    close_color: bool = False

    def color_at(self, t: float) -> str:
        if self.recolor and t >= self.recolor[0]:
            return self.recolor[1]
        return self.color

    def center_at(self, t: float, duration: float) -> tuple[float, float]:
        share = t / duration if duration else 0.0
        return (
            self.start_xy[0] + share * (self.end_xy[0] - self.start_xy[0]),
            self.start_xy[1] + share * (self.end_xy[1] - self.start_xy[1]),
        )


@dataclass(frozen=True)
class Video:
    duration: float
    tracks: tuple[Track, ...]

    @property
    def frames(self) -> int:
        return round(self.duration * FPS)


def draw_frame(
    video: Video, t: float, difficulty: Difficulty, rng: np.random.Generator
) -> np.ndarray:
    scale = 1
    image = Image.new("RGB", (WIDTH * scale, HEIGHT * scale), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for track in video.tracks:
        if not track.start <= t < track.end:
            continue
        palette = CLOSE_COLORS if track.close_color else COLORS
        fill = palette[track.color_at(t)]
        cx, cy = track.center_at(t, video.duration)
        side = track.side * scale
        if track.kind == "circle":
            x, y = cx * scale, cy * scale
            draw.ellipse((x - side / 2, y - side / 2, x + side / 2, y + side / 2), fill=fill)
        else:
            draw.polygon(shape_polygon(track.kind, (cx * scale, cy * scale), side), fill=fill)
    image = image.resize((WIDTH, HEIGHT), Image.Resampling.BOX)
    return np.asarray(damage(image, difficulty, rng))


def write_video(video: Video, path: Path, difficulty: Difficulty, rng: np.random.Generator) -> None:
    """Encode as MPEG-4 Part 2 in an MP4 container: a standard codec every reader opens, fast,
    small, and single-threaded so the same video always gives the same bytes."""
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=FPS, options={"qscale": "3"})
        stream.codec_context.thread_count = 1
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        for index in range(video.frames):
            frame = av.VideoFrame.from_ndarray(
                draw_frame(video, index / FPS, difficulty, rng), format="rgb24"
            )
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
