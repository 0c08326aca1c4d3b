"""Several epochs of a gavel task (``inspect eval --epochs N``).

gavel's metrics score a whole run of one answer per sample, so inspect's reducers, which
reduce each sample's values, cannot give them. The tasks' own reducer, ``gavel_epochs`` (used
whenever ``--epochs`` is given without ``--epochs-reducer``), reduces each sample's values by
their mean, as inspect's default does, and keeps every epoch's answer, so that the metrics are
each epoch scored as a whole run (as ``gavel score --epoch K``), then averaged over the epochs.
Any other reducer would leave the metrics to the first epoch's answers alone: a run of several
epochs under one is refused, with a message naming the reducer that applies.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inspect_ai.scorer import Score, ScoreReducer, mean_score, score_reducer

from gavel.errors import ConfigError

NAME = "gavel_epochs"
#: Where a score's metadata keeps its epoch (set by the scorer) and, once reduced, every
#: epoch's metadata.
EPOCH_KEY = "gavel_epoch"
EPOCHS_KEY = "gavel_epochs"


@score_reducer(name=NAME)
def gavel_epochs() -> ScoreReducer:
    """The mean of each sample's values over its epochs, with every epoch's metadata kept."""
    mean = mean_score()

    def reduce(scores: list[Score]) -> Score:
        reduced = mean(scores)
        kept = [dict(score.metadata) for score in scores if score.metadata]
        first = dict(scores[0].metadata or {})
        return reduced.model_copy(update={"metadata": {**first, EPOCHS_KEY: kept}})

    return reduce


def refuse(epochs: int) -> ConfigError:
    return ConfigError(
        f"--epochs {epochs} with another --epochs-reducer: gavel's metrics score every "
        f"sample's answer of an epoch at once, which a per-sample reducer cannot give; leave "
        f"--epochs-reducer out (the tasks' reducer, {NAME}: each epoch scored as a run, then "
        f"the mean over epochs), or score one epoch of the log: gavel score --epoch K"
    )


def by_epoch(entries: Sequence[Mapping[str, Any]]) -> dict[int, list[Mapping[str, Any]]] | None:
    """The scores' metadata grouped by epoch when the tasks' reducer kept them; else None."""
    if not entries or not all(EPOCHS_KEY in entry for entry in entries):
        return None
    grouped: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for entry in entries:
        for epoch in entry[EPOCHS_KEY]:
            grouped[int(epoch.get(EPOCH_KEY, 1))].append(epoch)
    return dict(sorted(grouped.items()))


def mean_metrics(
    grouped: Mapping[int, Sequence[Mapping[str, Any]]],
    metrics: Callable[[Sequence[Mapping[str, Any]]], dict[str, float]],
) -> dict[str, float]:
    """Each epoch's metrics, then the mean of every number all epochs have, and ``epochs``."""
    runs = [metrics(entries) for entries in grouped.values()]
    names = [name for name in runs[0] if all(name in run for run in runs)] if runs else []
    mean = {name: sum(run[name] for run in runs) / len(runs) for name in names}
    return {**mean, "epochs": float(len(runs))} if len(runs) > 1 else mean
