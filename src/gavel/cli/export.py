"""``gavel export``: gavel's benchmarks as task folders of other evaluation frameworks."""

from __future__ import annotations

from pathlib import Path

import click

from gavel.api.tasks import BENCHMARKS, TaskOptions, box_formats
from gavel.cli.options import data_path, folder_path, fps_type


@click.group()
def export() -> None:
    """Write gavel's benchmarks as task folders of other evaluation frameworks."""


@export.command("lmms-eval")
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.option("--benchmark", type=click.Choice(BENCHMARKS), default="gavel", show_default=True)
@click.option(
    "--data",
    "data_file",
    type=data_path(),
    required=True,
    help="Gold data, as for gavel score (GAVEL or DetailVerifyBench JSONL, the VideoHallucer "
    "folder or one category's JSON file; Parquet data, or hf:OWNER/NAME[@REVISION][:SPLIT]).",
)
@click.option(
    "--image-root",
    type=folder_path(exists=True, file_okay=False),
    default=None,
    help="Folder the image (VideoHallucer: video) paths are relative to [default: as gavel "
    "generate].",
)
@click.option(
    "--box-format",
    type=click.Choice(box_formats()),
    default="pixel",
    show_default=True,
    help="GAVEL: the box convention the prompt asks for and the scorer reads, for models "
    "lmms-eval does not tie to a family (openai, vllm, ...); qwen2_5_vl, qwen3_vl, "
    "internvl_hf and gemini get their preset's (the YAML's lmms_eval_specific_kwargs).",
)
@click.option("--thinking", is_flag=True, help="DetailVerifyBench: the thinking-mode prompt.")
@click.option(
    "--answer-rule",
    type=click.Choice(["official", "strict"]),
    default="official",
    show_default=True,
    help="VideoHallucer: how answers are read (as gavel score).",
)
@click.option(
    "--frames",
    type=click.IntRange(min=1),
    default=None,
    help="VideoHallucer: frames given per video, spread evenly [default: 8].",
)
@click.option(
    "--fps",
    type=fps_type(),
    default=None,
    help="VideoHallucer: instead of --frames, one frame every 1/F seconds.",
)
@click.option(
    "--max-frames",
    type=click.IntRange(min=1),
    default=None,
    help="With --fps: at most M frames per video [default: 32].",
)
@click.option(
    "--hub-dataset",
    "hub_dataset",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[OWNER/NAME[@REVISION]]",
    help="Name the Hub dataset in the YAML, as lmms-eval's own tasks do (dataset_path: "
    "OWNER/NAME at the commit read): lmms-eval loads its rows with datasets.load_dataset. "
    "Alone with hf: data; with a Parquet folder (gavel data convert), the repository it is "
    "pushed to. Default: documents beside the YAML (docs.jsonl).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Write OUT/BENCHMARK/'s task files even over files gavel export did not write.",
)
def lmms_eval(out: Path, benchmark: str, data_file: Path, image_root: Path | None,
              box_format: str, thinking: bool, answer_rule: str, frames: int | None,
              fps: float | None, max_frames: int | None, hub_dataset: str | None,
              force: bool) -> None:  # fmt: skip
    """Write OUT/BENCHMARK/ (YAML, utils.py, docs.jsonl): an lmms-eval task that asks gavel's
    prompts and scores with gavel's scorer.

    \b
    Run it with:  lmms-eval --include_path OUT --tasks gavel_BENCHMARK --model ...
    Export the other benchmarks into the same OUT to run them together. A BENCHMARK folder
    holding files gavel did not write (or changed since) is refused unless --force.
    """
    from gavel.integrations.lmms_eval_task import export_task, task_name

    if max_frames is not None and fps is None:
        raise click.UsageError("--max-frames caps the --fps sampling: give --fps too")
    if frames is not None and fps is not None:
        raise click.UsageError("give --frames (a count) or --fps (a rate), not both")
    options = TaskOptions(
        image_root=str(image_root) if image_root else None, box_format=box_format,
        thinking=thinking, answer_rule=answer_rule,
    )  # fmt: skip
    folder = export_task(
        out,
        benchmark,
        data_file,
        options,
        frames=frames,
        fps=fps,
        max_frames=max_frames,
        force=force,
        hub_dataset=hub_dataset,
    )
    click.echo(
        f"wrote {folder}; run: lmms-eval --include_path {out} --tasks {task_name(benchmark)}",
        err=True,
    )
