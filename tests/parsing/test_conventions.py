"""Box coordinate conventions: the scaling each one applies, checked against hand arithmetic.

Every expected value is worked out in the test from the convention's published definition (see
the research notes on each VLM family), never by calling the code under test.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gavel.parsing import ImageGeometry, convention_names, get_convention
from gavel.parsing.conventions import (
    QWEN25_FACTOR,
    QWEN25_MAX_PIXELS,
    QWEN25_MIN_PIXELS,
    ConventionError,
    kosmos25_resize,
    qwen_smart_resize,
)

ALL = [
    "pixel",
    "resized-pixel",
    "rel1",
    "rel1000",
    "rel999",
    "loc1000",
    "loc1024-yx",
    "yx1000",
    "coord-tokens",
    "qwen-vl",
    "rel100",
    "rel1-square",
    "loc1000-quad",
    "patch32",
    "kosmos-2.5",
]


def convert(name, values, geometry):
    return get_convention(name).to_pixels(tuple(float(v) for v in values), geometry)


# --------------------------------------------------------------------------------------------
# Registry


def test_every_documented_convention_is_registered():
    assert sorted(convention_names()) == sorted(ALL)


def test_unknown_convention_is_a_declaration_error_naming_the_choices():
    with pytest.raises(ConventionError) as info:
        get_convention("xyxy-percent")
    message = str(info.value)
    assert "xyxy-percent" in message
    for name in ALL:
        assert name in message
    # A declaration error is still a ValueError for callers that catch broadly.
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("pixel", None),
        ("resized-pixel", None),
        ("rel1", (0, 1)),
        ("rel1000", (0, 1000)),
        ("rel999", (0, 999)),
        ("loc1000", (0, 999)),
        ("loc1024-yx", (0, 1023)),
        ("yx1000", (0, 1000)),
        ("coord-tokens", (-512, 512)),
        ("qwen-vl", (0, 1000)),
        ("rel100", (0, 100)),
        ("rel1-square", (0, 1)),
        ("loc1000-quad", (0, 999)),
        ("patch32", (0, 1023)),
        ("kosmos-2.5", None),
    ],
)
def test_value_ranges(name, expected):
    assert get_convention(name).value_range == expected


@pytest.mark.parametrize(
    ("name", "text", "numbers"),
    [
        ("loc1000", "car<loc_54><loc_375><loc_906><loc_707>", ["54", "375", "906", "707"]),
        (
            "loc1024-yx",
            "<loc0180><loc0596><loc0782><loc0961> cat",
            ["0180", "0596", "0782", "0961"],
        ),
        ("coord-tokens", "<p-512><p-3><p0><p512>", ["-512", "-3", "0", "512"]),
        ("kosmos-2.5", "<bbox><x_53><y_75><x_371><y_101></bbox>", ["53", "75", "371", "101"]),
    ],
)
def test_token_conventions_own_their_token_syntax(name, text, numbers):
    assert get_convention(name).token.findall(text) == numbers


def test_token_syntaxes_do_not_cross_match():
    florence = get_convention("loc1000").token
    paligemma = get_convention("loc1024-yx").token
    coord = get_convention("coord-tokens").token
    assert paligemma.findall("<loc_54><loc_375>") == []
    assert florence.findall("<loc0054>") == []
    assert coord.findall("<p>hello</p><loc_1>") == []


@pytest.mark.parametrize("name", ["pixel", "resized-pixel", "rel1", "rel1000", "rel999", "yx1000"])
def test_plain_number_conventions_have_no_token(name):
    assert get_convention(name).token is None


# --------------------------------------------------------------------------------------------
# Scaling, one convention at a time


def test_pixel_without_sent_size_is_identity():
    g = ImageGeometry(640, 480)
    assert convert("pixel", (312, 140, 598, 455), g) == pytest.approx((312, 140, 598, 455))


def test_pixel_with_sent_size_scales_back_to_the_original():
    # The 1280x960 original was downscaled to 640x480 before it was sent (GPT-style harness).
    g = ImageGeometry(1280, 960, sent_size=(640, 480))
    expected = (312 * 1280 / 640, 140 * 960 / 480, 598 * 1280 / 640, 455 * 960 / 480)
    assert expected == (624, 280, 1196, 910)
    assert convert("pixel", (312, 140, 598, 455), g) == pytest.approx(expected)


def test_pixel_with_anisotropic_sent_size():
    # Sent squashed to 512x512 from 1024x768: x scales by 2, y by 1.5.
    g = ImageGeometry(1024, 768, sent_size=(512, 512))
    expected = (100 * 1024 / 512, 100 * 768 / 512, 300 * 1024 / 512, 400 * 768 / 512)
    assert convert("pixel", (100, 100, 300, 400), g) == pytest.approx(expected)


def test_resized_pixel_with_declared_input_size():
    # Qwen2.5-VL saw the 1920x1080 photo as 1932x1092 (image_grid_thw * 14).
    g = ImageGeometry(1920, 1080, input_size=(1932, 1092))
    expected = (135 / 1932 * 1920, 114 / 1092 * 1080, 1016 / 1932 * 1920, 672 / 1092 * 1080)
    assert convert("resized-pixel", (135, 114, 1016, 672), g) == pytest.approx(expected)


def test_resized_pixel_falls_back_to_smart_resize():
    # 640x480: width 640/28 = 22.857 -> 23 * 28 = 644; height 480/28 = 17.143 -> 17 * 28 = 476.
    g = ImageGeometry(640, 480)
    expected = (322 / 644 * 640, 238 / 476 * 480, 644 / 644 * 640, 476 / 476 * 480)
    assert convert("resized-pixel", (322, 238, 644, 476), g) == pytest.approx(expected)
    assert expected[2:] == (640, 480)


def test_resized_pixel_input_size_takes_precedence_over_smart_resize():
    # A processor run with other limits: the declared input size wins.
    g = ImageGeometry(640, 480, input_size=(320, 240))
    assert convert("resized-pixel", (10, 20, 30, 40), g) == pytest.approx((20, 40, 60, 80))


def test_rel1():
    g = ImageGeometry(640, 480)
    expected = (0.1 * 640, 0.25 * 480, 0.5 * 640, 0.75 * 480)
    assert convert("rel1", (0.1, 0.25, 0.5, 0.75), g) == pytest.approx(expected)


def test_rel1000():
    g = ImageGeometry(1280, 720)
    expected = (217 / 1000 * 1280, 112 / 1000 * 720, 920 / 1000 * 1280, 956 / 1000 * 720)
    assert convert("rel1000", (217, 112, 920, 956), g) == pytest.approx(expected)
    # The full range spans the full image.
    assert convert("rel1000", (0, 0, 1000, 1000), g) == pytest.approx((0, 0, 1280, 720))


def test_rel999():
    g = ImageGeometry(640, 480)
    expected = (580 / 999 * 640, 270 / 999 * 480, 999 / 999 * 640, 900 / 999 * 480)
    assert convert("rel999", (580, 270, 999, 900), g) == pytest.approx(expected)
    # 999 (not 1000) is the right edge.
    assert convert("rel999", (0, 0, 999, 999), g) == pytest.approx((0, 0, 640, 480))


def test_loc1000_dequantizes_to_bin_centres():
    # Florence-2: 1000 bins of W/1000 px, token N -> (N + 0.5) * W / 1000.
    g = ImageGeometry(768, 512)
    expected = (
        (54 + 0.5) * 768 / 1000,
        (375 + 0.5) * 512 / 1000,
        (906 + 0.5) * 768 / 1000,
        (707 + 0.5) * 512 / 1000,
    )
    assert convert("loc1000", (54, 375, 906, 707), g) == pytest.approx(expected)
    # The extreme bins stay strictly inside the image.
    lo = convert("loc1000", (0, 0, 999, 999), g)
    assert lo == pytest.approx((0.5 * 0.768, 0.5 * 0.512, 999.5 * 0.768, 999.5 * 0.512))
    assert lo[0] > 0 and lo[2] < 768


def test_loc1024_yx_reads_y_first_and_divides_by_1024():
    # PaliGemma: <locY1><locX1><locY2><locX2>, v / 1024 * size.
    g = ImageGeometry(640, 480)
    y1, x1, y2, x2 = 180, 596, 782, 961
    expected = (x1 / 1024 * 640, y1 / 1024 * 480, x2 / 1024 * 640, y2 / 1024 * 480)
    assert convert("loc1024-yx", (y1, x1, y2, x2), g) == pytest.approx(expected)
    # 1023 is the last token: just short of the edge.
    assert convert("loc1024-yx", (0, 0, 1023, 1023), g)[2] == pytest.approx(1023 / 1024 * 640)


def test_yx1000_reads_y_first_and_divides_by_1000():
    # Gemini box_2d: [ymin, xmin, ymax, xmax] in 0-1000.
    g = ImageGeometry(1600, 900)
    expected = (341 / 1000 * 1600, 52 / 1000 * 900, 790 / 1000 * 1600, 612 / 1000 * 900)
    assert convert("yx1000", (52, 341, 612, 790), g) == pytest.approx(expected)


def test_coord_tokens_by_hand():
    # v = S/2 + N/512 * S/2 on an 800x600 image.
    g = ImageGeometry(800, 600)
    expected = (
        400 + (-100) / 512 * 400,  # 321.875
        300 + (-300) / 512 * 300,  # 124.21875
        400 + 200 / 512 * 400,  # 556.25
        300 + 45 / 512 * 300,  # 326.3671875
    )
    assert expected == (321.875, 124.21875, 556.25, 326.3671875)
    assert convert("coord-tokens", (-100, -300, 200, 45), g) == pytest.approx(expected)
    # -512 is the left/top edge, 0 the centre, 512 the right/bottom edge.
    assert convert("coord-tokens", (-512, -512, 512, 512), g) == pytest.approx((0, 0, 800, 600))
    assert convert("coord-tokens", (0, 0, 0, 0), g) == pytest.approx((400, 300, 400, 300))


@pytest.mark.parametrize("name", ALL)
def test_conversions_return_four_floats_in_xyxy_order(name):
    g = ImageGeometry(640, 480, sent_size=(640, 480), input_size=(644, 476))
    box = convert(name, range(1, get_convention(name).arity + 1), g)
    assert len(box) == 4
    assert all(isinstance(v, float) for v in box)


def test_qwen_vl_is_relative_1000():
    g = ImageGeometry(2000, 500)
    assert convert("qwen-vl", (536, 509, 588, 602), g) == pytest.approx((1072, 254.5, 1176, 301))


def test_rel100_is_percent():
    assert convert("rel100", (17, 66.5, 50, 100), ImageGeometry(200, 400)) == pytest.approx(
        (34, 266, 100, 400)
    )


def test_rel1_square_removes_the_centred_padding():
    # 800x600 padded to 800x800: 100 px of padding above and below.
    g = ImageGeometry(800, 600)
    assert convert("rel1-square", (0.25, 0.125, 0.5, 0.875), g) == pytest.approx((200, 0, 400, 600))


def test_florence_quadrilateral_is_its_bounding_box_at_bin_centres():
    # The first region of Florence-2-large's <OCR_WITH_REGION> on a 1300x876 photo.
    g = ImageGeometry(1300, 876)
    box = convert("loc1000-quad", (533, 68, 653, 68, 653, 128, 533, 128), g)
    assert box == pytest.approx((533.5 * 1.3, 68.5 * 0.876, 653.5 * 1.3, 128.5 * 0.876))
    tilted = convert("loc1000-quad", (177, 226, 345, 224, 345, 327, 177, 331), g)
    assert tilted == pytest.approx((177.5 * 1.3, 224.5 * 0.876, 345.5 * 1.3, 331.5 * 0.876))


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        # Kosmos-2's docstring: "a snowman" is cells 44 and 863 (row 1 col 12, row 26 col 31),
        # cell centre to cell centre.
        ((44, 863), (12.5 / 32, 1.5 / 32, 31.5 / 32, 26.5 / 32)),
        # One cell: the cell's full extent.
        ((33, 33), (1 / 32, 1 / 32, 2 / 32, 2 / 32)),
        # One row high: full extent too.
        ((32, 40), (0, 1 / 32, 9 / 32, 2 / 32)),
    ],
)
def test_kosmos_patch_cells(cells, expected):
    assert convert("patch32", cells, ImageGeometry(1, 1)) == pytest.approx(expected)


def test_kosmos_patch_token():
    text = "<object><patch_index_0005><patch_index_0911></object>"
    assert get_convention("patch32").token.findall(text) == ["0005", "0911"]


# --------------------------------------------------------------------------------------------
# The coordinate-token convention is the inverse of the paper's quantizer


def quantize(v: float, size: float) -> int:
    """The GAVEL paper's q(v, S) = round(512 * clip((v - S/2) / (S/2), -1, 1)), written out."""
    half = size / 2
    return round(512 * min(1.0, max(-1.0, (v - half) / half)))


