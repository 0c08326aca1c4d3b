"""Reading predictions: what decoding alone cannot check is named by line and field."""

from __future__ import annotations

import json

import pytest

from gavel.errors import DataError
from gavel.io.predictions import PredictionReader


def read(tmp_path, *lines: dict | str) -> list:
    path = tmp_path / "pred.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return list(PredictionReader(path))


GOOD = {"id": "a", "response": "[[1, 2, 3, 4]]", "box_format": "pixel", "sent_size": [64, 48]}


@pytest.mark.parametrize(
    ("field", "value"),
    [("sent_size", [0, 0]), ("input_size", [640, 0]), ("sent_size", [64]),
     ("sent_size", [-1, 5]), ("input_size", [2**31, 5])],
)  # fmt: skip
def test_sizes_that_would_divide_by_zero_or_cannot_be_are_refused(tmp_path, field, value):
    with pytest.raises(DataError) as error:
        read(tmp_path, GOOD, {**GOOD, "id": "b", field: value})
    assert (error.value.line, error.value.field) == (2, field)
    assert "expected [width, height] in pixels" in error.value.message


def test_an_unknown_box_format_names_its_line(tmp_path):
    with pytest.raises(DataError) as error:
        read(tmp_path, GOOD, {**GOOD, "id": "b", "box_format": "furlongs"})
    assert (error.value.line, error.value.field) == (2, "box_format")
    assert 'unknown box format "furlongs"' in error.value.message and "pixel" in error.value.message


def test_lone_surrogates_anywhere_are_refused_with_their_field(tmp_path):
    for field in ("id", "response", "model", "explanation"):
        line = json.dumps({**GOOD, field: "@"}).replace('"@"', '"x\\udfffy"')
        with pytest.raises(DataError) as error:
            read(tmp_path, line)
        assert (error.value.line, error.value.field) == (1, field)
        assert "lone surrogate" in error.value.message
    pair = json.dumps({**GOOD, "model": "\U0001f600"})  # a real pair of surrogates is text
    assert read(tmp_path, pair)[0].model == "\U0001f600"
