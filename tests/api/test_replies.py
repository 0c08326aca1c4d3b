"""``gavel.api.replies.parse_reply``: one reply read as ``gavel score`` reads it."""

from __future__ import annotations

import pytest

from gavel.api.replies import convention_names, parse_reply, split_labels
from gavel.errors import ConfigError


def test_a_reply_under_a_preset():
    reading = parse_reply("<|box_start|>(100,200),(300,400)<|box_end|>", preset="qwen2-vl",
                          width=2000, height=1000)  # fmt: skip
    assert reading.boxes == [pytest.approx((200, 200, 600, 400))]
    assert (reading.status, reading.syntax, reading.convention) == ("ok", "qwen2-vl", "rel1000")
    assert (reading.preset, reading.width, reading.height, reading.fixes) == ("qwen2-vl", 2000,
                                                                              1000, {})  # fmt: skip


def test_a_reply_under_a_convention_with_the_sizes_it_scales_back_from():
    reading = parse_reply("[[100, 50, 200, 150]]", convention="pixel", width=2184, height=1638,
                          sent_size=[1092, 819])  # fmt: skip
    assert reading.boxes == [pytest.approx((200, 100, 400, 300))]
    resized = parse_reply('{"bbox_2d": [10, 20, 30, 40]}', convention="resized-pixel", width=200,
                          height=100, input_size=(100, 50))  # fmt: skip
    assert resized.boxes == [pytest.approx((20, 40, 60, 80))]


def test_what_was_fixed_is_reported():
    reading = parse_reply("[300, 400, 100, 2000]", convention="pixel", width=640, height=480)
    assert reading.boxes == [pytest.approx((100, 400, 300, 480))]
    assert reading.fixes == {"swapped": 1, "clipped": 1}
    assert parse_reply('{"bbox_2d": [0.2, 0.2, 0.5, 0.5]}', preset="gpt").unit_interval


def test_the_label_filter():
    answer = "<loc0000><loc0000><loc0512><loc0512> cat ; <loc0512><loc0512><loc1023><loc1023> 5"
    reading = parse_reply(answer, preset="paligemma", width=1024, height=1024,
                          labels=split_labels("cat ; dog"))  # fmt: skip
    assert reading.boxes == [pytest.approx((0, 0, 512, 512))]
    assert reading.fixes == {"label_dropped": 1}
    assert split_labels(" cat ;dog ; ") == ["cat", "dog"]
    assert split_labels(None) is None


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({}, "give a preset or a convention"),
        ({"preset": "gpt", "convention": "pixel"}, "give a preset or a convention"),
        ({"preset": "llava"}, "unknown preset 'llava'"),
        ({"convention": "xyxy"}, "unknown box format 'xyxy'"),
        ({"preset": "gpt", "width": 0}, "Invalid value for 'width': 0 is not in the range"),
        ({"preset": "gpt", "height": 1.5}, "'height': 1.5 is not an integer"),
        ({"preset": "gpt", "sent_size": [10]}, "sent_size must be [width, height]"),
        ({"preset": "gpt", "input_size": [10, -1]}, "'input_size': -1 is not in the range"),
    ],
)
def test_bad_settings_are_config_errors_naming_them(settings, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        parse_reply("[1, 2, 3, 4]", **settings)


def test_no_reply_is_an_error():
    for text in ("", "no box here", "[[", "x1: 1" * 1000):
        assert parse_reply(text, preset="generic").boxes == []
    assert "kosmos-2.5" in convention_names()
