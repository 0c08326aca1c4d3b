"""``gavel judge-calibrate``: fit the offline judge's similarity-to-score mapping.

The shipped ``src/gavel/judge/offline_calibration.json`` is this command's output with its
defaults (``--out`` pointing there); docs/judge-offline.md explains the procedure.
"""

from __future__ import annotations

from pathlib import Path

import click

from gavel.api.judges import DIFFICULTIES, JudgeUnavailable, calibrate_judge
from gavel.cli.options import seed_type


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
    if seed == heldout_seed:
        raise click.BadParameter("must differ from --seed", param_hint="--heldout-seed")
    try:
        calibration = calibrate_judge(
            count, seed=seed, heldout_seed=heldout_seed, difficulty=difficulty, progress=True
        )
    except JudgeUnavailable as error:
        raise click.ClickException(str(error)) from None
    click.echo(calibration.summary())
    if out is not None:
        calibration.save(out)
        click.echo(f"wrote {out}")
