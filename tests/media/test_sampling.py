"""Naming a sampling from the adapters' options, and recording it."""

from __future__ import annotations

import pytest

from gavel.errors import ConfigError
from gavel.media.sampling import FrameSampling, sampling_from_options


def test_options_name_a_sampling_and_back():
    assert sampling_from_options() == FrameSampling(mode="uniform", count=8)
    assert sampling_from_options(frames=16) == FrameSampling(count=16)
    fps = sampling_from_options(fps=2, max_frames=10)
    assert fps == FrameSampling(mode="fps", fps=2.0, max_frames=10)
    assert sampling_from_options(fps=0.5).max_frames == 32
    for sampling in (FrameSampling(count=3), fps):
        assert sampling_from_options(**sampling.options()) == sampling


def test_the_record_names_only_what_the_mode_reads():
    assert FrameSampling(count=4).describe() == {"mode": "uniform", "count": 4}
    assert FrameSampling(mode="fps", fps=1.5, max_frames=9).describe() == {
        "mode": "fps", "fps": 1.5, "max_frames": 9
    }  # fmt: skip


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"frames": 8, "fps": 1.0}, "not both"),
        ({"max_frames": 4}, "give fps too"),
        ({"frames": 0}, "at least 1"),
        ({"fps": 0.0}, "positive"),
        ({"fps": 1.0, "max_frames": 0}, "at least 1"),
    ],
)
def test_contradictory_options_are_refused(options, message):
    with pytest.raises(ConfigError, match=message):
        sampling_from_options(**options)
