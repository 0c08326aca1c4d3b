"""gavel's explanation judge inside an inspect_ai run of the GAVEL task.

``gavel score --judge openai:MODEL`` asks a chat model the paper's protocol (appendix A.3) about
each sample; inside inspect the same protocol is asked of inspect's ``grader`` model role
(``--model-role grader=PROVIDER/MODEL``), so any inspect provider can judge, and the offline
proxy judge scores when no grader is given. The messages, the settings (gavel's judge asks for
1,024 tokens at temperature 0), the reading of a reply and the re-asks of a reply without a
valid score are gavel's own; only the transport is inspect's.

Each sample is judged in the scorer, and its record (:class:`gavel.judge.items.Judged`) kept in
the score's metadata; the task's metrics then add them to the whole run as ``gavel score
--judge`` does (:func:`gavel.judge.apply.judge_result`), so the explanation metrics, counts and
warnings are gavel's.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from gavel.errors import ConfigError
from gavel.judge.items import JUDGE_ERROR, OK, Judged, JudgeItem, not_answered

#: ``-T judge=``: ``auto`` is the grader role when one is given, else the offline judge.
MODES = ("auto", "grader", "offline", "none")
#: inspect's name of the role that judges.
ROLE = "grader"
#: Where a score's metadata keeps the sample's judge record and the judge's description.
JUDGED_KEY = "gavel_judged"
JUDGE_KEY = "gavel_judge"

log = logging.getLogger(__name__)


def check_mode(mode: str, benchmark: str) -> str:
    """The judge mode, checked; ``none`` for benchmarks that have no explanation to judge."""
    if mode not in MODES:
        raise ConfigError(f"-T judge={mode!r}: choose one of {', '.join(MODES)}")
    if benchmark != "gavel":
        if mode not in ("auto", "none"):
            raise ConfigError(f"-T judge scores GAVEL explanations; {benchmark} has none")
        return "none"
    return mode


def _grader():
    """The model bound to inspect's grader role in this run, or None."""
    from inspect_ai.model import get_model, model_roles

    return get_model(role=ROLE) if ROLE in model_roles() else None


@functools.cache
def _offline():
    """The offline judge, loaded once per process (it verifies its 23 MB of files)."""
    from gavel.judge.offline import OfflineJudge

    return OfflineJudge()


class SampleJudge:
    """Judges one sample at a time under ``mode`` (:data:`MODES`)."""

    def __init__(self, mode: str):
        self.mode = mode

    async def judge(self, item: JudgeItem) -> tuple[Judged, dict[str, Any]] | None:
        """The sample's judge record and the judge's description (None: no judge runs)."""
        grader = _grader() if self.mode in ("auto", "grader") else None
        if grader is None and self.mode == "grader":
            raise ConfigError(
                "-T judge=grader needs inspect's grader role: --model-role grader=PROVIDER/MODEL"
            )
        if grader is not None:
            return await _ask(grader, item), _llm_settings(grader)
        if self.mode == "none":
            return None
        from gavel.judge.unavailable import JudgeUnavailable

        try:
            judge = _offline()
        except JudgeUnavailable as missing:
            if self.mode == "offline":
                raise
            log.warning("no explanation judge: %s (give a grader role, or -T judge=none)", missing)
            self.mode = "none"
            return None
        (judged,) = await asyncio.to_thread(judge.judge, [item])
        return judged, judge.settings()


def _llm_settings(grader: Any) -> dict[str, Any]:
    from gavel.judge.llm import DEFAULT_INVALID_RETRIES, PROMPT_VERSION, prompt_sha256

    repair = DEFAULT_INVALID_RETRIES > 0
    return {
        "name": str(grader),
        "kind": "llm",
        "proxy": False,
        "prompt_version": PROMPT_VERSION,
        "prompt_sha256": prompt_sha256(repair),
        "repair": repair,
        "model": {"inspect_role": ROLE, "inspect_model": str(grader)},
        "invalid_retries": DEFAULT_INVALID_RETRIES,
    }


async def _ask(grader: Any, item: JudgeItem) -> Judged:
    """The paper's protocol asked of ``grader``; a reply without a valid score is asked again
    (as gavel's LLM judge does: shown its own reply and the repair instruction), then recorded
    as ``judge_error``."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageUser,
        GenerateConfig,
    )

    from gavel.api.tasks import generation_defaults
    from gavel.judge.llm import DEFAULT_INVALID_RETRIES, REPAIR_PROMPT
    from gavel.judge.protocol import judge_messages, read_reply

    if item.prediction is None:
        return not_answered(item)
    system, user = judge_messages(item.prediction, item.ground_truth, item.hallucinated)
    messages = [
        ChatMessageSystem(content=system["content"]),
        ChatMessageUser(content=user["content"]),
    ]
    config = GenerateConfig(**generation_defaults())
    reply = ""
    for _ in range(1 + DEFAULT_INVALID_RETRIES):
        output = await grader.generate(messages, config=config)
        if output.error:
            return Judged(id=item.id, column=item.column, status=JUDGE_ERROR, detail=output.error)
        reply = output.completion
        verdict = read_reply(reply, user["content"])
        if verdict is not None:
            return Judged(
                id=item.id, column=item.column, status=OK, score=verdict.score,
                reason=verdict.reason,
            )  # fmt: skip
        # the same request again would get the same reply from a deterministic grader
        messages = [
            *messages,
            ChatMessageAssistant(content=reply),
            ChatMessageUser(content=REPAIR_PROMPT),
        ]
    detail = f"no valid score in the reply {reply[:300]!r}"
    return Judged(id=item.id, column=item.column, status=JUDGE_ERROR, detail=detail)


def attach_judged(scored: Any, judged: Judged) -> None:
    """A sample's judge record copied onto its score (``judge_score``, ...), as ``gavel score
    --judge`` records it."""
    from gavel.judge.items import attach

    attach([scored], [judged])


def to_metadata(judged: Judged, settings: Mapping[str, Any]) -> dict[str, Any]:
    return {JUDGED_KEY: msgspec.to_builtins(judged), JUDGE_KEY: dict(settings)}


class Recorded:
    """A judge that answers with the records the scorer kept: what :func:`judge_result` is
    given to add them to a whole run. A sample with no record (never answered) is
    ``not_answered``, as for every gavel judge."""

    def __init__(self, metadata: Sequence[Mapping[str, Any]]):
        kept = [entry for entry in metadata if JUDGED_KEY in entry]
        self._by_id = {
            record.id: record
            for record in (msgspec.convert(entry[JUDGED_KEY], Judged) for entry in kept)
        }
        self._settings = dict(kept[0][JUDGE_KEY]) if kept else {}
        self.name = str(self._settings.get("name", ""))
        self.proxy = bool(self._settings.get("proxy"))

    def __bool__(self) -> bool:
        return bool(self._by_id)

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)

    def judge(self, items: Sequence[JudgeItem], progress: bool = False) -> list[Judged]:
        return [self._by_id.get(item.id) or not_answered(item) for item in items]
