"""The OpenAI-compatible adapter against a real Chat Completions server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import io
import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gavel.errors import ConfigError, GavelError
from gavel.models.openai_compat import PLACEHOLDER_KEY, OpenAIChatModel, from_spec
from gavel.parsing.conventions import ImageGeometry, get_convention
from gavel.requests import Request
from gavel.transport.retry import InvalidResponseError

pytest.importorskip("openai")


def _fake_server_module():
    """tests/runner/openai_server.py (importlib mode puts no test folder on sys.path)."""
    name = "gavel_tests_openai_server"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "runner" / "openai_server.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


fake = _fake_server_module()
KEY = "sk-test-0b1c2d3e4f5a6b7c"


@pytest.fixture
def server():
    with fake.FakeOpenAIServer() as running:
        yield running


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("GAVEL_TEST_KEY", KEY)


def chat(server, **options) -> OpenAIChatModel:
    return OpenAIChatModel("vlm", base_urls=[server.url], api_key_env="GAVEL_TEST_KEY", **options)


def ask(model: OpenAIChatModel, request: Request):
    async def once():
        try:
            return await model.answer_async(request)
        finally:
            await model.aclose()

    return asyncio.run(once())


def decode(url: str) -> tuple[str, Image.Image]:
    head, _, data = url.partition(",")
    assert head.startswith("data:image/") and head.endswith(";base64")
    return head[5:-7], Image.open(io.BytesIO(base64.b64decode(data)))


def sent_images(server) -> list[tuple[str, Image.Image]]:
    _, body, _ = server.received[-1]
    return [decode(url) for url in fake.image_urls(body)]


def test_images_arrive_as_data_urls_resized_and_the_sent_size_is_returned(server, tmp_path):
    photo = tmp_path / "wide.png"
    Image.new("RGB", (640, 480), (10, 120, 200)).save(photo)
    answer = ask(chat(server, max_image_side=320), Request("a", "gavel", "Is it?", (photo,)))
    ((mime, image),) = sent_images(server)
    assert (mime, image.size) == ("image/png", (320, 240))
    assert answer.sent_size == (320, 240)
    assert answer.text == "echo: Is it?"
    assert answer.usage == {"prompt_tokens": 102, "completion_tokens": 7, "total_tokens": 109}
    # The images come first, then the prompt; the sent size converts pixel boxes back.
    _, body, _ = server.received[-1]
    assert [part["type"] for part in body["messages"][0]["content"]] == ["image_url", "text"]
    geometry = ImageGeometry(640, 480, sent_size=answer.sent_size)
    assert get_convention("pixel").to_pixels((10, 20, 30, 40), geometry) == (20, 40, 60, 80)


def test_unchanged_images_are_sent_byte_for_byte_and_jpegs_stay_jpegs(server, tmp_path):
    small = tmp_path / "small.png"
    Image.new("RGB", (100, 50), (1, 2, 3)).save(small)
    ask(chat(server, max_image_side=320), Request("a", "gavel", "p", (small,)))
    _, body, _ = server.received[-1]
    (url,) = fake.image_urls(body)
    assert base64.b64decode(url.partition(",")[2]) == small.read_bytes()

    photo = tmp_path / "tall.jpg"
    Image.new("RGB", (300, 900), (90, 90, 90)).save(photo, quality=90)
    answer = ask(chat(server, max_image_side=300), Request("b", "gavel", "p", (photo,)))
    ((mime, image),) = sent_images(server)
    assert (mime, image.size, answer.sent_size) == ("image/jpeg", (100, 300), (100, 300))

    ask(chat(server, image_format="jpeg"), Request("c", "gavel", "p", (small,)))
    ((mime, image),) = sent_images(server)
    assert (mime, image.size) == ("image/jpeg", (100, 50))


def test_resized_pixel_models_get_the_processor_size_of_what_was_sent(server, tmp_path):
    photo = tmp_path / "p.png"
    Image.new("RGB", (1000, 500)).save(photo)
    model = chat(server, max_image_side=500, box_format="resized-pixel")
    answer = ask(model, Request("a", "gavel", "p", (photo,)))
    assert answer.sent_size == (500, 250)
    assert answer.input_size == (504, 252)  # Qwen2.5-VL's smart_resize of 500 x 250


def test_a_video_is_sent_as_uniformly_sampled_frames(server, tmp_path, counting_video):
    video = counting_video(tmp_path / "clip.mp4", 16, step=12)
    model = chat(server, frames=4, max_image_side=32)
    answer = ask(model, Request("v", "videohallucer", "Is there a dog?", (video,)))
    images = sent_images(server)
    assert [mime for mime, _ in images] == ["image/jpeg"] * 4
    assert {image.size for _, image in images} == {(32, 24)}
    levels = [round(float(np.asarray(image).mean()) / 12) for _, image in images]
    assert levels == [2, 6, 10, 14]  # the centres of four equal segments, in order
    assert answer.sent_size == (32, 24)


def test_parameters_and_extra_body_reach_the_server(server):
    model = chat(server, max_tokens=77, temperature=0.3, extra_body={"top_k": 5})
    ask(model, Request("a", "gavel", "p"))
    _, body, _ = server.received[-1]
    assert body["model"] == "vlm"
    assert (body["max_tokens"], body["temperature"], body["top_k"]) == (77, 0.3, 5)
    ask(chat(server, max_tokens=None, temperature=None), Request("a", "gavel", "p"))
    _, body, _ = server.received[-1]
    assert "max_tokens" not in body and "temperature" not in body


def test_the_key_is_sent_as_bearer_and_kept_out_of_everything_else(server, caplog):
    caplog.set_level(logging.DEBUG)
    model = chat(server)
    ask(model, Request("a", "gavel", "p"))
    assert server.received[-1][2] == f"Bearer {KEY}"
    assert KEY not in json.dumps(model.settings()) + repr(model) + caplog.text
    assert model.redact(f"Incorrect API key provided: {KEY}.") == (
        "Incorrect API key provided: ***."
    )


def test_a_missing_key_is_a_placeholder_for_own_servers_and_an_error_for_openai(
    server, monkeypatch, caplog
):
    monkeypatch.delenv("GAVEL_TEST_KEY")
    model = chat(server)
    assert "GAVEL_TEST_KEY is not set" in model.notes[0]
    assert "GAVEL_TEST_KEY is not set" in caplog.text
    ask(model, Request("a", "gavel", "p"))
    assert server.received[-1][2] == f"Bearer {PLACEHOLDER_KEY}"
    with pytest.raises(ConfigError, match="set the environment variable GAVEL_TEST_KEY"):
        OpenAIChatModel("gpt-4o", base_urls=["https://api.openai.com/v1"],
                        api_key_env="GAVEL_TEST_KEY")  # fmt: skip


def test_broken_replies_are_invalid_responses(server):
    model = chat(server)
    for body in [b'{"choices": [{"mess', b'{"id": "x"}', b"[]", b'{"choices": [{"message": {}}]}']:
        server.plan = lambda request, number, body=body: fake.Fault(body=body)
        with pytest.raises(InvalidResponseError):
            ask(model, Request("a", "gavel", "p"))
    # No content but a finish reason is a real (empty) answer, e.g. a refusal.
    server.plan = lambda request, number: fake.Fault(
        body=b'{"choices": [{"message": {"content": null}, "finish_reason": "length"}]}'
    )
    assert ask(model, Request("a", "gavel", "p")).text == ""


def test_an_unreadable_image_is_a_clear_error(server, tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not an image")
    with pytest.raises(GavelError, match="cannot read image"):
        ask(chat(server), Request("a", "gavel", "p", (broken,)))
    assert server.hits == 0


def test_the_blocking_answer_works_repeatedly(server):
    model = chat(server)
    assert model.answer(Request("a", "gavel", "one")).text == "echo: one"
    assert model.answer(Request("b", "gavel", "two")).text == "echo: two"
    model.close()


def test_settings_name_what_changes_answers():
    model = OpenAIChatModel("Qwen/Qwen3-VL-8B-Instruct", base_urls=["http://n1:8000/v1/"],
                            api_key_env="GAVEL_TEST_KEY", max_image_side=1024, frames=16,
                            box_format="rel1000")  # fmt: skip
    settings = model.settings()
    assert settings["model"] == "Qwen/Qwen3-VL-8B-Instruct"
    assert settings["base_urls"] == ["http://n1:8000/v1"]
    assert (settings["max_tokens"], settings["temperature"]) == (1024, 0.0)
    assert (settings["max_image_side"], settings["frames"]) == (1024, {"mode": "uniform", "count": 16})  # fmt: skip
    assert model.capabilities.box_format == "rel1000"
    assert model.capabilities.video and model.capabilities.multi_image
    assert model.name == "Qwen/Qwen3-VL-8B-Instruct"


def test_from_spec_takes_command_line_options():
    model = from_spec(
        "gpt-4o-mini",
        base_urls=("http://a:8000/v1", "http://b:8000/v1"),
        api_key_env="GAVEL_TEST_KEY",
        max_tokens=None,  # a flag left out: the default
        temperature=0.2,
        box_format="pixel",
        max_image_side=None,
    )
    assert model.base_urls == ["http://a:8000/v1", "http://b:8000/v1"]
    assert (model.max_tokens, model.temperature) == (1024, 0.2)
    single = from_spec("m", base_url="http://c:8000/v1", api_key_env="GAVEL_TEST_KEY")
    assert single.base_urls == ["http://c:8000/v1"]
    defaulted = from_spec("m", base_urls=(), api_key_env="GAVEL_TEST_KEY")
    assert defaulted.base_urls[0].startswith("http")
    with pytest.raises(ConfigError, match="unknown option"):
        from_spec("m", base_urls=["http://c/v1"], api_key_env="GAVEL_TEST_KEY", colour="red")
    with pytest.raises(ConfigError, match="openai:MODEL"):
        from_spec("", api_key_env="GAVEL_TEST_KEY")
    with pytest.raises(ConfigError, match="not an http"):
        from_spec("m", base_urls=["localhost:8000"], api_key_env="GAVEL_TEST_KEY")


def test_a_video_can_be_sampled_by_rate_and_the_sampling_is_recorded(
    server, tmp_path, counting_video
):
    video = counting_video(tmp_path / "clip.mp4", 16, step=12)  # 2 s at 8 fps
    model = chat(server, fps=2, max_frames=3, max_image_side=32)
    assert model.settings()["frames"] == {"mode": "fps", "fps": 2.0, "max_frames": 3}
    ask(model, Request("v", "videohallucer", "Is there a dog?", (video,)))
    levels = [round(float(np.asarray(image).mean()) / 12) for _, image in sent_images(server)]
    assert levels == [0, 8, 12]  # every 4th frame (0, 4, 8, 12), evenly thinned to 3


def test_concurrent_questions_on_one_video_decode_it_once(
    server, tmp_path, counting_video, monkeypatch
):
    import gavel.media.frames as frames_module

    video = counting_video(tmp_path / "clip.mp4", 16)
    calls = []
    real = frames_module._read
    monkeypatch.setattr(frames_module, "_read", lambda p, s: calls.append(p) or real(p, s))
    model = chat(server, frames=5)

    async def pair():
        try:
            return await asyncio.gather(
                model.answer_async(Request("b", "videohallucer", "Is there a dog?", (video,))),
                model.answer_async(Request("h", "videohallucer", "Is there a cat?", (video,))),
            )
        finally:
            await model.aclose()

    asyncio.run(pair())
    assert len(calls) == 1 and len(server.received) == 2
    assert all(len(fake.image_urls(body)) == 5 for _, body, _ in server.received)


def preflight(model: OpenAIChatModel) -> None:
    async def once():
        try:
            await model.preflight()
        finally:
            await model.aclose()

    asyncio.run(once())


def test_a_model_the_server_does_not_serve_fails_before_any_request(server):
    server.served = [{"id": "llava-7b", "object": "model", "owned_by": "vllm"},
                     {"id": "qwen2-vl", "object": "model", "owned_by": "vllm"}]  # fmt: skip
    with pytest.raises(ConfigError) as refused:
        preflight(chat(server))
    message = str(refused.value)
    assert "does not serve the model 'vlm'" in message and "llava-7b, qwen2-vl" in message
    assert "--model openai:NAME" in message and server.url in message
    assert server.models_asked == 1 and server.hits == 0


def test_served_names_pass_and_a_missing_route_is_no_error(server):
    server.served = [{"id": "vlm"}]
    preflight(chat(server))
    server.served = [{"id": "vlm:latest", "owned_by": "library"}]  # Ollama names its tags
    preflight(chat(server))
    server.served = [{"id": "models/vlm", "owned_by": "google"}]  # Gemini's prefix
    preflight(chat(server))
    server.served = None  # 404, as a server without the route answers
    model = chat(server)
    preflight(model)
    assert model.listed is None and server.models_asked == 4
    preflight(model)
    assert server.models_asked == 4  # asked once per model


UNSETTLING_REPLIES = {
    "405": fake.Fault(status=405, payload={"detail": "Method Not Allowed"}),
    "401": fake.Fault(status=401, payload={"error": {"message": "listing needs another scope"}}),
    "no data": fake.Fault(payload={"models": [{"id": "vlm"}]}),
    "a bare list": fake.Fault(payload=[{"id": "other"}]),
    "unnamed entries": fake.Fault(payload={"data": [{"id": "other"}, {"name": "vlm"}]}),
    "an empty list": fake.Fault(payload={"object": "list", "data": []}),
    "not JSON": fake.Fault(payload=b"<html>models are listed in the console</html>"),
}


@pytest.mark.parametrize("reply", list(UNSETTLING_REPLIES), ids=list(UNSETTLING_REPLIES))
def test_a_models_reply_that_cannot_settle_the_name_warns_once_and_the_run_goes_on(
    server, tmp_path, caplog, reply
):
    from gavel.runner.async_runner import run_sync

    server.models_fault = UNSETTLING_REPLIES[reply]
    requests = [Request(f"s{i}", "gavel", f"p{i}") for i in range(4)]
    with caplog.at_level(logging.WARNING, logger="gavel.models.openai_compat"):
        summary = run_sync(chat(server), requests, tmp_path / "pred.jsonl", concurrency=2,
                           progress=False)  # fmt: skip
    assert (summary.answered, summary.errors) == (4, 0) and server.hits == 4
    warned = [r.getMessage() for r in caplog.records if "GET " in r.getMessage()]
    assert len(warned) == 1 and server.models_asked == 1
    assert f"GET {server.url}/models cannot tell whether 'vlm' is served" in warned[0]
    assert "--no-model-check skips asking" in warned[0] and KEY not in warned[0]


def test_the_model_check_can_be_switched_off(server):
    server.served = [{"id": "other", "owned_by": "vllm"}]  # a list that omits the model
    with pytest.raises(ConfigError, match="does not serve the model 'vlm'"):
        preflight(chat(server))
    model = chat(server, model_check=False)
    preflight(model)
    assert server.models_asked == 1 and model.listed is None  # the second model never asked
    assert from_spec("vlm", base_url=server.url, model_check=False).model_check is False
    assert "model_check" not in model.settings()  # it changes no answer, nor the cache key


@pytest.mark.parametrize(
    "entry",
    [
        {"id": "tiny.gguf", "object": "model", "owned_by": "llamacpp"},
        {"id": "org/cached", "object": "model", "owned_by": "org", "status": {"value": "loaded"}},
    ],
)
def test_servers_that_answer_unlisted_names_only_note_the_list(server, entry):
    server.served = [entry]
    model = chat(server)
    preflight(model)  # llama-server answers any name; transformers serve loads paths
    assert model.listed == [entry["id"]]
    assert model.refusals_to_stop(400) == 1  # a refusal then stops at once
    assert entry["id"] in model.advice(400, "model not found")


def test_the_advice_speaks_of_the_judges_flags_when_it_is_the_judge(server):
    from gavel.judge.apply import JUDGE_FLAGS

    model = chat(server, extra_body={"reasoning_effort": "low"})
    model.flags = dict(JUDGE_FLAGS)
    assert "--judge-api-key-env" in model.advice(401, "bad key")
    said = model.advice(422, "Unexpected fields in the request: {'reasoning_effort'}")
    assert "'reasoning_effort'" in said and "--judge-extra-body" in said
    assert "--judge openai:NAME" in model.advice(400, "The model `vlm` does not exist.")
    assert "ends in /v1" in model.advice(404, "Not Found")
    # Words that name no field still point at the fields beyond the standard ones.
    unnamed = model.advice(400, "JSON schema error at #: unsupported $ref")
    assert "the options sent (reasoning_effort, sent because of --judge-extra-body)" in unnamed


def test_only_standard_fields_are_sent_by_default(server):
    ask(chat(server), Request("a", "gavel", "p"))
    _, body, _ = server.received[-1]
    assert set(body) == {"model", "messages", "max_tokens", "temperature"}
    assert body["max_tokens"] == 1024 and body["messages"][-1]["content"] == "p"


def test_each_file_is_read_and_encoded_once_per_run_within_the_budget(
    server, tmp_path, counting_video, monkeypatch
):
    import gavel.media.image_urls as image_urls
    from gavel.runner.async_runner import run_async

    photos = []
    for index in range(3):
        photo = tmp_path / f"p{index}.png"
        pixels = np.full((40, 60, 3), 40 * index, dtype=np.uint8)
        Image.fromarray(pixels).save(photo)
        photos.append(photo)
    video = counting_video(tmp_path / "clip.mp4", 16)
    reads = []
    real = image_urls.encode_file
    monkeypatch.setattr("gavel.models.openai_compat.encode_file",
                        lambda path, *a: reads.append(path) or real(path, *a))  # fmt: skip
    # Four captions on each image, and a pair of questions on the video, all at once.
    asked = [Request(f"s{i}", "gavel", f"caption {i}", (photos[i % 3],)) for i in range(12)]
    asked += [Request(f"v{i}", "videohallucer", f"question {i}", (video,)) for i in range(2)]
    model = chat(server, frames=4)
    summary = asyncio.run(run_async(model, asked, tmp_path / "p.jsonl", concurrency=14,
                                    progress=False))  # fmt: skip
    assert summary.answered == 14 and summary.errors == 0
    assert sorted(reads) == photos  # each image file read once
    assert model.encoded.misses == 4 and len(model.encoded) == 4  # three images, one video
    bodies = {fake.prompt_text(body): body for _, body, _ in server.received}
    for i in range(12):  # every request carried its own image, byte for byte
        (url,) = fake.image_urls(bodies[f"caption {i}"])
        assert base64.b64decode(url.partition(",")[2]) == photos[i % 3].read_bytes()
    frames = [fake.image_urls(bodies[f"question {i}"]) for i in range(2)]
    assert len(frames[0]) == 4 and frames[0] == frames[1]

    # A budget smaller than one image keeps none: every request encodes its file again.
    reads.clear()
    small = chat(server, image_cache_mb=0.0001)
    asyncio.run(run_async(small, asked[:6], tmp_path / "q.jsonl", concurrency=1, progress=False))
    assert len(reads) == 6 and len(small.encoded) == 0


def test_the_image_budget_is_an_option_checked_like_the_others(server):
    assert chat(server).encoded.max_bytes == 256 * 1024 * 1024
    assert from_spec("vlm", base_url=server.url, image_cache_mb=8).encoded.max_bytes == 8 << 20
    with pytest.raises(ConfigError, match="image_cache_mb"):
        chat(server, image_cache_mb=-1)
