"""Boxes written as labelled numbers, in prose and as JSON objects, in every labelling and order."""

from __future__ import annotations

import itertools

import pytest

from gavel.parsing import BoxStatus, ImageGeometry, parse_boxes
from gavel.parsing.labelled import box_from_object, labelled_boxes, role_of

SQUARE = ImageGeometry(1000, 1000)


@pytest.mark.parametrize(
    ("label", "role"),
    [
        ("x1", ("x", "n1")),
        ("X_1", ("x", "n1")),
        ("y0", ("y", "n0")),
        ("x_min", ("x", "start")),
        ("xMin", ("x", "start")),
        ("min_x", ("x", "start")),
        ("ymax", ("y", "end")),
        ("Left", ("x", "start")),
        ("top", ("y", "start")),
        ("right", ("x", "end")),
        ("BOTTOM", ("y", "end")),
        ("x", ("x", "start")),
        ("width", ("x", "size")),
        ("h", ("y", "size")),
        ("cx", ("x", "centre")),
        ("center_y", ("y", "centre")),
        ("x_centre", ("x", "centre")),
        ("label", None),
        ("xx", None),
        ("z1", None),
    ],
)
def test_each_label_has_its_role(label, role):
    assert role_of(label) == role


# --- in prose: the InternVL2.5 forms, then every family of labels ---------------------------


@pytest.mark.parametrize(
    "answer",
    [
        # InternVL2.5 on RefCOCOg (teaywright/REC-Eval outputs).
        "The white cat laying down in the couch is located within the following bounding box "
        "coordinates: (x1: 200, y1: 350, x2: 600, y2: 550).",
        "The black cell phone sitting on the keyboard is located at the coordinates "
        "(x1: 200, y1: 350) to (x2: 600, y2: 550).",
        "x_min = 200, y_min = 350, x_max = 600, y_max = 550",
        "xmin: 200; ymin: 350; xmax: 600; ymax: 550",
        "- **left**: 200\n- **top**: 350\n- **right**: 600\n- **bottom**: 550",
        "x: 200, y: 350, width: 400, height: 200",
        "x=200 y=350 w=400 h=200",
        "center_x: 400, center_y: 450, width: 400, height: 200",
        "(x0: 200, y0: 350, x1: 600, y1: 550)",
        '"x1": 200, "y1": 350, "x2": 600, "y2": 550',
        "`x1`: 200, `y1`: 350, `x2`: 600, `y2`: 550",
        "X1: 200, Y1: 350, X2: 600, Y2: 550",
    ],
)
def test_labelled_numbers_in_prose_are_one_box(answer):
    result = parse_boxes(answer, "rel1000", SQUARE)
    assert (result.status, result.syntax) == (BoxStatus.LENIENT, "labelled")
    assert result.boxes == [pytest.approx((200, 350, 600, 550))]


@pytest.mark.parametrize("order", list(itertools.permutations(["x1", "y1", "x2", "y2"])))
def test_the_order_of_the_labels_does_not_matter(order):
    values = {"x1": 200, "y1": 350, "x2": 600, "y2": 550}
    answer = ", ".join(f"{label}: {values[label]}" for label in order)
    assert list(labelled_boxes(answer)) == [(200, 350, 600, 550)]


@pytest.mark.parametrize("order", list(itertools.permutations(["left", "top", "width", "height"])))
def test_the_order_of_size_labels_does_not_matter(order):
    values = {"left": 10, "top": 20, "width": 30, "height": 40}
    answer = " ".join(f"{label}={values[label]}" for label in order)
    assert list(labelled_boxes(answer)) == [(10, 20, 40, 60)]


def test_several_boxes_in_one_reply():
    answer = (
        "The cat is at (x1: 10, y1: 20, x2: 30, y2: 40) and the dog at "
        "(x1: 50, y1: 60, x2: 70, y2: 80)."
    )
    assert list(labelled_boxes(answer)) == [(10, 20, 30, 40), (50, 60, 70, 80)]


def test_a_label_seen_again_starts_a_new_box():
    # The first box never gets its y2: it is dropped, the second is read whole.
    answer = "x1: 1, y1: 2, x2: 3, x1: 10, y1: 20, x2: 30, y2: 40"
    assert list(labelled_boxes(answer)) == [(10, 20, 30, 40)]


def test_numbers_far_apart_are_no_box():
    answer = (
        "x1: 10, y1: 20. "
        + "Some sentence about the picture and the sky. " * 2
        + ("x2: 30, y2: 40")
    )
    assert list(labelled_boxes(answer)) == []


@pytest.mark.parametrize(
    "answer",
    [
        "x: 10, y: 20",  # a point
        "width: 640, height: 480",  # an image size
        "x0: 1, x1: 2, x2: 3, y0: 4, y1: 5",  # three numbered x labels
        "Step 1: crop. Top: the sky.",
        "(x1, y1) and (x2, y2) are not provided",
        "day: 5, way: 6, row: 7, how: 8",
    ],
)
def test_labels_that_make_no_box(answer):
    assert list(labelled_boxes(answer)) == []


