"""Scoring one answer at a time, for frameworks that score sample by sample (inspect_ai's log
viewer shows each sample's score): the benchmark's own per-sample scorer, the data loaded
once, and a score's numbers as a flat record."""

from __future__ import annotations

import math
import typing
from collections.abc import Iterable
from pathlib import Path
from types import UnionType
from typing import Any, Protocol

import msgspec

from gavel.errors import ConfigError
from gavel.records import Prediction, Score
from gavel.selection import ALL, Selection

#: The benchmarks scored one answer at a time, by gavel's names for them.
BENCHMARKS = ("gavel", "detailverify", "videohallucer")


class SampleOptions(Protocol):
    """The benchmark settings a per-sample score depends on (each benchmark reads its own)."""

    image_root: str | None
    box_format: str
    match: str
    mode: str
    thinking: bool
    answer_rule: str


class SampleScorer:
    """gavel's per-sample score of one answer, for frameworks that score sample by sample
    (inspect's log viewer shows it); the data is loaded once. The run's metrics still come
    from scoring the whole run, which also computes what only a whole run has (IoU groups, the
    bootstrap)."""

    def __init__(self, benchmark: str, data: str | Path, options: SampleOptions):
        if benchmark not in BENCHMARKS:
            raise ConfigError(
                f"unknown benchmark {benchmark!r}; choose one of: {', '.join(BENCHMARKS)}"
            )
        self.benchmark = benchmark
        path = Path(data)
        root = Path(options.image_root) if options.image_root else None
        if benchmark == "gavel":
            from gavel.benchmarks.gavel.data import load_samples
            from gavel.benchmarks.gavel.scoring import GavelSettings, score_predictions

            samples, _ = load_samples(path, root)
            settings: Any = GavelSettings(match=options.match, box_format=options.box_format)
            self._items = {sample.id: sample for sample in samples}
        elif benchmark == "detailverify":
            from gavel.benchmarks.detailverify.data import read_samples
            from gavel.benchmarks.detailverify.scoring import (
                DetailVerifySettings,
                score_predictions,
            )

            samples, _ = read_samples(path)
            settings = DetailVerifySettings(mode=options.mode, thinking=options.thinking)
            self._items = {sample.id: sample for sample in samples}
        else:
            from gavel.benchmarks.videohallucer.data import SIDES, load_dataset
            from gavel.benchmarks.videohallucer.scoring import (
                VideoHallucerSettings,
                score_predictions,
            )

            pairs = load_dataset(path).pairs
            settings = VideoHallucerSettings(answer_rule=options.answer_rule)
            self._items = {pair.question_id(side): pair for pair in pairs for side in SIDES}
        self._score = score_predictions
        self._settings = settings
        #: The benchmark's samples (what --limit counts) in file order, by their ids.
        self._units = list(dict.fromkeys(item.id for item in self._items.values()))

    def selection(self, answered: Iterable[str]) -> Selection:
        """The selection that scores the samples with these answer ids, as
        ``gavel score --sample-id`` would: everything when every sample is among them.

        A VideoHallucer pair is one sample: one of its questions answered brings in the pair,
        and its other question, unanswered, counts as missing (as for ``gavel score``).
        Ids the data does not have are left to the scorer, which reports them as unknown.
        """
        chosen = {self._items[i].id for i in answered if i in self._items}
        if not chosen:
            raise ConfigError("none of the answers is for a sample of the data")
        if len(chosen) == len(self._units):
            return ALL
        return Selection(sample_ids=tuple(unit for unit in self._units if unit in chosen))

    def judge_item(self, scored: Score) -> Any:
        """What a judge is asked about one scored GAVEL sample (a ``JudgeItem``)."""
        from gavel.judge.items import judge_items

        (item,) = judge_items([self._items[scored.id]], [scored])  # type: ignore[list-item]
        return item

    def score(self, answer: Prediction) -> Score:
        item = self._items.get(answer.id)
        if item is None:
            raise ConfigError(f"sample {answer.id!r} is not in the data")
        scores = self._score([item], [answer], self._settings)[0]
        return next(score for score in scores if score.id == answer.id)


#: The types of a per-sample score's fields that are numbers or flags.
_NUMBERS = (bool, int, float)


def _is_number_field(kind: Any) -> bool:
    """Whether a field's type is a number or flag, possibly None (``float | None``)."""
    options = (
        typing.get_args(kind) if typing.get_origin(kind) in (typing.Union, UnionType) else (kind,)
    )
    kept = [option for option in options if option is not type(None)]
    return bool(kept) and all(option in _NUMBERS for option in kept)


def score_values(score: Score) -> dict[str, float | bool]:
    """A per-sample score's numbers and flags (``ok``: the answer could be scored).

    Every number field is there, NaN where the sample has none (an unparseable answer has no
    IoU): inspect's ``--epochs`` reduces each sample's epochs key by key and needs the same
    keys in each, and NaN is how inspect marks a value a sample does not have.
    """
    values: dict[str, float | bool] = {"ok": str(score.outcome) == "ok"}
    for field in msgspec.structs.fields(score):
        if not _is_number_field(field.type):
            continue
        value = getattr(score, field.name)
        finite = isinstance(value, bool) or (
            isinstance(value, int | float) and math.isfinite(value)
        )
        values[field.name] = value if finite else math.nan
    return values
