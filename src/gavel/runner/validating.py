"""A model wrapper that re-asks when an answer does not hold what the caller needs.

Judges and raters must reply with a valid score. The runner's retries are for transport
failures; a reply that arrives fine but holds no valid score is a different failure, with its
own bound. :class:`ValidatingModel` asks again up to ``invalid_retries`` times, then raises
:class:`InvalidAnswerError`, which the runner does not retry and writes as an error line (so the
sample is counted as failed and a rerun asks it again), but which never spends the runner's
failure budget: the server answered, so nothing is wrong with the run, only with that reply
(:mod:`gavel.transport.failures`). With ``repair``, a re-ask is not the same request again (a
server at temperature 0 would give the same reply): it adds the refused reply and the repair
instruction after the prompt, and an answer that came so records how many re-asks it took
(``meta["repaired"]``). Only accepted answers are returned, so only they reach the
answer cache. Tokens of rejected replies are added to the accepted answer's
usage, or carried by the error: the ledger counts them either way.

A request may arrive with repairs already under way (a batch's reply was refused, and the
re-ask is sent online: :mod:`gavel.batch.runner`): the repair turns its follow-up ends with
(:func:`repair_turns`) count as re-asks made, so a request is asked ``invalid_retries`` times
again at most, whichever way its replies came, and its answer is marked alike.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gavel.requests import Answer, Model, Request
from gavel.transport.failures import InvalidAnswerError


def repair_turns(messages: Sequence[Mapping[str, Any]], instruction: str | None) -> int:
    """How many repair re-asks ``messages`` end with: pairs of a refused reply (``assistant``)
    and ``instruction`` (``user``), counted from the end."""
    count, end = 0, len(messages)
    while instruction is not None and end >= 2:
        reply, asked = messages[end - 2], messages[end - 1]
        if reply.get("role") != "assistant" or asked != {"role": "user", "content": instruction}:
            break
        count, end = count + 1, end - 2
    return count


class ValidatingModel:
    """``model`` whose answers must satisfy ``accept(text)`` (``accept(text, request)`` with
    ``with_request``, for checks that need the prompt); ``settings`` adds ``extra``."""

    def __init__(
        self,
        model: Model,
        accept: Callable[..., bool],
        *,
        invalid_retries: int = 2,
        extra_settings: dict[str, Any] | None = None,
        expected: str = "a valid answer",
        with_request: bool = False,
        repair: str | None = None,
    ):
        if invalid_retries < 0:
            raise ValueError("invalid_retries must be 0 or more")
        self.inner = model
        self.accept = accept
        self.with_request = with_request
        self.invalid_retries = invalid_retries
        self.extra_settings = dict(extra_settings or {})
        self.expected = expected
        #: The instruction a re-ask adds after the refused reply (None: the same request again).
        self.repair = repair
        self.name = model.name
        self.capabilities = model.capabilities
        self.redact = getattr(model, "redact", None)

    @property
    def endpoint(self) -> str | None:
        return getattr(self.inner, "endpoint", None)

    async def preflight(self) -> None:
        check = getattr(self.inner, "preflight", None)
        if check is not None:
            await check()

    def __getattr__(self, name: str):
        # What the runner asks of a served model when it fails (``advice``,
        # ``refusals_to_stop``) and its rate limits (``rate_control``) are the inner model's.
        if name in ("advice", "refusals_to_stop", "rate_control"):
            return getattr(self.inner, name)
        raise AttributeError(name)

    def settings(self) -> dict[str, Any]:
        return {**self.inner.settings(), **self.extra_settings}

    def repairs_in(self, request: Request) -> int:
        """The repair re-asks ``request`` carries already (its follow-up's last turns)."""
        return repair_turns(request.followup, self.repair)

    def repaired(self, request: Request, text: str) -> Request:
        """``request`` asked again after the refused ``text``: with the reply and the repair
        instruction after it (the same request again without a repair instruction)."""
        if self.repair is None:
            return request
        said = ({"role": "assistant", "content": text}, {"role": "user", "content": self.repair})
        return dataclasses.replace(request, followup=request.followup + said)

    async def answer_async(self, request: Request) -> Answer:
        asking = getattr(self.inner, "answer_async", None)
        usage: dict[str, int] = {}
        text = ""
        asked = request
        made = min(self.repairs_in(request), self.invalid_retries)  # asked elsewhere already
        for attempt in range(made, self.invalid_retries + 1):
            if asking is not None:
                answer = await asking(asked)
            else:
                answer = await asyncio.to_thread(self.inner.answer, asked)
            for key, value in answer.usage.items():
                usage[key] = usage.get(key, 0) + value
            text = answer.text
            if self.accept(text, request) if self.with_request else self.accept(text):
                return Answer(
                    text,
                    sent_size=answer.sent_size,
                    input_size=answer.input_size,
                    usage=usage,
                    finish_reason=answer.finish_reason,
                    meta={"repaired": attempt} if attempt and self.repair else None,
                )
            asked = self.repaired(asked, text)  # the same request would get the same reply
        raise InvalidAnswerError(
            f"no {self.expected} in {self.invalid_retries + 1} replies; last reply: {text[:300]!r}",
            usage,
        )

    def answer(self, request: Request) -> Answer:
        return asyncio.run(self.answer_async(request))

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()
