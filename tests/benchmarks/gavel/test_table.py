"""The GAVEL table's note on who scored the explanations."""

from __future__ import annotations

from gavel.benchmarks.gavel.table import _describe_judge


def test_only_the_offline_judge_is_called_an_embedding_proxy():
    offline = {"name": "offline-minilm (proxy)", "proxy": True, "kind": "embedding"}
    plugin = {"name": "agree", "proxy": True, "protocol": "verdict agreement only"}
    llm = {"name": "gpt-4o", "proxy": False, "kind": "llm"}
    assert "an offline embedding PROXY" in _describe_judge(offline)
    assert "embedding" not in _describe_judge(plugin) and "a PROXY" in _describe_judge(plugin)
    assert "(paper protocol)" in _describe_judge(llm)
