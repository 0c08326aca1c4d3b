"""Synthetic VideoHallucer sets: official layout, real videos, answers that the tracks confirm."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from gavel.benchmarks.videohallucer.data import load_dataset
from gavel.synth.videohallucer_set import generate_videohallucer

av = pytest.importorskip("av")
FPS = 8


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("vh")
    generate_videohallucer(out, 21, seed=3, difficulty="medium")
    return out


def digest(folder):
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_same_arguments_give_byte_identical_files(tmp_path):
    generate_videohallucer(tmp_path / "a", 4, seed=1, difficulty="hard")
    generate_videohallucer(tmp_path / "b", 4, seed=1, difficulty="hard")
    assert digest(tmp_path / "a") == digest(tmp_path / "b")


def test_official_layout_and_every_pair_type(folder):
    dataset = load_dataset(folder)
    assert dataset.categories == ["object_relation", "temporal", "semantic_detail"]
    types = {pair.type for pair in dataset.pairs}
    assert types == {"subject", "object", "relation", "temporal_absolute", "temporal_relative",
                     "color_change", "semantic_detail"}  # fmt: skip
    for pair in dataset.pairs:
        assert (pair.basic.answer, pair.hallucination.answer) == ("yes", "no")
        same_video = pair.basic.video == pair.hallucination.video
        assert same_video == (pair.category != "semantic_detail")
        if pair.category == "semantic_detail":
            assert pair.basic.question == pair.hallucination.question


def test_videos_are_real_h264_or_mpeg4_files_of_two_to_six_seconds(folder):
    for video in folder.glob("*/videos/*.mp4"):
        with av.open(str(video)) as container:
            frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
        assert 2 * FPS <= len(frames) <= 6 * FPS
        assert frames[0].shape == (240, 320, 3)


# --- an independent reading of each question against the track description -----------------


def visible(track, t):
    return track["start"] <= t < track["end"]


def color_at(track, t):
    return track["recolor"][1] if track["recolor"] and t >= track["recolor"][0] else track["color"]


def x_at(track, t, duration):
    share = t / duration
    return track["start_xy"][0] + share * (track["end_xy"][0] - track["start_xy"][0])


def truth(question: str, video: dict) -> bool:
    duration, tracks = video["duration"], video["tracks"]
    times = [i / FPS for i in range(round(duration * FPS))]

    def seen(color, kind):
        return [
            t
            for t in times
            for tr in tracks
            if tr["kind"] == kind and visible(tr, t) and color_at(tr, t) == color
        ]

    q = question.lower()
    if m := re.match(r"is there an? (\w+) (\w+) in the video\?", q):
        return bool(seen(*m.groups()))
    if m := re.match(r"is the (\w+) (\w+) (to the left of|to the right of) the (\w+) (\w+)\?", q):
        a = next(t for t in tracks if (t["color"], t["kind"]) == m.group(1, 2))
        b = next(t for t in tracks if (t["color"], t["kind"]) == m.group(4, 5))
        left = x_at(a, 0, duration) < x_at(b, 0, duration)
        return left == (m.group(3) == "to the left of")
    if m := re.match(r"does the (\w+) (\w+) appear at the (beginning|end) of the video\?", q):
        frames = seen(m.group(1), m.group(2))
        return (
            (min(frames) < 0.25 * duration)
            if m.group(3) == "beginning"
            else (max(frames) > 0.75 * duration)
        )
    if m := re.match(r"does the (\w+) (\w+) appear before the (\w+) (\w+)\?", q):
        return min(seen(*m.group(1, 2))) < min(seen(*m.group(3, 4)))
    if m := re.match(r"does the (\w+) change from (\w+) to (\w+)\?", q):
        kind, before, after = m.groups()
        first, second = seen(before, kind), seen(after, kind)
        return bool(first and second) and max(first) < min(second)
    raise AssertionError(f"question outside the grammar: {question}")


def test_answers_agree_with_the_tracks(folder):
    videos = {
        json.loads(line)["video"]: json.loads(line)
        for line in (folder / "videos.jsonl").read_text().splitlines()
    }
    for pair in load_dataset(folder).pairs:
        for side in (pair.basic, pair.hallucination):
            assert truth(side.question, videos[side.video]) == (side.answer == "yes"), (
                pair.id,
                side,
            )