def test_the_labels_have_to_stand_alone():
    assert list(labelled_boxes("max1: 1, ax1: 2, y1z: 3, x-2: 4, foo_x1: 5")) == []


# --- as JSON objects ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "numbers",
    [
        {"x1": 10, "y1": 20, "x2": 30, "y2": 40},
        {"xmin": 10, "ymin": 20, "xmax": 30, "ymax": 40},
        {"Left": 10, "Top": 20, "Width": 20, "Height": 20},  # AWS Rekognition's BoundingBox
        {"x": 10, "y": 20, "w": 20, "h": 20},
        {"cx": 20, "cy": 30, "width": 20, "height": 20},
        {"right": 30, "bottom": 40, "width": 20, "height": 20},
        {"x_min": 10, "y_min": 20, "x_max": 30, "y_max": 40, "score": 0.9},
    ],
)
def test_json_objects_with_labelled_keys(numbers):
    assert box_from_object(numbers) == pytest.approx((10, 20, 30, 40))


def test_moondream_detections_in_unit_coordinates():
    answer = (
        '{"objects": [{"x_min": 0.1, "y_min": 0.2, "x_max": 0.3, "y_max": 0.4}, '
        '{"x_min": 0.5, "y_min": 0.5, "x_max": 0.9, "y_max": 1.0}]}'
    )
    result = parse_boxes(answer, "rel1", ImageGeometry(1000, 500))
    assert (result.status, result.syntax) == (BoxStatus.OK, "json")
    assert result.boxes == [
        pytest.approx((100, 100, 300, 200)),
        pytest.approx((500, 250, 900, 500)),
    ]


def test_a_box_key_holding_a_labelled_object():
    result = parse_boxes(
        '{"bbox": {"x1": "100", "y1": 200, "x2": 300, "y2": 400}}', "pixel", SQUARE
    )
    assert result.boxes == [pytest.approx((100, 200, 300, 400))]


def test_two_keys_with_one_meaning_make_an_object_ambiguous():
    assert box_from_object({"left": 10, "x_min": 10, "top": 20, "right": 30, "bottom": 40}) is None
    assert box_from_object({"x0": 1, "x1": 2, "x2": 3, "y0": 4, "y1": 5}) is None


def test_points_and_sizes_in_json_are_no_box():
    for answer in ('{"x": 10, "y": 20}', '{"image": {"width": 640, "height": 480}}',
                   '{"point_2d": [10, 20], "label": "cup"}'):  # fmt: skip
        assert parse_boxes(answer, "pixel", SQUARE).boxes == [], answer


@pytest.mark.parametrize(
    ("answer", "box"),
    [
        ("(x1, y1, x2, y2) = (100, 200, 300, 400)", (100, 200, 300, 400)),
        ("The box [x_min, y_min, width, height]: [100, 200, 200, 200].", (100, 200, 300, 400)),
        ("(left, top, right, bottom) are (100, 200, 300, 400)", (100, 200, 300, 400)),
        ("(x, y, w, h) (100, 200, 200, 200)", (100, 200, 300, 400)),
        ("(y_min, x_min, y_max, x_max) = (200, 100, 400, 300)", (100, 200, 300, 400)),
    ],
)
def test_four_labels_naming_four_numbers(answer, box):
    result = parse_boxes(answer, "pixel", SQUARE)
    assert (result.syntax, result.boxes) == ("labelled", [pytest.approx(box)])


def test_labels_in_brackets_without_numbers_are_no_box():
    # LLaVA-1.5 echoing its prompt, then a list with words where numbers belong.
    answer = "Provide the bounding box [x1,y1,x2,y2] of the cat. ASSISTANT: [0.69, y1, 1.0, y2]"
    assert parse_boxes(answer, "rel1-square", SQUARE).boxes == []


@pytest.mark.parametrize(
    "answer",
    [
        '{"top_left": [100, 200], "bottom_right": [300, 400]}',
        '[{"label": "cat", "Top-Left": {"x": 100, "y": 200}, "bottom right": {"X": 300, "Y": 400}}]',
        '{"upper_left": [100, 200], "lower_right": [300, 400], "score": 0.5}',
    ],
)
def test_json_objects_naming_two_corner_points(answer):
    result = parse_boxes(answer, "pixel", SQUARE)
    assert (result.status, result.boxes) == (BoxStatus.OK, [pytest.approx((100, 200, 300, 400))])


def test_one_corner_point_is_no_box():
    for answer in ('{"top_left": [100, 200]}', '{"top_left": [1, 2], "bottom_right": [3, true]}'):
        assert parse_boxes(answer, "pixel", SQUARE).boxes == [], answer
