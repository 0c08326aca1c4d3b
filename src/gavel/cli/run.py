"""``gavel run``: generate then score, into one run folder."""

from __future__ import annotations

from pathlib import Path

import click

from gavel.cli.generate import generate
from gavel.cli.score import judge_for, score

#: Options of ``gavel score`` that ``gavel run`` passes through (besides data and benchmark).
SCORE_OPTIONS = (
    "box_format",
    "match",
    "dvb_mode",
    "empty_groups",
    "answer_rule",
    "style",
    "name",
    "resamples",
    "seed",
    "judge_spec",
    "judge_base_urls",
    "judge_api_key_env",
    "judge_concurrency",
    "judge_max_tokens",
    "judge_temperature",
    "judge_extra_body",
    "judge_retries",
    "judge_cache",
    "no_judge_cache",
    "judge_price",
    "judge_timeout",
    "judge_rpm",
    "judge_tpm",
)


def _options(command: click.Command, names: set[str]) -> list[click.Parameter]:
    return [p for p in command.params if p.name in names]


def _run(**kwargs) -> None:
    """Ask the model (as `gavel generate`), then score (as `gavel score`).

    Everything goes to --out DIR: predictions.jsonl, predictions.manifest.json, results.json
    and results.scores.jsonl. Rerunning resumes the generation and scores again.
    """
    ctx = click.get_current_context()
    out: Path = kwargs.pop("out")
    scoring = {name: kwargs.pop(name) for name in SCORE_OPTIONS}
    predictions = out / "predictions.jsonl"
    # Judge flags are checked (and the judge built) before any answer is paid for.
    judge_for(kwargs["benchmark"], out / "results.json",
              **{k: v for k, v in scoring.items() if k.startswith(("judge_", "no_judge_"))})  # fmt: skip
    ctx.invoke(generate, out=predictions, **kwargs)
    ctx.invoke(
        score,
        benchmark=kwargs["benchmark"],
        data_file=kwargs["data_file"],
        predictions=predictions,
        out=out / "results.json",
        image_root=kwargs["image_root"],
        thinking=kwargs["thinking"],
        **scoring,
    )


_generate_params = [p for p in generate.params if p.name != "out"]
_score_params = _options(score, set(SCORE_OPTIONS))
run = click.Command(
    "run",
    callback=_run,
    params=[
        *_generate_params,
        *_score_params,
        click.Option(
            ["--out"],
            type=click.Path(path_type=Path),
            required=True,
            help="Run folder: predictions, run manifest, results and per-sample scores.",
        ),
    ],
    help=_run.__doc__,
    short_help="Generate predictions, then score them, into one run folder.",
)
