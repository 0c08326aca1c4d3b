"""Entry point: assembles the subcommands and turns user errors into clear messages."""

from __future__ import annotations

import sys

import click

from gavel import __version__
from gavel.cli.annotate import annotate
from gavel.cli.compare import compare
from gavel.cli.curate import curate
from gavel.cli.data import data
from gavel.cli.demo import demo
from gavel.cli.failures import report_failure
from gavel.cli.generate import generate
from gavel.cli.judge_agreement import judge_agreement
from gavel.cli.judge_calibrate import judge_calibrate
from gavel.cli.report import report
from gavel.cli.run import run
from gavel.cli.score import score
from gavel.cli.synth import synth
from gavel.cli.train import train
from gavel.errors import GavelError


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="gavel")
def cli() -> None:
    """Measure how well vision-language models find, explain and localize hallucinations.

    \b
    Typical use:
      gavel demo                                   everything offline, on built-in data
      gavel synth --n 200 --out synth/             a diagnostic set with exact gold
      gavel generate --data synth/gavel.jsonl --model scene --out pred.jsonl
      gavel score --data synth/gavel.jsonl --predictions pred.jsonl --out run/results.json
      gavel score ... --judge openai:MODEL         explanation scores (the paper's LLM judge)
      gavel report run/ --out report/              an HTML page with tables, plots, a gallery
      gavel compare a/results.json b/results.json  is A better than B on the same samples?
      gavel judge-agreement a/results.json b/results.json   do two explanation judges agree?
      gavel data validate test.jsonl               check a data file
      gavel curate captions --images photos/ --model openai:M --out pairs.jsonl   candidates
      gavel annotate serve --db project.sqlite     the three-stage annotation tool
      gavel train sft --data train.jsonl --base-model DIR --out runs/sft   the paper's baseline
    """


cli.add_command(synth)
cli.add_command(generate)
cli.add_command(score)
cli.add_command(run)
cli.add_command(report)
cli.add_command(compare)
cli.add_command(judge_agreement)
cli.add_command(judge_calibrate)
cli.add_command(data)
cli.add_command(curate)
cli.add_command(annotate)
cli.add_command(train)
cli.add_command(demo)


def main(argv: list[str] | None = None) -> None:
    """Run the command line; every failure ends in one message and a non-zero exit.

    ``argv`` defaults to the process's arguments (tests pass their own).
    """
    try:
        cli.main(argv, prog_name="gavel", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except GavelError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as error:  # what the OS says (paths named), or a bug (one line; see failures)
        sys.exit(report_failure(error))
