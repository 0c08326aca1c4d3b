"""Every float option of every command refuses NaN and infinity as a usage error."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from gavel.cli.main import COMMANDS, cli
from gavel.cli.options import FiniteFloat


def every_option() -> list[tuple[tuple[str, ...], click.Option]]:
    """(command path, option) for each option of every command and subcommand."""
    found = []

    def walk(path: tuple[str, ...], command: click.Command) -> None:
        found.extend((path, p) for p in command.params if isinstance(p, click.Option))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk((*path, name), sub)

    for name, entry in COMMANDS.items():
        walk((name,), entry.load())
    return found


def float_options() -> list[tuple[tuple[str, ...], str, click.ParamType]]:
    """(command path, flag, type) for each option of every command that takes a float."""
    return [
        (path, option.opts[0], option.type)
        for path, option in every_option()
        if isinstance(option.type, click.types.FloatParamType)
    ]


OPTIONS = float_options()


def test_the_table_covers_the_float_options_known_to_be_there():
    flags = {(" ".join(path), flag) for path, flag, _ in OPTIONS}
    assert {
        ("generate", "--temperature"),
        ("generate", "--placement-timeout"),
        ("score", "--judge-timeout"),
        ("score", "--judge-temperature"),
        ("train sft", "--lr"),
    } <= flags


@pytest.mark.parametrize(("path", "flag", "kind"), OPTIONS, ids=lambda v: str(v))
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_a_float_option_refuses_what_is_not_a_finite_number(path, flag, kind, value):
    assert isinstance(kind, FiniteFloat)
    done = CliRunner().invoke(cli, [*path, f"{flag}={value}"])
    assert done.exit_code == 2, done.output
    assert isinstance(done.exception, SystemExit)
    assert "Traceback" not in done.output
    assert f"Invalid value for '{flag}'" in done.output
    assert "finite" in done.output or "range" in done.output


def test_an_unbounded_float_option_shows_no_range_in_its_help():
    done = CliRunner().invoke(cli, ["curate", "score", "--help"])
    assert done.exit_code == 0, done.output
    assert "None" not in done.output


def options_named(*suffixes: str) -> list[tuple[tuple[str, ...], str]]:
    """(command path, flag) of every option whose flag ends in one of ``suffixes``."""
    return [(path, o.opts[0]) for path, o in every_option() if o.opts[0].endswith(suffixes)]


#: A value beyond what a run can take, per kind of option (each failed inside before).
OUT_OF_RANGE = [
    ("seed", "-1"),
    ("seed", str(2**64)),
    ("bootstrap", "9223372036854775807"),
    ("concurrency", str(10**29)),
    ("fps", "1e-320"),
    ("fps", "1e9"),
]
BOUNDED = [
    (path, flag, value)
    for suffix, value in OUT_OF_RANGE
    for path, flag in options_named(f"-{suffix}")
]


def test_the_bounded_options_are_all_found():
    flags = {(" ".join(path), flag) for path, flag, _ in BOUNDED}
    assert {
        ("score", "--seed"),
        ("generate", "--seed"),
        ("score", "--bootstrap"),
        ("compare", "--bootstrap"),
        ("generate", "--concurrency"),
        ("score", "--judge-concurrency"),
        ("curate score", "--concurrency"),
        ("generate", "--fps"),
        ("export lmms-eval", "--fps"),
        ("judge-calibrate", "--heldout-seed"),
    } <= flags


@pytest.mark.parametrize(("path", "flag", "value"), BOUNDED, ids=lambda v: str(v))
def test_a_count_beyond_what_a_run_can_take_is_a_usage_error(path, flag, value):
    done = CliRunner().invoke(cli, [*path, f"{flag}={value}"])
    assert done.exit_code == 2, done.output
    assert f"Invalid value for '{flag}'" in done.output and "range" in done.output