def test_quantizer_by_hand():
    assert quantize(0, 800) == -512
    assert quantize(400, 800) == 0
    assert quantize(800, 800) == 512
    assert quantize(-50, 800) == -512  # clipped
    assert quantize(1000, 800) == 512  # clipped
    # 600 on 800: (600 - 400) / 400 = 0.5 -> 256.
    assert quantize(600, 800) == 256


@st.composite
def size_and_values(draw):
    width = draw(st.integers(1, 10_000))
    height = draw(st.integers(1, 10_000))
    xs = [draw(st.floats(0, width, allow_nan=False)) for _ in range(2)]
    ys = [draw(st.floats(0, height, allow_nan=False)) for _ in range(2)]
    return width, height, (xs[0], ys[0], xs[1], ys[1])


@settings(max_examples=300, deadline=None)
@given(size_and_values())
def test_coord_tokens_decode_within_half_a_bin_of_the_original(case):
    width, height, (x1, y1, x2, y2) = case
    tokens = (quantize(x1, width), quantize(y1, height), quantize(x2, width), quantize(y2, height))
    decoded = convert("coord-tokens", tokens, ImageGeometry(width, height))
    # One token step is (S/2)/512 = S/1024 px; rounding is off by at most half a step.
    for got, original, size in zip(decoded, (x1, y1, x2, y2), (width, height) * 2, strict=True):
        assert abs(got - original) <= size / 2048 + 1e-9 * size


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10_000), st.integers(-512, 512))
def test_coord_tokens_decode_is_a_right_inverse_of_the_quantizer(size, n):
    decoded = convert("coord-tokens", (n, n, n, n), ImageGeometry(size, size))
    assert quantize(decoded[0], size) == n
    assert 0 <= decoded[0] <= size


