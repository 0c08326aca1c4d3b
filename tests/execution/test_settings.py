"""``GenerateSettings`` is ``gavel generate``'s flags as one record: the same defaults, the
same bounds (read from one declaration by both), the same refusals in the same words."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import click
import pytest

from gavel.api.generation import _SETTING_OF
from gavel.benchmarks.registry import get_benchmark
from gavel.cli.generate import generate as command
from gavel.errors import ConfigError
from gavel.execution.settings import SETTINGS, GenerateSettings, checked


def params() -> dict[str, click.Parameter]:
    """``gavel generate``'s parameters by the setting each becomes."""
    ctx = click.Context(command)
    found = {}
    for param in command.get_params(ctx):
        if not param.expose_value or not isinstance(param, click.Option):
            continue
        found[_SETTING_OF.get(str(param.name), str(param.name))] = param
    return found


def test_every_flag_is_a_setting_with_the_flags_default():
    flags = params()
    parsed = command.make_context("generate", ["--data", "d", "--model", "m", "--out", "o"]).params
    own = {o.name for o in get_benchmark("gavel").options_for("generate")}  # ``options``
    assert set(flags) - own <= set(SETTINGS)
    assert set(SETTINGS) - {"options"} <= set(flags)
    for name, spec in SETTINGS.items():
        if name == "options":
            continue
        param = flags[name]
        assert spec.metadata["flag"] in param.opts, name
        if param.required:  # data, model, out: given always
            continue
        expected = spec.default if spec.default is not dataclasses.MISSING else None
        assert parsed[str(param.name)] == expected, name


def test_a_flag_and_its_setting_share_one_bound():
    flags = params()
    for name, spec in SETTINGS.items():
        bound = spec.metadata["bound"]
        if bound is None:
            continue
        kind = flags[name].type
        assert (kind.min, kind.max, kind.min_open, kind.max_open) == (
            bound.min, bound.max, bound.min_open, False
        ), name  # fmt: skip


def click_refusal(name: str, value: object) -> str:
    """What click says of ``value`` given to the setting's flag."""
    param = params()[name]
    with pytest.raises(click.BadParameter) as refused:
        param.type.convert(value, param, click.Context(command))
    return f"Invalid value for '{SETTINGS[name].metadata['flag']}': {refused.value.message}"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("concurrency", 0),
        ("concurrency", 5000),
        ("max_tokens", 0),
        ("temperature", -1),
        ("temperature", math.nan),
        ("timeout", 0),
        ("timeout", math.inf),
        ("fps", 0.0001),
        ("seed", -1),
        ("executor", "threads"),
        ("dtype", "int8"),
        ("dry_run_format", "yaml"),
        ("batch_poll", 0),
    ],
)
def test_a_refused_value_is_refused_in_clicks_words(name, value):
    settings = GenerateSettings(data=Path("d"), model="scene", out=Path("o"), **{name: value})
    with pytest.raises(ConfigError) as refused:
        checked(settings)
    assert str(refused.value) == click_refusal(name, value)


def test_python_values_take_the_shape_the_flags_give():
    settings = checked(
        GenerateSettings(
            data="d.jsonl", model="scene", out="o.jsonl", sample_id="a", concurrency=3,
            extra_body={"top_k": 1}, base_url=["http://x/v1"], options={"prompt": None},
        )
    )  # fmt: skip
    assert settings.data == Path("d.jsonl") and settings.out == Path("o.jsonl")
    assert settings.sample_id == ("a",) and settings.base_url == ("http://x/v1",)
    assert settings.concurrency == 3 and settings.extra_body == '{"top_k": 1}'


def test_a_benchmark_option_is_checked_and_an_unknown_one_named():
    with pytest.raises(ConfigError, match="'mode' is not an option of the gavel benchmark"):
        checked(GenerateSettings(data=Path("d"), model="scene", out=Path("o"),
                                 options={"mode": "strict"}))  # fmt: skip
    with pytest.raises(ConfigError, match="Invalid value for '--box-format'"):
        checked(GenerateSettings(data=Path("d"), model="scene", out=Path("o"),
                                 options={"box_format": "nope"}))  # fmt: skip


def test_a_number_given_as_text_is_refused_saying_what_was_given():
    """The Python API takes numbers as numbers; ``concurrency="3"`` is refused naming the
    type it got, not called an invalid integer."""
    import gavel
    from gavel.errors import ConfigError

    with pytest.raises(ConfigError, match=r"'3' is not an integer \(a str was given\)"):
        gavel.generate("gavel", data="d.jsonl", model="scene", out="p.jsonl", concurrency="3")


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({"model": 5}, "'--model': 5 is not a text"),
        ({"data": 5}, "'--data': 5 is not a path"),
        ({"sample_id": [1, 2]}, "'--sample-id': 1 is not a text"),
        ({"base_url": 5}, "'--base-url': 5 is not a text or a list of texts"),
        ({"no_cache": "no"}, "'--no-cache': 'no' is not True or False"),
        ({"prompt": "nope"}, "unknown prompt template 'nope'; gavel ships"),
        ({"price": 1.5}, "'--price': 1.5 is not a text"),
    ],
)
def test_a_value_of_the_wrong_kind_is_refused_naming_its_flag(given, words, tmp_path):
    """What the flags' click types would refuse is refused before anything runs, never left
    to fail inside as an AttributeError or TypeError."""
    import gavel
    from gavel.errors import ConfigError

    data = gavel.synthesize("gavel", out=tmp_path / "set", n=2)
    settings = {"data": data, "model": "scene", "out": tmp_path / "p.jsonl", **given}
    with pytest.raises(ConfigError, match=words):
        gavel.generate("gavel", **settings)
    assert not (tmp_path / "p.jsonl").exists()
