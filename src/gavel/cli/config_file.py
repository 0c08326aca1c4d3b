"""``--config run.toml`` (or ``.yaml``/``.yml``): a command's flags from a file.

Keys are the flags' long names, with dashes or underscores (``max-tokens = 256``,
``benchmark = "detailverify"``, the chosen benchmark's own options too); a repeated flag takes
a list. The file's values become click's ``default_map``, so a flag given on the command line
wins and click records where each value came from (``ctx.get_parameter_source``). The file is
checked before anything runs: an unknown key, another benchmark's option or a value of the
wrong type is one error naming the key and the file.

The resolved configuration (every parameter's final value and its source: default, config or
command line) is kept for the run (:func:`resolved`): generate and score write it into their
manifests, and ``--dry-run`` prints it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from gavel.errors import ConfigError
from gavel.setting_checks import plain

_RESOLVED = "gavel.config.resolved"
_FILE = "gavel.config.file"
SUFFIXES = (".toml", ".yaml", ".yml")


def config_option(command):
    """The ``--config FILE`` flag (read by :class:`~gavel.cli.benchmark_flags.BenchmarkCommand`
    before the other flags are parsed; the command body never sees it)."""
    return click.option(
        "--config",
        type=click.Path(path_type=Path),
        expose_value=False,
        help="Flags from a TOML or YAML file (keys: flag names, e.g. max-tokens = 256; "
        "lists for repeated flags); flags given here win. The resolved settings go into the "
        "manifest.",
    )(command)


def config_path(args: Sequence[str]) -> Path | None:
    """The ``--config`` value among ``args`` (the last one given)."""
    path = None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--config" and i + 1 < len(args):
            path = args[i + 1]
        elif arg.startswith("--config="):
            path = arg.partition("=")[2]
    return None if path is None else Path(path)


#: Nodes a YAML config may expand to, aliases counted each time they are used: a flag file
#: has a few dozen; a "billion laughs" file of 400 bytes has billions.
MAX_YAML_NODES = 10_000


def read_config(path: Path) -> dict[str, Any]:
    """The file's keys (normalized to dashes) and values; an unreadable file is one error.

    Only a regular file of at most :data:`~gavel.io.reading.CONFIG_BYTES` is read (a FIFO would
    wait forever, ``/dev/zero`` fill memory); nesting too deep for the parser, integers too long
    to convert, YAML aliases expanding beyond :data:`MAX_YAML_NODES`, and strings no flag can
    take (a lone surrogate, a NUL character) are refused naming the file.
    """
    from gavel.io.reading import CONFIG_BYTES, read_small

    if path.suffix.lower() not in SUFFIXES:
        raise ConfigError(f"{path}: a config file is .toml, .yaml or .yml")
    try:
        text = read_small(path, CONFIG_BYTES, "a config file").decode("utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the config file: {error}") from None
    try:
        data = (
            _parse_toml(path, text) if path.suffix.lower() == ".toml" else _parse_yaml(path, text)
        )
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply") from None
    except ValueError as error:  # tomllib and PyYAML convert integers with int()
        if "integer string conversion" not in str(error):
            raise
        raise ConfigError(f"{path}: a number with too many digits") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file holds flag = value pairs at its top level")
    keys: dict[str, Any] = {}
    for key, value in data.items():
        name = str(key).replace("_", "-")
        if name in keys:
            raise ConfigError(f"{path}: key {key!r} is given twice (dashes and underscores)")
        _check_text(path, name, key)
        _check_text(path, name, value)
        keys[name] = value
    return keys


def _parse_toml(path: Path, text: str) -> Any:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None


def _parse_yaml(path: Path, text: str) -> Any:
    """PyYAML's safe loader in two steps: the node graph is composed (aliases are shared
    nodes there, so this is small), counted with each alias expanded, and only then turned into
    values."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return {}
        _count_nodes(path, node, [0])
        return loader.construct_document(node)
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from None
    finally:
        loader.dispose()


def _count_nodes(path: Path, node: Any, seen: list[int]) -> None:
    import yaml

    seen[0] += 1
    if seen[0] > MAX_YAML_NODES:
        raise ConfigError(
            f"{path}: expands to more than {MAX_YAML_NODES} values (aliases used over and "
            "over?); a config file is a few flags"
        )
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _count_nodes(path, item, seen)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _count_nodes(path, key, seen)
            _count_nodes(path, value, seen)


def _check_text(path: Path, key: str, value: Any) -> None:
    """Refuse a string no flag can take: a lone surrogate cannot be encoded, and a NUL ends a
    path or a URL early at the operating system."""
    from gavel.io.jsonl import surrogate_field

    if surrogate_field(value) is not None:
        raise ConfigError(f"{path}: key {key!r} holds a lone surrogate (not Unicode text)")
    if _has_nul(value):
        raise ConfigError(f"{path}: key {key!r} holds a NUL character")


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\0" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


