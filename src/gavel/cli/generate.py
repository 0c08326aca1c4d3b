"""``gavel generate``: run a model over a benchmark and write (or resume) a predictions file."""

from __future__ import annotations

from pathlib import Path

import click
import msgspec

from gavel.benchmarks.gavel import NAME, build_requests
from gavel.benchmarks.gavel_data import load_samples
from gavel.io.files import atomic_write_bytes
from gavel.manifest import build_manifest
from gavel.models.registry import describe_specs, load_model
from gavel.prompts import load_template
from gavel.runner.local import run_model


def run_manifest_path(predictions: Path) -> Path:
    """``pred.jsonl`` -> ``pred.manifest.json``: how the predictions were made."""
    return predictions.with_name(predictions.stem + ".manifest.json")


@click.command()
@click.option("--benchmark", type=click.Choice([NAME]), default=NAME, show_default=True)
@click.option(
    "--data",
    "data_file",
    type=click.Path(path_type=Path),
    required=True,
    help="Benchmark data (GAVEL JSONL).",
)
@click.option("--model", "spec", required=True, help=f"Model to run: {describe_specs()}.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Predictions JSONL. An existing file is resumed: answered ids are skipped.",
)
@click.option(
    "--image-root",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder the image paths are relative to [default: the data file's folder].",
)
@click.option(
    "--prompt",
    "template_name",
    default="gavel_v1",
    show_default=True,
    help="Prompt template shipped with gavel.",
)
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
def generate(
    benchmark: str,
    data_file: Path,
    spec: str,
    out: Path,
    image_root: Path | None,
    template_name: str,
    no_progress: bool,
) -> None:
    """Ask a model about every sample; each answer is saved verbatim as soon as it arrives.

    Rerunning the same command after a crash continues where it stopped: answered samples are
    not sent again and no line is duplicated. Score the file with `gavel score`.
    """
    samples, loader = load_samples(data_file, image_root)
    model = load_model(spec)
    template = load_template(template_name)
    root = image_root or data_file.parent
    requests = build_requests(samples, root, template, model.capabilities.box_format)
    manifest = build_manifest(
        benchmark,
        data_file=str(data_file),
        data_sha256=loader.sha256,
        predictions_file=str(out),
        model=model.name,
        adapter={"spec": spec, **model.settings(), "box_format": model.capabilities.box_format},
        prompt_sha256=template.sha256,
        settings={"prompt_template": template.name},
    )
    summary = run_model(model, requests, out, total=len(samples), progress=not no_progress)
    atomic_write_bytes(run_manifest_path(out), msgspec.json.format(msgspec.json.encode(manifest)))
    click.echo(
        f"{out}: {summary.answered} answered, {summary.skipped} already there, "
        f"{summary.errors} errors, {summary.seconds:.1f} s",
        err=True,
    )
