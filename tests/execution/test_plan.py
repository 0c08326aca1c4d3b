"""A run plan decides everything before a request is sent: which executor runs it, what it
costs, what its manifest records; planning writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import gavel
from gavel.errors import UsageError
from gavel.execution.batch_api import BatchApiExecutor
from gavel.execution.batch_request import OFFLINE_BASE_URL
from gavel.execution.executor import choose
from gavel.execution.online import OnlineExecutor
from gavel.execution.plan import plan
from gavel.execution.ray import RayExecutor
from gavel.execution.settings import GenerateSettings


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return gavel.synthesize("gavel", out="synth", n=3)


def test_the_plan_chooses_the_executor_and_writes_nothing(data):
    local = plan(GenerateSettings(data=data, model="scene", out=Path("p.jsonl")))
    assert isinstance(choose(local), OnlineExecutor) and local.prepared.total == 3
    assert local.cache is None and not local.out.exists()  # a local model: no answer cache
    on_ray = plan(GenerateSettings(data=data, model="scene", out=Path("p.jsonl"), executor="ray"))
    assert isinstance(choose(on_ray), RayExecutor)
    offline = plan(GenerateSettings(data=data, model="openai:m", out=Path("p.jsonl"),
                                    batch_requests_only=Path("requests.jsonl"), no_cache=True))  # fmt: skip
    assert isinstance(choose(offline), BatchApiExecutor)
    assert offline.options["base_urls"] == (OFFLINE_BASE_URL,)  # recorded as the endpoint
    assert sorted(p.name for p in Path().iterdir()) == ["synth"]


def test_a_dry_run_plan_holds_its_estimate(data):
    planned = plan(GenerateSettings(data=data, model="openai:m", out=Path("p.jsonl"),
                                    base_url=("http://127.0.0.1:9/v1",), no_cache=True,
                                    dry_run=True, price="1,4"))  # fmt: skip
    assert planned.estimate is not None and planned.estimate.requests == 3
    assert planned.budget is None and not Path("p.jsonl").exists()


def test_the_configuration_is_recorded_as_given(data):
    given = {"max-tokens": {"value": 64, "from": "config"}}
    planned = plan(GenerateSettings(data=data, model="scene", out=Path("p.jsonl")), given)
    assert planned.manifest.settings["configuration"] == given
    unrecorded = plan(GenerateSettings(data=data, model="scene", out=Path("p.jsonl")))
    assert "configuration" not in unrecorded.manifest.settings


def test_settings_that_do_not_go_together_are_a_usage_error(data):
    with pytest.raises(UsageError, match="--workers: only with --executor ray"):
        plan(GenerateSettings(data=data, model="scene", out=Path("p.jsonl"), workers=2))
    with pytest.raises(UsageError, match="--max-cost applies to served models"):
        plan(GenerateSettings(data=data, model="scene", out=Path("p.jsonl"), max_cost=1.0))
