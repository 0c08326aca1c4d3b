"""A generation from start to end: planned, run by its executor, its manifest written, its
outcome judged (what ``gavel generate`` and ``gavel.generate`` do)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.errors import GavelError
from gavel.execution.executor import run
from gavel.execution.notes import note
from gavel.execution.plan import RunPlan, plan
from gavel.execution.settings import GenerateSettings, checked


class SamplesFailed(GavelError):
    """The run finished, but some samples got an error line instead of an answer (exit 2)."""


@dataclass(frozen=True)
class Outcome:
    """What a generation did: its plan, and the executor's summary (None when nothing was
    asked: a dry run, whose estimate is ``plan.estimate``, or a requests file only)."""

    plan: RunPlan
    summary: Any = None


def generate(settings: GenerateSettings, configuration: Mapping[str, Any] | None = None, *,
             spent_elsewhere: float = 0.0) -> Outcome:  # fmt: skip
    """Plan the generation ``settings`` ask for and run it (see :func:`plan` for the other
    arguments). The manifest is written once the executor finished; then a run in which
    samples failed raises :class:`SamplesFailed` (every request failing, a batch that
    stopped or a spent budget: :class:`~gavel.errors.GavelError`).

    The predictions file is locked from before the plan until the manifest is written
    (:mod:`gavel.io.output_lock`): another process writing it is refused at once
    (:class:`~gavel.io.output_lock.OutputBusy`), whichever executor either runs."""
    from gavel.io.output_lock import exclusive

    given = checked(settings)
    if given.dry_run:  # nothing is written: no lock to hold
        return Outcome(plan(settings, configuration, spent_elsewhere=spent_elsewhere))
    assert given.out is not None  # checked
    with exclusive(given.out):  # one writer of the predictions (before the model is loaded)
        return _generate(plan(settings, configuration, spent_elsewhere=spent_elsewhere))


def _generate(planned: RunPlan) -> Outcome:
    import msgspec

    from gavel.execution.pricing import stop_if_spent
    from gavel.io.files import atomic_write_bytes
    from gavel.manifest import run_manifest_path

    summary = run(planned)
    if summary is None:
        return Outcome(planned)
    out, manifest = planned.out, planned.manifest
    served = getattr(planned.model, "served", None)
    if callable(served) and served():  # the model that answered (carried into results.json)
        manifest.adapter["served_model"] = served()
    atomic_write_bytes(run_manifest_path(out), msgspec.json.format(msgspec.json.encode(manifest)))
    note(f"{out}: {summary.describe()}")
    judge_the_outcome(summary, out)
    if getattr(summary, "stopped", None):  # a batch run that stopped (cancelled, budget)
        raise GavelError(summary.stopped)
    stop_if_spent(planned.budget, out)
    if summary.errors:
        raise SamplesFailed(
            f"{summary.errors} of {summary.answered} samples asked failed; their error lines, "
            f"with the server's words, are in {out} (scored as model_error). Rerun the same "
            "command to ask only those again"
        )
    return Outcome(planned, summary)


def judge_the_outcome(summary: Any, out: Path) -> None:
    """Show the failed samples by cause; fail a run in which every request sent failed (a
    run in which some did exits 2 too, once its manifest is written: :class:`SamplesFailed`).

    The failure budget stops a long run that keeps failing, but a short one (fewer requests
    than the budget looks at) could fail on every sample and still end "successfully". The
    error lines stay in ``out``: a rerun asks those samples again.
    """
    causes = getattr(summary, "describe_failures", None)
    if callable(causes) and causes():
        note(causes())
    answers = summary.answered - summary.errors  # ``answered`` counts error lines too
    if summary.errors and answers == 0:
        raise GavelError(
            f"no request was answered: all {summary.errors} sent failed (their errors are in "
            f"{out}; rerun the same command to ask them again)"
        )
