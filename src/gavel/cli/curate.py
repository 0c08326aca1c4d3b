"""``gavel curate captions|import|score``: candidate image–sentence pairs and their filtering."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

import click

from gavel.api import curation
from gavel.api.curation import ModelSettings, describe_specs
from gavel.cli.options import FiniteFloat, concurrency_type, folder_path


@click.group()
def curate() -> None:
    """Make candidate pairs for annotation (docs/curate.md).

    \b
    gavel curate captions --images photos/ --model openai:MODEL --out pairs.jsonl
    gavel curate import --images generated/ --prompts prompts.jsonl --out pairs.jsonl
    gavel curate score --pairs pairs.jsonl --images photos/ --model openai:gpt-5-mini \\
        --out scored.jsonl --below 4
    """


#: The shared model flags by the name of the setting they give (``--no-progress`` aside).
_MODEL_FLAGS = [f.name for f in fields(ModelSettings) if f.name != "progress"]


def _model_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options every model-driving curate command shares (as in `gavel generate`), given
    to the command as one ``model`` (the settings the curation functions take)."""
    options = [
        click.option("--model", "spec", required=True, help=f"Model: {describe_specs()}."),
        click.option(
            "--base-url",
            "base_urls",
            multiple=True,
            help="OpenAI-compatible endpoint; repeat to spread requests.",
        ),
        click.option(
            "--api-key-env",
            default=None,
            help="Environment variable holding the API key [default: OPENAI_API_KEY].",
        ),
        click.option("--max-tokens", type=click.IntRange(min=1), default=None),
        click.option("--temperature", type=FiniteFloat(min=0), default=None),
        click.option(
            "--concurrency",
            type=concurrency_type(),
            default=None,
            help="Requests in flight [default: 16 for remote models, 1 for local ones].",
        ),
        click.option(
            "--cache",
            type=click.Path(path_type=Path),
            default=None,
            help="SQLite answer cache for remote models [default: ~/.cache/gavel/answers.sqlite].",
        ),
        click.option("--no-cache", is_flag=True, help="Do not read or write the answer cache."),
        click.option(
            "--replies",
            type=click.Path(path_type=Path),
            default=None,
            help="The raw answers (resumable) [default: beside --out, OUT.replies.jsonl].",
        ),
        click.option(
            "--prompt-file",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            default=None,
            help="Your own prompt template instead of the shipped one.",
        ),
        click.option("--no-progress", is_flag=True, help="Do not show the progress bar."),
    ]

    @functools.wraps(command)
    def with_model(**values: Any) -> Any:
        progress = not values.pop("no_progress")
        settings = {name: values.pop(name) for name in _MODEL_FLAGS}
        return command(model=ModelSettings(**settings, progress=progress), **values)

    for option in reversed(options):
        with_model = option(with_model)
    return with_model


@curate.command()
@click.option(
    "--images",
    type=folder_path(exists=True, file_okay=False),
    required=True,
    help="Folder of images (searched recursively).",
)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Pairs JSONL to write.")
@click.option(
    "--min-words",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Shorter sentences are dropped.",
)
@_model_options
def captions(
    images: Path,
    out: Path,
    min_words: int,
    model: ModelSettings,
) -> None:
    """Image-to-text: a model describes each image; each sentence becomes a candidate pair.

    Answers are kept in OUT.replies.jsonl as they arrive, so rerunning the command after a crash
    asks only for the images not described yet; the pairs file is rebuilt from all answers.
    """
    result = curation.captions(images, out, model, min_words=min_words)
    failed = f"; {result.failed} image(s) failed (rerun to ask again)" if result.failed else ""
    click.echo(f"{out}: {result.pairs} pairs from {result.images} images{failed}", err=True)


@curate.command("import")
@click.option(
    "--images",
    type=folder_path(exists=True, file_okay=False),
    required=True,
    help="Folder the generated images are in.",
)
@click.option(
    "--prompts",
    type=click.Path(path_type=Path),
    required=True,
    help="JSONL ({image, prompt, source?}) or CSV/TSV with image and prompt columns.",
)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Pairs JSONL to write.")
@click.option("--source", default=None, help="The generator's name, where a row gives none.")
@click.option(
    "--whole", is_flag=True, help="Keep each prompt as one pair instead of one per sentence."
)
@click.option("--min-words", type=click.IntRange(min=1), default=3, show_default=True)
def import_(
    images: Path, prompts: Path, out: Path, source: str | None, whole: bool, min_words: int
) -> None:
    """Text-to-image: generated images with the prompts that produced them, as candidate pairs."""
    result = curation.import_prompts(
        images, prompts, out, source=source, whole=whole, min_words=min_words
    )
    click.echo(f"{out}: {result.pairs} pairs from {result.prompts} prompts", err=True)


@curate.command()
@click.option(
    "--pairs",
    "pairs_file",
    type=click.Path(path_type=Path),
    required=True,
    help="Pairs JSONL (from captions or import).",
)
@click.option(
    "--images",
    type=folder_path(exists=True, file_okay=False),
    default=None,
    help="Folder the pairs' image paths are relative to [default: the pairs file's folder].",
)
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="Scored pairs JSONL to write."
)
@click.option(
    "--below",
    type=FiniteFloat(),
    default=None,
    help="Keep only pairs rated below this (1-5); e.g. 4 keeps ratings 1-3.",
)
@click.option(
    "--invalid-retries",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Re-asks after a reply without a valid rating.",
)
@_model_options
def score(
    pairs_file: Path,
    images: Path | None,
    out: Path,
    below: float | None,
    invalid_retries: int,
    model: ModelSettings,
) -> None:
    """Rate each pair's image–text alignment (1-5) with a VLM; keep the low ones for people.

    The prompt is prompts/alignment_v1.txt (docs/curate.md). Each line gets `alignment`,
    `alignment_reason` and `alignment_model`; a pair that could not be rated gets
    `alignment_error` (and is left out by --below). Same concurrency, cache and resume as
    `gavel generate`.
    """
    result = curation.score_pairs(
        pairs_file, out, model, images=images, below=below, invalid_retries=invalid_retries
    )
    kept = f", {result.kept} kept (rated below {below:g})" if below is not None else ""
    failed = f", {result.failed} not rated (rerun to ask again)" if result.failed else ""
    click.echo(f"{out}: {result.rated} of {result.pairs} pairs rated{kept}{failed}", err=True)
