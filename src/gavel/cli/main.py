"""Entry point: assembles the subcommands and turns user errors into clear messages."""

from __future__ import annotations

import logging
import sys

import click

from gavel import __version__
from gavel.cli.failures import report_failure
from gavel.cli.lazy import LazyCommand, LazyGroup
from gavel.errors import GavelError

#: Every subcommand, imported only when it runs (so ``gavel --help`` imports none of them), with
#: the summary ``gavel --help`` shows; tests/cli/test_main.py keeps the summaries true.
COMMANDS = {
    "annotate": LazyCommand(
        "gavel.cli.annotate:annotate",
        "Annotate candidate pairs in three stages: annotator, reviewer, spot checker.",
    ),
    "batch": LazyCommand(
        "gavel.cli.batch:batch",
        "The batches of a --batch run: their status on the server, or cancel them.",
    ),
    "compare": LazyCommand(
        "gavel.cli.compare:compare",
        "Paired bootstrap (every metric) and McNemar's exact test (right/wrong metrics).",
    ),
    "curate": LazyCommand(
        "gavel.cli.curate:curate", "Make candidate pairs for annotation (docs/curate.md)."
    ),
    "data": LazyCommand("gavel.cli.data:data", "Check, describe and split data files."),
    "demo": LazyCommand(
        "gavel.cli.demo:demo",
        "Run gavel end to end, offline, in well under a minute, and print three tables.",
    ),
    "export": LazyCommand(
        "gavel.cli.export:export",
        "Write gavel's benchmarks as task folders of other evaluation frameworks.",
    ),
    "generate": LazyCommand(
        "gavel.cli.generate:generate",
        "Ask a model about every sample; each answer is saved verbatim as soon as it arrives.",
    ),
    "judge-agreement": LazyCommand(
        "gavel.cli.judge_agreement:judge_agreement",
        "Agreement between judges' per-sample scores: exact %, weighted kappa, Spearman.",
    ),
    "judge-calibrate": LazyCommand(
        "gavel.cli.judge_calibrate:judge_calibrate",
        "Fit the offline (proxy) judge's thresholds against the rule-based reference.",
    ),
    "list": LazyCommand(
        "gavel.cli.list:list_registered",
        "What is registered: benchmarks, models and judges, built-in or from plugins, and the "
        "model families' presets and box conventions.",
    ),
    "parse": LazyCommand(
        "gavel.cli.parse:parse",
        "Read one model reply as gavel reads it and print the boxes in pixels.",
    ),
    "report": LazyCommand(
        "gavel.cli.report:report",
        "Tables, plots and a filterable sample gallery for one or more runs (results.json "
        "files, run folders, or folders holding run folders; any of the three benchmarks). "
        "The page opens from disk with no network.",
    ),
    "run": LazyCommand(
        "gavel.cli.run:run",
        "Generate predictions, then score them, into one run folder.",
        fixed=True,
    ),
    "score": LazyCommand(
        "gavel.cli.score:score",
        "Score saved predictions against gold data; the model is never needed again.",
    ),
    "synth": LazyCommand(
        "gavel.cli.synth:synth",
        "Procedural data in each benchmark's own format, with exact ground truth.",
    ),
    "train": LazyCommand(
        "gavel.cli.train:train",
        "Train the GAVEL supervised baseline (coordinate tokens, paper appendix A.2).",
    ),
}


class _RedactingFormatter(logging.Formatter):
    """Log lines without the password of any URL's userinfo (a base URL may carry one)."""

    def format(self, record: logging.LogRecord) -> str:
        from gavel.manifest import redact_userinfo

        return redact_userinfo(super().format(record))


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="gavel")
@click.option(
    "-v",
    "--verbose",
    count=True,
    help="Say more on stderr: -v every retry of a request and why, -vv debugging detail.",
)
def cli(verbose: int) -> None:
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
    if verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_RedactingFormatter("%(levelname)s %(name)s: %(message)s"))
        logger = logging.getLogger("gavel")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO if verbose == 1 else logging.DEBUG)


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
        from gavel.manifest import redact_userinfo

        # click types the message Final; its words are rewritten here, before it is shown.
        error.message = redact_userinfo(error.message)  # type: ignore[misc]  # a flag's value may be a URL
        error.show()
        sys.exit(error.exit_code)
    except GavelError as error:
        from gavel.manifest import redact_userinfo

        click.echo(f"error: {redact_userinfo(str(error))}", err=True)
        sys.exit(getattr(error, "exit_code", 2))  # 130 for an interrupted run
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as error:  # what the OS says (paths named), or a bug (one line; see failures)
        sys.exit(report_failure(error))
