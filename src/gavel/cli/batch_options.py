"""The Batch API flags of ``gavel generate``, ``gavel run`` and ``gavel score``.

Declared here, applied with one line per command (``@batch_options("generate")``,
``@batch_options("judge")``); a generation's are settings of the library
(:mod:`gavel.execution.batch_api`), the judge's are checked by
:func:`gavel.scoring.judging.judge_batch`.
Nothing heavy is imported until a batch is actually run (``gavel --help`` stays fast).
"""

from __future__ import annotations

from pathlib import Path

import click

from gavel.api.generation import bound
from gavel.cli.options import bound_type

#: Parameter names of the judge's flags (what ``gavel run`` hands to ``gavel score``).
JUDGE_BATCH_PARAMS = ("batch_judge", "batch_judge_fallback", "batch_judge_rounds",
                      "batch_judge_poll")  # fmt: skip
FALLBACK_HELP = (
    "What a batch did not answer (failed, invalid, expired): batch = ask it in a next batch "
    "round (up to the rounds), online = ask it online after the first round [default: batch]."
)


def batch_options(which: str):
    """The flags of ``which`` (``generate``: --batch and friends, also on ``gavel run``;
    ``judge``: --judge-batch and friends, on ``gavel score``)."""
    prefix, name = ("judge-batch", "batch_judge") if which == "judge" else ("batch", "batch")
    options = [
        click.option(
            f"--{prefix}",
            name,
            is_flag=True,
            help=(
                "Send the judge's requests as one OpenAI Batch (half price, up to 24 h); needs "
                "--out. Rerunning resumes it (docs/running.md#batch-apis)."
                if which == "judge"
                else "openai: send the requests as one OpenAI Batch (half price, up to 24 h), "
                "wait and merge; rerunning resumes it, never sends twice "
                "(docs/running.md#batch-apis)."
            ),
        ),
        click.option(f"--{prefix}-fallback", f"{name}_fallback",
                     type=click.Choice(["batch", "online"]), default=None, help=FALLBACK_HELP),
        click.option(f"--{prefix}-rounds", f"{name}_rounds", type=bound_type(bound("batch_rounds")),
                     default=None, help="Batch rounds at most [default: 3]."),
        click.option(f"--{prefix}-poll", f"{name}_poll", type=bound_type(bound("batch_poll")),
                     default=None, metavar="SECONDS",
                     help="Seconds between two questions about a batch's status [default: 30]."),
    ]  # fmt: skip
    if which == "generate":
        options += [
            click.option(
                "--batch-requests-only",
                type=click.Path(path_type=Path, dir_okay=False),
                default=None,
                metavar="FILE",
                help="Only write the requests not yet answered as Batch JSONL to FILE (for "
                "`vllm run-batch`), send nothing; merge its output with --from-batch-output.",
            ),
            click.option(
                "--from-batch-output",
                type=click.Path(path_type=Path, dir_okay=False),
                default=None,
                metavar="FILE",
                help="Merge the output of `vllm run-batch` (from --batch-requests-only's file, "
                "same flags) into --out, as online answers; send nothing.",
            ),
        ]

    def apply(command):
        for option in reversed(options):
            command = option(command)
        return command

    return apply
