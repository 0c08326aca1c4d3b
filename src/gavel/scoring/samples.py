"""Scoring one answer at a time, for frameworks that score sample by sample (inspect_ai's log
viewer shows each sample's score): the benchmark's own per-sample scorer, the data loaded
once, and a score's numbers as a flat record."""

from __future__ import annotations

import math
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import msgspec

from gavel.errors import ConfigError
from gavel.records import GavelSample, GavelScore, Prediction, Score
from gavel.selection import ALL, Selection

if TYPE_CHECKING:
    from gavel.judge.items import JudgeItem

#: The benchmarks scored one answer at a time, by gavel's names for them.
BENCHMARKS = ("gavel", "detailverify", "videohallucer")


class SampleOptions(Protocol):
    """The benchmark settings a per-sample score depends on (each benchmark reads its own);
    read only, so a frozen record (``gavel.api.tasks.TaskOptions``) gives them."""

    @property
    def image_root(self) -> str | None: ...
    @property
    def box_format(self) -> str: ...
    @property
    def match(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def thinking(self) -> bool: ...
    @property
    def answer_rule(self) -> str: ...


class _Identified(Protocol):
    """What a benchmark's unit of scoring has for its selection: the sample's id."""

    @property
    def id(self) -> str: ...


_Item = TypeVar("_Item", bound=_Identified)
_Settings = TypeVar("_Settings")


@dataclass(frozen=True)
class _Loaded(Generic[_Item, _Settings]):
    """One benchmark's data by answer id, with its own scorer and settings: the three are
    typed together, so a benchmark's scorer only ever gets that benchmark's samples."""

    #: The unit each answer id scores (a VideoHallucer pair for each of its questions).
    items: Mapping[str, _Item]
    scorer: Callable[
        [list[_Item], Iterable[Prediction], _Settings], tuple[Sequence[Score], list[str], object]
    ]
    settings: _Settings

    def score(self, answer: Prediction) -> Score:
        item = self.items.get(answer.id)
        if item is None:
            raise ConfigError(f"sample {answer.id!r} is not in the data")
        scores = self.scorer([item], [answer], self.settings)[0]
        return next(score for score in scores if score.id == answer.id)


class _PerSample(Protocol):
    """Any benchmark's loaded data, as :class:`SampleScorer` uses it."""

    @property
    def items(self) -> Mapping[str, _Identified]: ...

    def score(self, answer: Prediction) -> Score: ...


def _load(benchmark: str, path: Path, options: SampleOptions) -> _PerSample:
    """The benchmark's data, scorer and settings (its loaders and scorer imported on use)."""
    from gavel.benchmarks.registry import echo_filter

    root = Path(options.image_root) if options.image_root else None
    if benchmark == "gavel":
        from gavel.benchmarks.gavel import data as gavel_data
        from gavel.benchmarks.gavel import scoring as gavel_scoring

        samples, _ = gavel_data.load_samples(path, root)
        return _Loaded(
            {sample.id: sample for sample in samples},
            gavel_scoring.score_predictions,
            gavel_scoring.GavelSettings(
                match=options.match, box_format=options.box_format, echo=echo_filter()
            ),
        )
    if benchmark == "detailverify":
        from gavel.benchmarks.detailverify import data as dvb_data
        from gavel.benchmarks.detailverify import scoring as dvb_scoring

        verify, _ = dvb_data.read_samples(path)
        return _Loaded(
            {sample.id: sample for sample in verify},
            dvb_scoring.score_predictions,
            dvb_scoring.DetailVerifySettings(
                mode=options.mode, thinking=options.thinking, echo=echo_filter()
            ),
        )
    from gavel.benchmarks.videohallucer import data as vh_data
    from gavel.benchmarks.videohallucer import scoring as vh_scoring

    pairs = vh_data.load_dataset(path).pairs
    return _Loaded(
        {pair.question_id(side): pair for pair in pairs for side in vh_data.SIDES},
        vh_scoring.score_predictions,
        vh_scoring.VideoHallucerSettings(answer_rule=options.answer_rule, echo=echo_filter()),
    )


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
        self._loaded = _load(benchmark, Path(data), options)
        self._items = self._loaded.items
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

    def judge_item(self, scored: Score) -> JudgeItem:
        """What a judge is asked about one scored GAVEL sample."""
        from gavel.judge.items import judge_items

        sample = self._items.get(scored.id)
        if not isinstance(sample, GavelSample) or not isinstance(scored, GavelScore):
            raise ConfigError(f"the judge asks about GAVEL samples; {scored.id!r} is not one")
        (item,) = judge_items([sample], [scored])
        return item

    def score(self, answer: Prediction) -> Score:
        return self._loaded.score(answer)


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
