"""VideoHallucer prompting: each question of a pair in its own call, with its own video."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from pathlib import Path

from gavel.benchmarks.videohallucer.data import SIDES, VideoHallucerPair
from gavel.errors import ConfigError
from gavel.prompts import PromptTexts, Template, load_template
from gavel.requests import Request

NAME = "videohallucer"

#: ``evaluation_utils.evaluate`` appends exactly this to every question (one newline).
PROMPT_SUFFIX = "\nAnswer the question using 'yes' or 'no'."
#: The official prompt, kept as a versioned template file (its hash goes into manifests).
OFFICIAL_TEMPLATE = load_template("videohallucer_v1")
#: ``own``: each question with its own video (as upstream now does). ``basic``: the bug of early
#: upstream versions, the basic question's video for both questions (for comparison only).
HALLUCINATION_VIDEOS = ("own", "basic")
#: ``official``: ``<root>/<category>/videos/<file>``; ``flat``: ``<root>/<file>``.
VIDEO_LAYOUTS = ("official", "flat")


def video_path(
    pair: VideoHallucerPair,
    side: str,
    video_root: Path,
    *,
    hallucination_video: str = "own",
    layout: str = "official",
) -> Path:
    """Where the video of one question lies under ``video_root``."""
    source = "basic" if hallucination_video == "basic" else side
    name = pair.side(source).video
    if layout == "flat":
        return Path(video_root) / name
    return Path(video_root) / str(pair.category) / "videos" / name


def build_requests(
    pairs: Iterable[VideoHallucerPair],
    video_root: Path,
    template: Template | None = None,
    *,
    hallucination_video: str = "own",
    layout: str = "official",
) -> Iterator[Request]:
    """Two requests per pair (basic, then hallucinated), each a fresh single-turn call.

    The prompt is the question verbatim (never stripped) followed by :data:`PROMPT_SUFFIX`,
    unless another ``template`` (with a ``{question}`` field) is given.
    ``hallucination_video="basic"`` reproduces early upstream versions' bug, for comparison only.
    """
    if hallucination_video not in HALLUCINATION_VIDEOS:
        raise ConfigError(f"unknown hallucination_video {hallucination_video!r}")
    if layout not in VIDEO_LAYOUTS:
        raise ConfigError(f"unknown video layout {layout!r}; choose official or flat")
    template = template or OFFICIAL_TEMPLATE
    for pair in pairs:
        for side in SIDES:
            question = pair.side(side).question
            path = video_path(
                pair, side, video_root, hallucination_video=hallucination_video, layout=layout
            )
            yield Request(
                sample_id=pair.question_id(side),
                task=NAME,
                prompt=template.render(question=question),
                images=(path,),
                fields={"question": question},
            )


@functools.cache
def declared_prompts() -> PromptTexts:
    """The official prompt (each question is filled in). (what the benchmark declares it sends, for the echo filter)."""
    return PromptTexts((OFFICIAL_TEMPLATE.text,))
