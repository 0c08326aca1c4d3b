"""What one scoring takes: every setting of ``gavel score``, by the name the Python API gives
it (the flag without dashes: ``--bootstrap`` is ``bootstrap``), with the command's default.

The command line builds one :class:`ScoreSettings` from its flags (and ``--config``), the
Python API from its keywords; both then score the same way (:mod:`gavel.scoring.run`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from gavel.benchmarks.spec import Benchmark
from gavel.report.tables import FORMATS
from gavel.setting_checks import (
    MAX_BOOTSTRAP,
    MAX_CONCURRENCY,
    MAX_SEED,
    Bound,
    as_items,
    as_json_text,
    as_path,
    as_text,
    check_choice,
    check_option,
    plain,
    refused,
)


@dataclass(frozen=True)
class ScoreSettings:
    """The settings of one scoring; see ``gavel score --help`` for each flag.

    Built, they are checked: a number out of its range (:data:`BOUNDS`), a word not among
    its choices (:data:`CHOICES`) is a :class:`~gavel.errors.ConfigError` naming the flag, in
    the command line's words. The benchmark's own ``options`` are checked as their flags
    (:func:`~gavel.setting_checks.check_option`); a name the benchmark lacks is refused.
    """

    #: Gold data: a benchmark's file or folder, Parquet, or ``hf:OWNER/NAME[@REV][:SPLIT]``.
    data: str | Path
    #: Predictions JSONL (one line per sample) or an inspect_ai ``.eval`` log.
    predictions: str | Path
    #: The benchmark's name (``gavel list benchmarks``).
    benchmark: str = "gavel"
    #: An inspect log of several epochs: the epoch scored (1 is the first).
    epoch: int | None = None
    #: Where results.json is written (per-sample scores beside it); None writes nothing.
    out: str | Path | None = None
    #: GAVEL: the folder image paths are relative to [default: the data file's folder].
    image_root: str | Path | None = None
    #: How the table is printed: table, markdown, latex, csv or json.
    format: str = "table"
    #: The table's row label [default: the model the predictions name].
    name: str | None = None
    #: Bootstrap resamples for the 95% intervals (0 skips them).
    bootstrap: int = 1000
    #: Seed of the bootstrap and of ``shuffle``.
    seed: int = 0
    #: Only the first N samples (VideoHallucer: pairs), or N at random with ``shuffle``.
    limit: int | None = None
    #: Only these samples (``@FILE``: one id per line).
    sample_id: tuple[str, ...] = ()
    #: With ``limit``: N samples at random, seeded by ``seed``.
    shuffle: bool = False
    #: GAVEL's explanation judge: ``openai:MODEL``, ``offline`` or a plugin's ``NAME[:ARG]``.
    judge: str | None = None
    #: The judge's endpoints [default: $OPENAI_BASE_URL, else api.openai.com].
    judge_base_url: tuple[str, ...] = ()
    #: The environment variable holding the judge's API key [default: OPENAI_API_KEY].
    judge_api_key_env: str | None = None
    #: Judge requests in flight.
    judge_concurrency: int = 16
    #: Token limit of a judge reply (0: send none).
    judge_max_tokens: int = 1024
    #: The judge's sampling temperature.
    judge_temperature: float = 0.0
    #: JSON object merged into every judge request (its text, or a dict).
    judge_extra_body: str | Mapping[str, Any] | None = None
    #: Re-asks after a judge reply without a valid score, before ``judge_error``.
    judge_retries: int = 2
    #: SQLite cache of judge replies [default: ~/.cache/gavel/answers.sqlite].
    judge_cache: str | Path | None = None
    #: Do not use the judge cache.
    no_judge_cache: bool = False
    #: Seconds one judge request may take before it is retried [default: 300].
    judge_timeout: float | None = None
    #: Judge prices ``IN,OUT`` in USD per million tokens (the ledger then records the cost).
    judge_price: str | None = None
    #: Do not ask the judge's server (``GET /models``) whether it serves the judge model.
    no_judge_model_check: bool = False
    #: Requests per minute the judge's endpoint allows.
    judge_rpm: float | None = None
    #: Tokens per minute the judge's endpoint allows.
    judge_tpm: float | None = None
    #: Send the judge's requests as one OpenAI Batch (needs ``out``).
    judge_batch: bool = False
    #: What a batch did not answer: ``batch`` (a next round) or ``online``.
    judge_batch_fallback: str | None = None
    #: Batch rounds at most [default: 3].
    judge_batch_rounds: int | None = None
    #: Seconds between two questions about a batch's status [default: 30].
    judge_batch_poll: float | None = None
    #: Print what the judge would be sent and its cost; send and write nothing.
    dry_run: bool = False
    #: How the dry run prints its report: table or json.
    dry_run_format: str = "table"
    #: A local tokenizer folder of the LLM judge, for the dry run.
    judge_tokenizer: str | Path | None = None
    #: Stop judging once the recorded usage costs this much (USD).
    max_cost: float | None = None
    #: The benchmark's own settings by their names (``gavel.benchmark(NAME).options``:
    #: GAVEL's ``match``, DetailVerifyBench's ``mode``); absent ones take their defaults.
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        defaults = {item.name: item.default for item in fields(self)}
        for name, bound in BOUNDS.items():
            value = getattr(self, name)
            if value is not None or defaults[name] is not None:  # None only where it means unset
                object.__setattr__(self, name, bound.check(flag(name), value))
        for name, choices in CHOICES.items():
            value = getattr(self, name)
            if value is not None:
                check_choice(flag(name), value, choices)
        for name in _SEVERAL:  # one text given for a repeatable setting is one item
            object.__setattr__(self, name, as_items(flag(name), getattr(self, name)))
        for name in _PATHS:  # as the flags' click.Path(path_type=Path) gives them
            value = getattr(self, name)
            if value is not None or name in _REQUIRED:
                object.__setattr__(self, name, as_path(flag(name), value))
        for name in _TEXTS:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, as_text(flag(name), value))
        if not isinstance(self.options, Mapping):
            raise refused("options", f"{self.options!r} is not a mapping of setting names.")
        object.__setattr__(self, "options", _own_options(self.benchmark, self.options))
        if self.judge_extra_body is not None:  # a dict as --judge-extra-body takes it
            body = as_json_text("--judge-extra-body", self.judge_extra_body)
            object.__setattr__(self, "judge_extra_body", body)

    def configuration(self, spec: Benchmark, given: Iterable[str] = ()) -> dict[str, Any]:
        """Every setting's value and where it came from (``python`` for those in ``given``,
        else ``default``), as the manifest records the command line's flags; the
        benchmark's own score options after the others."""
        from gavel.manifest import redact_userinfo

        chosen = set(given)
        resolved = {}
        for item in fields(self):
            if item.name != "options":
                resolved[flag(item.name)[2:]] = _entry(
                    getattr(self, item.name), item.name in chosen
                )
        for option in spec.options_for("score"):
            value = self.options.get(option.setting, option.default)
            resolved[option.flag[2:]] = _entry(value, option.setting in chosen)
        return redact_userinfo(resolved)  # no password of a URL is recorded


