"""The report's figures: valid PNG bytes for ordinary and degenerate inputs, no URL inside."""

from __future__ import annotations

import io

import pytest
from PIL import Image

pytest.importorskip("matplotlib", reason="the report's figures need matplotlib")

from gavel.report import plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def check_png(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG_MAGIC)
    with Image.open(io.BytesIO(data)) as image:
        image.verify()
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        width, height = image.size
    assert width > 200 and height > 150
    assert b"http" not in data.lower()  # no "Software" chunk naming a web site
    return width, height


HIST = {"<1e1": 0, "1e1-1e2": 1, "1e2-1e3": 4, "1e3-1e4": 9, "1e4-1e5": 2, "1e5-1e6": 0,
        "1e6-1e7": 0, ">=1e7": 0}  # fmt: skip


def test_area_ratio_plot():
    check_png(plots.area_ratio_plot([("a", [0.1, -0.5, 1.2, 0.0]), ("b", [2.0]), ("none", [])]))
    check_png(plots.area_ratio_plot([("nan", [float("nan"), float("inf")])]))  # nothing to draw


def test_box_size_histogram_plot():
    check_png(plots.box_size_histogram_plot([("photos", HIST), ("synthetic", HIST)]))


def test_category_plot():
    check_png(plots.category_plot([("photos", {"Color": 3, "Obj": 1, "No hall.": 2})]))
    check_png(plots.category_plot([]))


def test_confusion_plot_grows_with_the_runs():
    one = check_png(plots.confusion_plot([("a", {"tp": 5, "fp": 1, "fn": 2, "tn": 4})]))
    many = check_png(
        plots.confusion_plot([(f"run {i}", {"tp": i, "fp": 0, "fn": 1, "tn": 2}) for i in range(6)])
    )
    assert many[1] > one[1]  # a second row of matrices


def test_category_accuracy_plot():
    runs = [("a", {"Color": 50.0, "Obj": 0.0, "Loc": None}), ("b", {"Color": 100.0})]
    check_png(plots.category_accuracy_plot(runs, "A@0.5"))
    check_png(plots.category_accuracy_plot([], "A@0.5"))


def test_drawing_leaves_pyplot_alone():
    import matplotlib

    backend = matplotlib.get_backend()
    plots.category_plot([("x", {"Color": 1})])
    assert matplotlib.get_backend() == backend
