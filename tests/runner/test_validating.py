"""Re-asking a model whose reply does not hold what the caller needs."""

from __future__ import annotations

import asyncio

import pytest

from gavel.requests import Answer, Capabilities, Request
from gavel.runner.validating import ValidatingModel
from gavel.transport.failures import InvalidAnswerError


class Scripted:
    """Replies from a list, one per call, each costing 10 prompt tokens."""

    name = "scripted"
    capabilities = Capabilities(images=False)

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls = 0

    def settings(self):
        return {"adapter": "scripted"}

    def answer(self, request):
        self.calls += 1
        return Answer(self.replies.pop(0), usage={"prompt_tokens": 10})


REQUEST = Request(sample_id="s", task="t", prompt="p")


def test_an_invalid_reply_is_asked_again_and_its_tokens_are_counted():
    inner = Scripted(["nonsense", "42"])
    model = ValidatingModel(inner, str.isdigit, invalid_retries=2, extra_settings={"v": 1})
    answer = asyncio.run(model.answer_async(REQUEST))
    assert answer.text == "42" and inner.calls == 2
    assert answer.usage == {"prompt_tokens": 20}
    assert model.settings() == {"adapter": "scripted", "v": 1}


def test_after_the_retries_the_request_fails_with_the_last_reply():
    inner = Scripted(["a", "b", "c", "d"])
    model = ValidatingModel(inner, str.isdigit, invalid_retries=2, expected="number")
    with pytest.raises(InvalidAnswerError, match=r"no number in 3 replies; last reply: 'c'") as e:
        asyncio.run(model.answer_async(REQUEST))
    assert inner.calls == 3
    assert e.value.usage == {"prompt_tokens": 30}  # paid for, so the ledger counts them


def test_the_runner_does_not_retry_it():
    from gavel.transport.retry import is_retryable

    assert not is_retryable(InvalidAnswerError("x"))


def test_a_request_that_carries_repairs_counts_them_as_re_asks_made():
    """A reply refused elsewhere (a batch's) and its repair sent here: the repairs it carries
    are re-asks made, so the answer is marked by them and the bound holds in all."""
    repair = "Answer with a number."
    turns = ({"role": "assistant", "content": "x"}, {"role": "user", "content": repair})
    model = ValidatingModel(Scripted(["7"]), str.isdigit, invalid_retries=2, repair=repair)
    sent = Request(sample_id="s", task="t", prompt="p", followup=turns)
    assert model.repairs_in(sent) == 1 and model.repairs_in(REQUEST) == 0
    assert asyncio.run(model.answer_async(sent)).meta == {"repaired": 1}
    inner = Scripted(["y", "z"])
    model = ValidatingModel(inner, str.isdigit, invalid_retries=2, repair=repair)
    twice = Request(sample_id="s", task="t", prompt="p", followup=turns + turns)
    with pytest.raises(InvalidAnswerError, match=r"in 3 replies; last reply: 'y'"):
        asyncio.run(model.answer_async(twice))
    assert inner.calls == 1  # two repairs made, one left
    assert model.repaired(REQUEST, "x").followup == turns


def test_repair_turns_are_counted_from_the_end_only():
    from gavel.runner.validating import repair_turns

    fix = {"role": "user", "content": "fix it"}
    said = {"role": "assistant", "content": "no"}
    assert repair_turns([{"role": "user", "content": "q"}, said, fix, said, fix], "fix it") == 2
    assert repair_turns([said, fix, {"role": "user", "content": "other"}], "fix it") == 0
    assert repair_turns([said, fix], None) == 0