def _own_options(benchmark: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The benchmark's own score settings, each checked as its flag checks it (None: not
    given); a name the benchmark does not have is refused, listing those it has."""
    from gavel.benchmarks.registry import benchmark_names, get_benchmark

    check_choice("--benchmark", benchmark, benchmark_names())
    own = {option.setting: option for option in get_benchmark(benchmark).options_for("score")}
    for name in given:
        if name not in own:
            known = ", ".join(sorted(own)) or "none"
            raise refused("options", f"{name!r} is not a score setting of {benchmark} (its "
                                     f"own settings: {known}).")  # fmt: skip
    return {name: None if value is None else check_option(own[name], value)
            for name, value in given.items()}  # fmt: skip


def flag(name: str) -> str:
    """The command line's flag of a setting (``judge_base_url``: ``--judge-base-url``)."""
    return "--" + name.replace("_", "-")


def _entry(value: Any, given: bool) -> dict[str, Any]:
    return {"value": plain(value), "from": "python" if given else "default"}


#: The number settings' types and ranges (``gavel score``'s click types are made from them).
BOUNDS = {
    "epoch": Bound(int, 1),
    "bootstrap": Bound(int, 0, MAX_BOOTSTRAP),
    "seed": Bound(int, 0, MAX_SEED),
    "limit": Bound(int, 1),
    "judge_concurrency": Bound(int, 1, MAX_CONCURRENCY),
    "judge_max_tokens": Bound(int, 0),
    "judge_temperature": Bound(float, 0),
    "judge_retries": Bound(int, 0),
    "judge_timeout": Bound(float, 0, min_open=True),
    "judge_rpm": Bound(float, 0, min_open=True),
    "judge_tpm": Bound(float, 0, min_open=True),
    "judge_batch_rounds": Bound(int, 1),
    "judge_batch_poll": Bound(float, 0, min_open=True),
    "max_cost": Bound(float, 0),
}
#: The settings that take one of a few words.
CHOICES = {
    "format": FORMATS,
    "judge_batch_fallback": ("batch", "online"),
    "dry_run_format": ("table", "json"),
}
#: The settings that name a file or folder (``Path`` here).
_PATHS = ("data", "predictions", "out", "image_root", "judge_cache", "judge_tokenizer")
#: The settings given several times on the command line (tuples here).
_SEVERAL = ("sample_id", "judge_base_url")
#: The paths every scoring is given.
_REQUIRED = ("data", "predictions")
#: The settings that are texts (choices are checked as choices).
_TEXTS = ("benchmark", "name", "judge", "judge_api_key_env", "judge_price")
