"""Naming a sampling from the adapters' options, and recording it."""

from __future__ import annotations

import pytest

from gavel.errors import ConfigError, GavelError
from gavel.media.sampling import FrameSampling, choose_indices, sampling_from_options


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


@pytest.mark.parametrize("rate", [60.0, 1e7, 1e300])
def test_a_rate_above_the_videos_own_keeps_every_frame(rate):
    """Asking for more frames a second than the video has keeps each frame once (then thins
    them to ``max_frames``), at once however large the rate."""
    every = FrameSampling(mode="fps", fps=rate, max_frames=32)
    assert choose_indices(10, 30.0, every) == list(range(10))
    capped = FrameSampling(mode="fps", fps=rate, max_frames=4)
    assert choose_indices(100, 30.0, capped) == [12, 37, 62, 87]


def test_ordinary_rates_choose_the_same_frames():
    """Worked by hand: at 30 frames a second, 2 a second is every 15th frame, 7 every 30/7th
    (rounded)."""
    assert choose_indices(61, 30.0, FrameSampling(mode="fps", fps=2.0)) == [0, 15, 30, 45, 60]
    assert choose_indices(10, 30.0, FrameSampling(mode="fps", fps=7.0)) == [0, 4, 9]


@pytest.mark.parametrize("rate", [float("nan"), float("inf"), float("-inf")])
def test_a_rate_that_is_not_a_finite_number_is_refused(rate):
    with pytest.raises(GavelError, match="finite"):
        FrameSampling(mode="fps", fps=rate)
    with pytest.raises(GavelError, match="finite"):
        sampling_from_options(fps=rate)
