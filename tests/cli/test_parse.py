"""``gavel parse``: one reply read as gavel reads it, the boxes printed in pixels."""

from __future__ import annotations

import io
import json

import pytest


def test_a_reply_under_a_preset_prints_its_boxes_in_pixels(gavel_main):
    done = gavel_main("parse", "--preset", "qwen2-vl", "--width", "1280", "--height", "720",
                      "<|box_start|>(576,12),(592,42)<|box_end|>")  # fmt: skip
    assert done.code == 0, done.text
    assert done.out == (
        "preset qwen2-vl (rel1000), image 1280 x 720\n"
        "ok (qwen2-vl): 1 box in pixels (x1, y1, x2, y2)\n"
        "  [737.28, 8.64, 757.76, 30.24]\n"
    )


def test_labelled_numbers_and_what_was_fixed(gavel_main):
    done = gavel_main("parse", "--convention", "rel1000", "--width", "500", "--height", "500",
                      "(x1: 600, y1: 350, x2: 200, y2: 550) and [1, 1, 1, 1]")  # fmt: skip
    assert done.code == 0, done.text
    assert done.out.splitlines() == [
        "convention rel1000, image 500 x 500",
        "lenient (labelled): 1 box in pixels (x1, y1, x2, y2)",
        "  [100, 175, 300, 275]",
        "fixed or set aside: swapped 1",
    ]


def test_the_label_filter_and_json(gavel_main):
    reply = "<loc0000><loc0000><loc0512><loc0512> cat ; <loc0512><loc0512><loc1023><loc1023> 5"
    done = gavel_main("parse", "--preset", "paligemma", "--width", "1024", "--height", "1024",
                      "--labels", "cat ; dog", "--format", "json", reply)  # fmt: skip
    assert done.code == 0, done.text
    reading = json.loads(done.out)
    assert reading["boxes"] == [[0.0, 0.0, 512.0, 512.0]]
    assert (reading["fixes"], reading["convention"]) == ({"label_dropped": 1}, "loc1024-yx")


def test_sizes_as_sent_and_as_seen(gavel_main):
    done = gavel_main("parse", "--preset", "claude", "--width", "2184", "--height", "1638",
                      "--sent-size", "1092x819", "[[100, 50, 200, 150]]")  # fmt: skip
    assert "  [200, 100, 400, 300]" in done.out.splitlines()
    done = gavel_main("parse", "--preset", "kosmos-2.5", "--width", "800", "--height", "1200",
                      "--input-size", "400x600", "<bbox><x_100><y_150><x_200><y_300></bbox>a")  # fmt: skip
    assert "  [200, 300, 400, 600]" in done.out.splitlines()


def test_a_reply_from_standard_input(gavel_main, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO('{"bbox_2d": [0.28, 0.5, 0.52, 0.7]}\n'))
    done = gavel_main("parse", "--preset", "gpt", "-")
    assert done.code == 0, done.text
    assert "  [0.28, 0.5, 0.52, 0.7]" in done.out
    assert "warning: every number lies in [0, 1]" in done.out


def test_a_reply_without_a_box(gavel_main):
    done = gavel_main("parse", "--preset", "internvl2.5", "The bed is not visible.")
    assert done.code == 0
    assert done.out.splitlines()[1] == "none (no box syntax): 0 boxes in pixels (x1, y1, x2, y2)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["x"], "give --preset or --convention (one of the two)"),
        (["--preset", "gpt", "--convention", "pixel", "x"], "one of the two"),
        (["--preset", "llava", "x"], "'llava' is not one of"),
        (["--preset", "gpt", "--width", "0", "x"], "0 is not in the range 1<=x<=2147483647"),
        (["--preset", "gpt", "--sent-size", "10x0", "x"], "each side must be from 1 to"),
        (["--preset", "gpt", "--input-size", "wide", "x"], "'wide' is not WIDTHxHEIGHT"),
    ],
)
def test_bad_flags_are_usage_errors(gavel_main, args, message):
    done = gavel_main("parse", *args)
    assert done.code == 2
    assert message in done.err
    assert "Traceback" not in done.err
