"""The judge's half of pricing, called as the library: the refusals ``gavel score`` and
``gavel run`` show as usage errors come from here, in gavel's own error type."""

from __future__ import annotations

from pathlib import Path

import pytest

from gavel.errors import UsageError
from gavel.judge.offline import OfflineJudge
from gavel.scoring.judging import judge_batch
from gavel.scoring.pricing import counts_requests, judge_budget, nothing_to_send


def test_a_budget_without_an_llm_judge_is_refused_and_none_asks_nothing():
    with pytest.raises(UsageError, match="scoring costs nothing without an LLM judge"):
        judge_budget(None, max_cost=1.0, judge_price=None)
    with pytest.raises(UsageError, match="scoring costs nothing without an LLM judge"):
        judge_budget(OfflineJudge(), max_cost=1.0, judge_price=None)
    judge = OfflineJudge()
    judge_budget(judge, max_cost=None, judge_price=None)
    assert not hasattr(judge, "budget") and not counts_requests(judge)


def test_nothing_to_send_is_one_line_without_a_configuration():
    assert nothing_to_send(None, "table") == (
        "dry run: no LLM judge, so scoring sends nothing and costs nothing\n"
    )
    report = nothing_to_send({"judge": {"value": "offline", "from": "default"}}, "json")
    assert "offline" in report and "scoring sends nothing" in report


def test_judge_batch_needs_an_llm_judge_a_folder_and_one_server():
    out = Path("run/results.json")
    assert judge_batch("offline", out, (), on=False, fallback=None, rounds=None, poll=None) is None
    refusals = {
        "needs an LLM judge": ("offline", out, ()),
        "needs --out": ("openai:j", None, ()),
        "sends to one server": ("openai:j", out, ("http://a", "http://b")),
    }
    for message, (spec, folder, urls) in refusals.items():
        with pytest.raises(UsageError, match=message):
            judge_batch(spec, folder, urls, on=True, fallback=None, rounds=None, poll=None)
    with pytest.raises(UsageError, match="--judge-batch-rounds: only with --judge-batch"):
        judge_batch("openai:j", out, (), on=False, fallback=None, rounds=2, poll=None)
    made = judge_batch("openai:j", out, (), on=True, fallback="online", rounds=2, poll=None)
    assert made.fallback == "online" and made.rounds == 2


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({"sample_id": 5}, "'--sample-id': 5 is not a text or a list of texts"),
        ({"judge": 3}, "'--judge': 3 is not a text"),
        ({"bootstrap": None}, "'--bootstrap': None is not an integer"),
        ({"judge_extra_body": {"a": object()}}, "'--judge-extra-body': not a JSON object"),
        ({"predictions": 3}, "'--predictions': 3 is not a path"),
    ],
)
def test_score_settings_of_the_wrong_kind_are_refused_naming_the_flag(given, words):
    from gavel.errors import ConfigError
    from gavel.scoring.settings import ScoreSettings

    with pytest.raises(ConfigError, match=words):
        ScoreSettings(**{"data": "d.jsonl", "predictions": "p.jsonl", **given})
