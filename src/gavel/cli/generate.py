"""``gavel generate``: run a model over a benchmark and write (or resume) a predictions file."""

from __future__ import annotations

from pathlib import Path

import click
import msgspec

from gavel.benchmarks.registry import Options, benchmark_names, get_benchmark
from gavel.io.files import atomic_write_bytes
from gavel.manifest import build_manifest, run_manifest_path
from gavel.models.registry import describe_specs, load_model
from gavel.runner.local import run_model


@click.command()
@click.option(
    "--benchmark", type=click.Choice(benchmark_names()), default="gavel", show_default=True
)
@click.option(
    "--data",
    "data_file",
    type=click.Path(path_type=Path),
    required=True,
    help="Benchmark data (as for `gavel score`).",
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
    help="Folder the images (or, for VideoHallucer, the category folders with their "
    "videos/) are under [default: next to the data].",
)
@click.option(
    "--prompt",
    "template_name",
    default=None,
    help="GAVEL: prompt template shipped with gavel [default: gavel_v1].",
)
@click.option("--thinking", is_flag=True, help="DetailVerifyBench: the official thinking prompt.")
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
def generate(benchmark: str, data_file: Path, spec: str, out: Path, image_root: Path | None,
             template_name: str | None, thinking: bool, no_progress: bool) -> None:  # fmt: skip
    """Ask a model about every sample; each answer is saved verbatim as soon as it arrives.

    Rerunning the same command after a crash continues where it stopped: answered samples are
    not sent again and no line is duplicated. Score the file with `gavel score`.
    """
    model = load_model(spec)
    options = Options(image_root=image_root, prompt=template_name, thinking=thinking)
    prepared = get_benchmark(benchmark).prepare(data_file, model, options)
    manifest = build_manifest(
        benchmark,
        data_file=str(data_file),
        data_sha256=prepared.data_sha256,
        predictions_file=str(out),
        model=model.name,
        adapter={"spec": spec, **model.settings(), "box_format": model.capabilities.box_format},
        prompt_sha256=prepared.template.sha256,
        settings={"prompt_template": prepared.template.name, **prepared.settings},
    )
    summary = run_model(
        model, prepared.requests, out, total=prepared.total, progress=not no_progress
    )
    atomic_write_bytes(run_manifest_path(out), msgspec.json.format(msgspec.json.encode(manifest)))
    click.echo(
        f"{out}: {summary.answered} answered, {summary.skipped} already there, "
        f"{summary.errors} errors, {summary.seconds:.1f} s",
        err=True,
    )
