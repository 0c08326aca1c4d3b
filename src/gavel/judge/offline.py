"""The offline proxy judge: sentence-embedding similarity mapped to the 1–5 rubric.

It exists so that an explanation score is available without an API (and in ``gavel demo``).
It is a **proxy**, not the paper's protocol (an LLM reading both texts, gavel.judge.protocol):
its name says "(proxy)" wherever a table shows it, and docs/judge-offline.md gives its measured
agreement with a rule-based reference.

How one sample is scored (same inputs as the LLM judge: verdict, prediction text, annotation):

1. no answer from the model: :func:`gavel.judge.items.not_answered` (score 1, status
   ``not_answered``), as for every judge;
2. a verdict that contradicts the label scores 1, as both rubrics say (claims a hallucination
   where there is none / says there is none where there is one);
3. otherwise the cosine similarity between the prediction text (verdict in words + explanation)
   and a reference text: for a sample with a hallucination, the annotated explanation with the
   verdict "yes" in front (``prediction_text(True, ground truth)``); for one without, a fixed
   sentence stating there is no hallucination. The similarity is mapped to 1–5 by four
   thresholds, one set per rubric, fitted by ``gavel judge-calibrate`` (the shipped set is
   ``offline_calibration.json`` next to this module). The verdict words stay in both texts,
   so an unclear verdict lowers the similarity.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from gavel.judge.embedding import Embedder, shared_embedder
from gavel.judge.items import OK, Judged, JudgeItem, not_answered
from gavel.judge.protocol import prediction_text

NAME = "offline-minilm (proxy)"
#: The reference text for samples without a hallucination (after the verdict "no").
CLEAN_REFERENCE = "There is no hallucination: the caption is correct and matches the image."
#: The shipped calibration, written by ``gavel judge-calibrate``.
CALIBRATION_FILE = Path(__file__).with_name("offline_calibration.json")
#: The two rubrics, each with its own thresholds.
RUBRICS = ("hallucinated", "clean")
#: Texts embedded per progress step.
CHUNK = 256


def progress_bar():
    """A rich progress bar on stderr, shown only on a terminal (logs stay clean)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=True,
    )