# --------------------------------------------------------------------------------------------
# qwen_smart_resize (returns (width, height))


def test_smart_resize_defaults_are_the_hub_processor_config():
    assert QWEN25_FACTOR == 28
    assert QWEN25_MIN_PIXELS == 3136  # 56 * 56
    assert QWEN25_MAX_PIXELS == 12_845_056  # 16384 * 28 * 28


def test_smart_resize_rounds_to_multiples_of_28():
    # 640 / 28 = 22.857 -> 23 -> 644; 480 / 28 = 17.143 -> 17 -> 476.
    assert qwen_smart_resize(640, 480) == (644, 476)
    # 1920 / 28 = 68.57 -> 69 -> 1932; 1080 / 28 = 38.57 -> 39 -> 1092 (2,109,744 px: in range).
    assert qwen_smart_resize(1920, 1080) == (1932, 1092)
    # Exact multiples are kept: 1120 = 40 * 28, 840 = 30 * 28.
    assert qwen_smart_resize(1120, 840) == (1120, 840)


def test_smart_resize_rounds_half_to_even():
    # 70 / 28 = 2.5 -> round() = 2 -> 56 (floor(x + 0.5) would give 3 -> 84);
    # 98 / 28 = 3.5 -> round() = 4 -> 112. 56 * 112 = 6272 px is within the limits.
    assert qwen_smart_resize(70, 98) == (56, 112)
    # 126 / 28 = 4.5 -> 4 -> 112; 154 / 28 = 5.5 -> 6 -> 168.
    assert qwen_smart_resize(126, 154) == (112, 168)


