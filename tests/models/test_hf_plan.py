"""An hf: model described without loading it says what the loaded model says about itself."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="the hf adapter needs torch (gavel-eval[hf])")

from gavel.errors import ConfigError
from gavel.models.hf_plan import plan_from_spec
from gavel.models.registry import load_model


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from gavel.train.tiny import build_qwen25_vl

    return build_qwen25_vl(tmp_path_factory.mktemp("tiny") / "model")


def test_the_plan_says_what_the_loaded_model_says(tiny):
    options = {"dtype": "float32", "max_tokens": 8, "batch_size": 3, "frames": 4,
               "box_format": "resized-pixel", "base_urls": (), "api_key_env": None}  # fmt: skip
    plan = plan_from_spec(str(tiny), replica_device="cpu", **options)
    loaded = load_model(f"hf:{tiny}", device="cpu", **options)
    planned, actual = plan.settings(), loaded.settings()
    unknown_before_loading = {"loaded_dtype", "versions", "loaded_by"}
    assert {k: v for k, v in planned.items() if k not in unknown_before_loading} == {
        k: v for k, v in actual.items() if k not in unknown_before_loading
    }
    assert plan.capabilities == loaded.capabilities  # multi-image and video from the config
    assert planned["loaded_by"] == "the Ray replicas" and planned["loaded_dtype"] is None
    assert not hasattr(plan, "model")  # no weights were read


def test_the_default_batch_size_is_the_one_of_the_replicas_device(tiny):
    assert plan_from_spec(str(tiny), replica_device="cuda").batch_size == 8
    assert plan_from_spec(str(tiny), replica_device="cpu").batch_size == 4
    assert plan_from_spec(str(tiny), replica_device="cuda", device="cpu").batch_size == 4


def test_the_plan_refuses_what_the_model_refuses(tmp_path, tiny):
    with pytest.raises(ConfigError, match="dtype must be one of"):
        plan_from_spec(str(tiny), dtype="int3")
    with pytest.raises(ConfigError, match="unknown option"):
        plan_from_spec(str(tiny), beam_width=4)
    with pytest.raises(ConfigError, match="takes no base_urls"):
        plan_from_spec(str(tiny), base_urls=["http://127.0.0.1:9/v1"])
    with pytest.raises(ConfigError, match="cannot read the config"):
        plan_from_spec(str(tmp_path))  # a folder without a model