def load_calibration(path: Path = CALIBRATION_FILE) -> dict[str, Any]:
    """A calibration file, checked for the thresholds the judge needs."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(
            f"no offline-judge calibration at {path}; write one with `gavel judge-calibrate`"
        ) from None
    check_thresholds(data.get("thresholds"))
    return data


def check_thresholds(thresholds: Any) -> dict[str, list[float]]:
    """Four increasing numbers per rubric, or a ValueError that says what is wrong."""
    if not isinstance(thresholds, Mapping) or set(thresholds) != set(RUBRICS):
        raise ValueError(f"thresholds need exactly the keys {RUBRICS}, got {thresholds!r}")
    for rubric, values in thresholds.items():
        if len(values) != 4 or any(b < a for a, b in pairwise(values)):
            raise ValueError(f"thresholds[{rubric!r}] must be 4 increasing numbers: {values}")
    return {rubric: [float(v) for v in thresholds[rubric]] for rubric in RUBRICS}


def to_score(similarity: float, thresholds: Sequence[float]) -> int:
    """1 + how many thresholds the similarity reaches (so 1–5)."""
    return 1 + int(np.searchsorted(np.asarray(thresholds), similarity, side="right"))


def reference_text(item: JudgeItem) -> str:
    """What the prediction is compared with (see the module docstring)."""
    if item.hallucinated:
        return prediction_text(True, item.ground_truth)
    return prediction_text(False, CLEAN_REFERENCE)


def gate(item: JudgeItem) -> Judged | None:
    """The answer for a sample that needs no similarity (no answer, contradicting verdict)."""
    if item.prediction is None:
        return not_answered(item)
    if item.hallucinated and item.verdict is False:
        reason = "proxy: says there is no hallucination where there is one"
    elif not item.hallucinated and item.verdict is True:
        reason = "proxy: claims a hallucination where there is none"
    else:
        return None
    return Judged(id=item.id, column=item.column, status=OK, score=1, reason=reason)


class OfflineJudge:
    """The proxy judge. ``thresholds`` (``{"hallucinated": [4], "clean": [4]}``) replace the
    shipped calibration, as calibration itself does; ``embedder`` defaults to the one shared by
    the process, loaded (and its files verified) here, so a missing extra or a wrong file is
    reported before any work starts (:class:`~gavel.judge.unavailable.JudgeUnavailable`)."""

    name = NAME
    #: Tables label its scores as a proxy, never as the paper's protocol.
    proxy = True

    def __init__(
        self,
        thresholds: Mapping[str, Sequence[float]] | None = None,
        *,
        calibration: Path | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        if thresholds is not None:
            self.thresholds = check_thresholds(thresholds)
            self.provenance: dict[str, Any] = {"source": "given"}
        else:
            data = load_calibration(calibration or CALIBRATION_FILE)
            self.thresholds = check_thresholds(data["thresholds"])
            self.provenance = {
                "source": (calibration or CALIBRATION_FILE).name,
                **data.get("provenance", {}),
                "heldout_agreement": data.get("agreement", {}).get("heldout", {}).get("all"),
            }
        self.embedder = embedder if embedder is not None else shared_embedder()

    def settings(self) -> dict[str, Any]:
        """Everything a result needs to name this judge and reproduce its scores."""
        return {
            "name": NAME,
            "kind": "embedding",
            "proxy": True,
            "protocol": "not the paper's LLM protocol: cosine similarity of sentence embeddings "
            "mapped to 1-5 (docs/judge-offline.md)",
            **Embedder.settings(),
            "clean_reference": CLEAN_REFERENCE,
            "thresholds": self.thresholds,
            "calibration": self.provenance,
        }

    def similarities(
        self, items: Sequence[JudgeItem], progress: bool = False
    ) -> list[float | None]:
        """The cosine of each item that reaches step 3; None for gated items."""
        todo = [i for i, item in enumerate(items) if gate(item) is None]
        firsts = [items[i].prediction or "" for i in todo]
        seconds = [reference_text(items[i]) for i in todo]
        unique = list(dict.fromkeys([*firsts, *seconds]))
        vectors = self._embed(unique, progress)
        row = {text: index for index, text in enumerate(unique)}
        a = vectors[[row[t] for t in firsts]]
        b = vectors[[row[t] for t in seconds]]
        cosines = np.einsum("ij,ij->i", a, b) if todo else np.zeros(0)
        out: list[float | None] = [None] * len(items)
        for index, value in zip(todo, cosines, strict=True):
            out[index] = float(value)
        return out

    def _embed(self, texts: list[str], progress: bool) -> np.ndarray:
        if not progress or len(texts) <= CHUNK:
            return self.embedder.embed(texts)
        parts = []
        with progress_bar() as bar:
            task = bar.add_task("offline judge: embedding", total=len(texts))
            for start in range(0, len(texts), CHUNK):
                parts.append(self.embedder.embed(texts[start : start + CHUNK]))
                bar.advance(task, len(parts[-1]))
        return np.concatenate(parts)

    def judge(self, items: Sequence[JudgeItem], progress: bool = False) -> list[Judged]:
        """One :class:`Judged` per item, in order."""
        cosines = self.similarities(items, progress)
        out = []
        for item, cosine in zip(items, cosines, strict=True):
            gated = gate(item)
            if gated is not None:
                out.append(gated)
                continue
            assert cosine is not None
            rubric = "hallucinated" if item.hallucinated else "clean"
            against = (
                "the reference explanation" if item.hallucinated else "a no-hallucination statement"
            )
            out.append(
                Judged(
                    id=item.id,
                    column=item.column,
                    status=OK,
                    score=to_score(cosine, self.thresholds[rubric]),
                    reason=f"proxy: cosine {cosine:.2f} to {against}",
                )
            )
        return out