def test_smart_resize_above_max_pixels_with_the_hub_limit():
    # 6000x4000: rounding gives 5992 x 4004 = 23,991,968 px > 12,845,056, so
    # beta = sqrt(6000 * 4000 / 12,845,056) = sqrt(1.86842) = 1.366902;
    # width  = floor(6000 / 1.366902 / 28) * 28 = floor(156.77) * 28 = 156 * 28 = 4368;
    # height = floor(4000 / 1.366902 / 28) * 28 = floor(104.51) * 28 = 104 * 28 = 2912.
    beta = math.sqrt(6000 * 4000 / 12_845_056)
    assert math.floor(6000 / beta / 28) == 156
    assert math.floor(4000 / beta / 28) == 104
    assert qwen_smart_resize(6000, 4000) == (4368, 2912)
    assert QWEN25_MAX_PIXELS >= 4368 * 2912


def test_smart_resize_above_max_pixels_with_the_class_default_limit():
    # transformers' bare processor uses max 28 * 28 * 1280 = 1,003,520 px. 1920x1080 rounds to
    # 1932 x 1092 = 2,109,744 px, too many: beta = sqrt(2,073,600 / 1,003,520) = 1.437472;
    # width = floor(1920 / 1.437472 / 28) = floor(47.70) = 47 -> 1316;
    # height = floor(1080 / 1.437472 / 28) = floor(26.83) = 26 -> 728.
    assert qwen_smart_resize(1920, 1080, max_pixels=28 * 28 * 1280) == (1316, 728)


