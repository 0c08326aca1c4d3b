"""``gavel judge-calibrate``: fit the offline judge's similarity-to-score mapping.

The shipped ``src/gavel/judge/offline_calibration.json`` is this command's output with its
defaults (``--out`` pointing there); docs/judge-offline.md explains the procedure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from gavel.cli.options import seed_type
from gavel.synth.scenes import DIFFICULTIES


def _number(value: Any, scale: float = 1.0, digits: int = 3) -> str:
    return "-" if value is None else f"{value * scale:.{digits}f}"


def summary_table(result: dict[str, Any]) -> str:
    """The agreement numbers as plain text (fit, held-out, naive baseline, per column)."""
    agreement = result["agreement"]
    rows = [
        ("fit, all", agreement["fit"]["all"]),
        ("fit, similarity-decided", agreement["fit"]["similarity_decided"]),
        ("held-out, all", agreement["heldout"]["all"]),
        ("held-out, similarity-decided", agreement["heldout"]["similarity_decided"]),
        ("naive evenly spaced, held-out, all", agreement["naive_evenly_spaced"]["heldout"]["all"]),
    ]
    rows += [
        (f"held-out, {column}", numbers)
        for column, numbers in agreement["heldout"]["by_column"].items()
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"{'':{width}}  {'n':>5}  {'exact %':>7}  {'QWK':>6}  {'Spearman':>8}"]
    for name, numbers in rows:
        lines.append(
            f"{name:{width}}  {numbers['n']:>5}  {_number(numbers['exact'], digits=1):>7}  "
            f"{_number(numbers['qwk']):>6}  {_number(numbers['spearman']):>8}"
        )
    thresholds = result["thresholds"]
    lines.append("")
    for rubric, values in thresholds.items():
        lines.append(f"thresholds ({rubric}): " + ", ".join(f"{v:.4f}" for v in values))
    return "\n".join(lines)


@click.command("judge-calibrate")
@click.option(
    "--n",
    "count",
    type=click.IntRange(min=16),
    default=200,
    show_default=True,
    help="Synthetic samples in the fit set and in the held-out set (about 11 graded "
    "predictions each).",
)
@click.option("--seed", type=seed_type(), default=0, show_default=True, help="Seed of the fit set.")
@click.option(
    "--heldout-seed",
    type=seed_type(),
    default=1,
    show_default=True,
    help="Seed of the held-out set.",
)
@click.option(
    "--difficulty",
    type=click.Choice(list(DIFFICULTIES)),
    default="medium",
    show_default=True,
    help="Difficulty of the synthetic scenes the captions come from.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the calibration JSON here [default: only print the summary]; the offline "
    "judge reads src/gavel/judge/offline_calibration.json.",
)
def judge_calibrate(
    count: int, seed: int, heldout_seed: int, difficulty: str, out: Path | None
) -> None:
    """Fit the offline (proxy) judge's thresholds against the rule-based reference.

    \b
    Graded predictions (correct, reworded, truth only, claim only, wrong detail, vague,
    verdict only, wrong verdict, unclear verdict; and clean-sample counterparts) are built
    from synthetic samples of --seed, scored by the rule-based reference, and the four
    similarity thresholds per rubric are chosen to maximise quadratic-weighted kappa.
    Agreement is then measured on a held-out set from --heldout-seed. Same arguments, same
    file.
    """
    from gavel.judge.calibration import calibrate
    from gavel.judge.embedding import JudgeUnavailable

    if seed == heldout_seed:
        raise click.BadParameter("must differ from --seed", param_hint="--heldout-seed")
    try:
        result = calibrate(count, seed, heldout_seed, difficulty, progress=True)
    except JudgeUnavailable as error:
        raise click.ClickException(str(error)) from None
    click.echo(summary_table(result))
    if out is not None:
        from gavel.io.files import atomic_write_bytes

        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(out, (json.dumps(result, indent=1) + "\n").encode())
        click.echo(f"wrote {out}")
