"""Which samples of a data file a run asks and scores: all, the first N, chosen ids, or a
random N.

One record for every benchmark. What one *sample* is belongs to the benchmark (a GAVEL or
DetailVerifyBench line; a VideoHallucer basic/hallucinated pair, so a pair is never split); the
benchmark hands :meth:`Selection.choose` its sample ids in file order and keeps what it returns.

The chosen samples are always asked and scored in file order: ``--shuffle`` only decides *which*
``--limit`` samples are taken, so the same choice gives the same numbers (the bootstrap resamples
in file order too).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from gavel.errors import ConfigError, DataError, UsageError
from gavel.io.reading import ID_LIST_BYTES, read_small

#: Unknown ids named in one error at most.
SHOWN_IDS = 5


class _HasId(Protocol):
    id: str


@dataclass(frozen=True)
class Selection:
    """``limit``: keep at most this many; ``sample_ids``: keep only these; ``shuffle``: take the
    ``limit`` samples at random (``random.Random(seed)``) instead of the first ones."""

    limit: int | None = None
    sample_ids: tuple[str, ...] = ()
    shuffle: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"--limit must be 1 or more, got {self.limit}")
        if self.shuffle and self.limit is None:
            raise ConfigError("--shuffle picks which --limit samples are taken: give --limit too")

    @property
    def everything(self) -> bool:
        """True when nothing is left out by construction (no limit, no ids)."""
        return self.limit is None and not self.sample_ids

    def choose(self, ids: Sequence[str], unit: str = "sample") -> list[int]:
        """The positions (in file order) of the chosen samples among ``ids``.

        An id asked for that is not in ``ids`` is an error naming it: a typo must not shrink a
        run silently.
        """
        positions: Sequence[int] = range(len(ids))
        if self.sample_ids:
            where = {sample_id: i for i, sample_id in enumerate(ids)}
            unknown = [s for s in dict.fromkeys(self.sample_ids) if s not in where]
            if unknown:
                shown = ", ".join(repr(s) for s in unknown[:SHOWN_IDS])
                more = f" and {len(unknown) - SHOWN_IDS} more" if len(unknown) > SHOWN_IDS else ""
                raise ConfigError(f"--sample-id: no {unit} with id {shown}{more} in the data")
            positions = sorted({where[s] for s in self.sample_ids})
        chosen = list(positions)
        if self.limit is not None and len(chosen) > self.limit:
            if self.shuffle:
                chosen = sorted(random.Random(self.seed).sample(chosen, self.limit))
            else:
                chosen = chosen[: self.limit]
        return chosen

    def pick(self, items: Sequence[Any], unit: str = "sample") -> list[Any]:
        """The chosen items (records with an ``id``), in file order."""
        return [items[i] for i in self.choose([item.id for item in items], unit)]

    def recorded(self, chosen: int, total: int, unit: str = "sample") -> dict[str, Any] | None:
        """:meth:`describe`, or None when everything is taken (a full run records nothing)."""
        return None if self.everything else self.describe(chosen, total, unit)

    def describe(self, chosen: int, total: int, unit: str = "sample") -> dict[str, Any]:
        """What the manifest records: the flags and how many of how many were kept."""
        return {
            "limit": self.limit,
            "sample_ids": list(self.sample_ids),
            "shuffle": self.shuffle,
            "seed": self.seed if self.shuffle else None,
            "unit": unit,
            "chosen": chosen,
            "of": total,
        }


#: Everything, in file order.
ALL = Selection()


def selection_note(recorded: dict[str, Any]) -> str:
    """The line under a table that says a score covers part of the data: "N of M samples"."""
    how = []
    if recorded.get("sample_ids"):
        how.append(f"{len(recorded['sample_ids'])} --sample-id")
    if recorded.get("limit") is not None:
        how.append(f"--limit {recorded['limit']}")
    if recorded.get("shuffle"):
        how.append(f"shuffled with seed {recorded.get('seed')}")
    unit = recorded.get("unit", "sample")
    return (
        f"selection: {recorded['chosen']} of {recorded['of']} {unit}s scored "
        f"({', '.join(how)}); the numbers describe these only"
    )


def selection_notes(runs: Iterable[tuple[str, Any]]) -> list[str]:
    """One note per run scored on part of its data (a run's name is given when there are
    several), from ``manifest.settings["selection"]``."""
    runs = list(runs)
    notes = []
    for name, result in runs:
        recorded = result.manifest.settings.get("selection")
        if recorded:
            note = selection_note(recorded)
            notes.append(f"{name}: {note}" if len(runs) > 1 else note)
    return notes


def kept_predictions(predictions: Iterable[_HasId], kept: set[str], known: set[str]) -> Iterator:
    """The predictions for kept samples, and those for ids the data does not have (so they are
    still reported as unknown); predictions for samples left out by the selection are dropped."""
    for prediction in predictions:
        if prediction.id in kept or prediction.id not in known:
            yield prediction


def select(
    selection: Selection,
    items: Sequence[Any],
    predictions: Iterable[Any],
    *,
    unit: str = "sample",
    answer_ids: Callable[[Any], Iterable[str]] = lambda item: (item.id,),
) -> tuple[list[Any], Iterable[Any], dict[str, Any] | None]:
    """The chosen items, the predictions to score with them, and what the manifest records
    (None when everything is scored, so a full run's manifest is as before).

    ``answer_ids``: the prediction ids of one item (a VideoHallucer pair has two questions).
    """
    if selection.everything:
        return list(items), predictions, None
    known = {answer for item in items for answer in answer_ids(item)}
    chosen = selection.pick(items, unit)
    kept = {answer for item in chosen for answer in answer_ids(item)}
    recorded = selection.describe(len(chosen), len(items), unit)
    return chosen, kept_predictions(predictions, kept, known), recorded


def read_id_file(path: Path) -> list[str]:
    """``@FILE`` of ``--sample-id``: one id per line; blank lines and ``#`` comments skipped."""
    try:
        text = read_small(path, ID_LIST_BYTES, "an id list").decode("utf-8-sig")
    except FileNotFoundError:
        raise DataError(path, None, None, "no such file (--sample-id @FILE)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DataError(path, None, None, f"cannot read the id list: {error}") from None
    ids = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            ids.append(line)
    if not ids:
        raise DataError(path, None, None, "the id list (--sample-id @FILE) is empty")
    return ids


def sample_ids_from(values: Iterable[str]) -> tuple[str, ...]:
    """``--sample-id`` values: ids, or ``@FILE`` naming a file of ids."""
    ids: list[str] = []
    for value in values:
        if value.startswith("@"):
            ids += read_id_file(Path(value[1:]))
        else:
            ids.append(value)
    return tuple(ids)


def make_selection(limit: int | None, sample_ids: Sequence[str], shuffle: bool,
                   seed: int) -> Selection:  # fmt: skip
    """The selection a run's settings describe (``--limit``, ``--sample-id`` ids or ``@FILE``,
    ``--shuffle``); a bad one is a usage error, an unreadable ``@FILE`` a DataError naming it."""
    ids = sample_ids_from(sample_ids)
    try:
        return Selection(limit, ids, shuffle, seed)
    except ConfigError as error:
        raise UsageError(str(error)) from None