def test_smart_resize_below_min_pixels():
    # 20x40: 20 / 28 = 0.71 -> 1 -> 28; 40 / 28 = 1.43 -> 1 -> 28; 28 * 28 = 784 < 3136, so
    # beta = sqrt(3136 / (20 * 40)) = sqrt(3.92) = 1.979899;
    # width  = ceil(20 * 1.979899 / 28) * 28 = ceil(1.414) * 28 = 2 * 28 = 56;
    # height = ceil(40 * 1.979899 / 28) * 28 = ceil(2.828) * 28 = 3 * 28 = 84.
    assert qwen_smart_resize(20, 40) == (56, 84)
    assert QWEN25_MIN_PIXELS <= 56 * 84


def test_smart_resize_never_rounds_a_side_to_zero():
    # 10 / 28 = 0.36 rounds to 0; the guard keeps one factor (the min-pixels rule then applies).
    w, h = qwen_smart_resize(10, 2000)
    assert w >= 28 and w % 28 == 0 and h % 28 == 0


def test_smart_resize_with_qwen3_factor():
    # Qwen3-VL: factor 32, 256^2..4096^2 px. 1000 / 32 = 31.25 -> 31 -> 992; 700 / 32 = 21.875
    # -> 22 -> 704; 992 * 704 = 698,368 px, within [65,536, 16,777,216].
    assert qwen_smart_resize(1000, 700, factor=32, min_pixels=65_536, max_pixels=16_777_216) == (
        992,
        704,
    )


@settings(max_examples=200, deadline=None)
@given(st.integers(28, 8000), st.integers(28, 8000))
def test_smart_resize_output_is_multiple_of_28_within_limits(width, height):
    w, h = qwen_smart_resize(width, height)
    assert w % 28 == 0 and h % 28 == 0
    assert w * h <= QWEN25_MAX_PIXELS
    assert w * h >= QWEN25_MIN_PIXELS


# --------------------------------------------------------------------------------------------
# Kosmos-2.5: pixels of the processor's resized input (16 x 16 patches, at most 4096)


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        # 1000 x 1000: scale = sqrt(4096 * 16/1000 * 16/1000) = 1.024, so 64 rows and 64 columns
        # of 16 px: 1024 x 1024.
        ((1000, 1000), (1024, 1024)),
        # 800 x 1200 (portrait): scale = sqrt(4096 * 256 / 960000) = 1.04513; rows =
        # floor(1.04513 * 1200 / 16) = floor(78.38) = 78, cols = floor(1.04513 * 800 / 16) =
        # floor(52.26) = 52; 52 * 78 = 4056 <= 4096 patches.
        ((800, 1200), (832, 1248)),
        # A 16 x 4000 strip: scale = sqrt(4096 * 16/4000 * 16/16) = sqrt(16.384) = 4.0477;
        # rows = floor(4.0477 * 250) = 1011, cols = floor(4.0477) = 4 (4044 patches).
        ((16, 4000), (4 * 16, 1011 * 16)),
    ],
)
def test_kosmos25_resize_by_hand(size, expected):
    assert kosmos25_resize(*size) == expected


def test_kosmos25_pixels_scale_back_from_the_resized_input():
    # 800 x 1200 seen as 832 x 1248: x * 800 / 832, y * 1200 / 1248.
    box = convert("kosmos-2.5", (104, 156, 416, 624), ImageGeometry(800, 1200))
    assert box == pytest.approx((100, 150, 400, 600))
    declared = ImageGeometry(800, 1200, input_size=(400, 600))
    assert convert("kosmos-2.5", (100, 150, 200, 300), declared) == pytest.approx(
        (200, 300, 400, 600)
    )