def flag_names(param: click.Parameter) -> list[str]:
    """The config keys of a parameter: its long flags without the dashes."""
    return [o[2:] for o in param.opts if o.startswith("--")]


def _expected(param: click.Parameter) -> tuple[tuple[type, ...], str]:
    """The TOML/YAML types a parameter's value may have, and how to say so."""
    kind = param.type
    if getattr(param, "is_flag", False) and not getattr(param, "count", False):
        return (bool,), "true or false"
    if isinstance(kind, click.types.IntParamType):
        return (int,), "a whole number"
    if isinstance(kind, click.types.FloatParamType):
        return (int, float), "a number"
    if isinstance(kind, click.Choice):
        return (str,), "one of " + ", ".join(map(repr, kind.choices))
    return (str,), "text"


def _checked(param: click.Parameter, key: str, value: Any, path: Path, ctx: click.Context):
    """The value as click's default_map takes it, or an error naming the key and the file."""
    types, expected = _expected(param)
    multiple = getattr(param, "multiple", False)
    items = value if multiple and isinstance(value, list) else [value]
    for item in items:
        if (isinstance(item, bool) and bool not in types) or not isinstance(item, types):
            what = f"a list of {expected}" if multiple else expected
            if multiple:
                what += f" (or {expected})"
            raise ConfigError(
                f"{path}: key {key!r} must be {what}, not {type(item).__name__} {item!r}"
            )
    converted = list(items) if multiple else items[0]
    try:
        param.type_cast_value(ctx, converted)
    except click.BadParameter as error:
        raise ConfigError(f"{path}: key {key!r}: {error.message}") from None
    return converted


def apply_config(ctx: click.Context, command: click.Command, path: Path,
                 values: dict[str, Any], foreign) -> None:  # fmt: skip
    """Make ``values`` (read from ``path``) the command's defaults; ``foreign(flag)`` names
    the benchmarks that own a flag this run's benchmark does not have (or none)."""
    by_key = {
        key: param
        for param in command.get_params(ctx)
        if isinstance(param, click.Option) and param.name not in ("help", "config")
        for key in flag_names(param)
    }
    defaults: dict[str, Any] = {}
    for key, value in values.items():
        param = by_key.get(key)
        if param is None:
            owners = foreign(f"--{key}")
            if owners:
                raise ConfigError(
                    f"{path}: key {key!r} is a {' and '.join(owners)} option; this run's "
                    f"benchmark is {ctx.meta.get('gavel.benchmark')}"
                )
            raise ConfigError(f"{path}: unknown key {key!r} (not a flag of gavel {ctx.info_name})")
        defaults[param.name] = _checked(param, key, value, path, ctx)
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    ctx.meta[_FILE] = path


_SOURCES = {
    click.core.ParameterSource.COMMANDLINE: "command line",
    click.core.ParameterSource.ENVIRONMENT: "environment",
    click.core.ParameterSource.DEFAULT_MAP: "config",
    click.core.ParameterSource.DEFAULT: "default",
    click.core.ParameterSource.PROMPT: "prompt",
}


def record_resolved(ctx: click.Context, command: click.Command) -> None:
    """Keep every parameter's final value and source for the run (the outermost command's:
    ``gavel run`` records its own, and the generate and score it calls reuse it)."""
    if _RESOLVED in ctx.meta:
        return
    resolved: dict[str, dict[str, Any]] = {}
    path = ctx.meta.get(_FILE)
    if path is not None:
        resolved["config"] = {"value": str(path), "from": "command line"}
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.name not in ctx.params:
            continue
        source = ctx.get_parameter_source(param.name)
        name = (flag_names(param) or [str(param.name)])[0]
        resolved[name] = {
            "value": plain(ctx.params[param.name]),
            "from": _SOURCES.get(source, "default") if source is not None else "default",
        }
    from gavel.manifest import redact_userinfo

    ctx.meta[_RESOLVED] = redact_userinfo(resolved)  # no password of a URL is recorded


def resolved() -> dict[str, dict[str, Any]] | None:
    """The resolved configuration of the command running now (None outside one)."""
    ctx = click.get_current_context(silent=True)
    return None if ctx is None else ctx.meta.get(_RESOLVED)


def recorded() -> dict[str, Any]:
    """What a manifest's settings take: ``{"configuration": ...}``, or nothing when the
    command was not started from the command line (``gavel demo``, a Python caller)."""
    configuration = resolved()
    return {} if configuration is None else {"configuration": configuration}
