"""The pre- and post-processing of the Ray Data recipe, on the CPU and without vLLM: the
messages are what gavel sends to an OpenAI-compatible server, and the lines written from the
replies score as a local run's."""

from __future__ import annotations

import base64
import io
import json
from dataclasses import replace

import msgspec
import numpy as np
import pytest
from PIL import Image

from gavel.benchmarks.gavel.data import load_samples
from gavel.benchmarks.gavel.prompt import build_requests
from gavel.models.registry import load_model
from gavel.models.scene.gavel_answer import answer_gavel
from gavel.prompts import load_template
from gavel.requests import Request
from gavel.runner.local import run_model
from gavel.runner.ray_data import (
    ERROR_COLUMN,
    REQUEST_COLUMN,
    postprocess,
    prediction_line,
    preprocess,
    request_rows,
    write_predictions,
)
from gavel.synth.gavel_set import generate_gavel

SAMPLES = 12


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gavel")
    generate_gavel(folder, SAMPLES, seed=3, difficulty="easy")
    return folder


def requests_of(folder):
    samples, _ = load_samples(folder / "gavel.jsonl")
    return list(build_requests(samples, folder, load_template("gavel_v1"), "pixel"))


def pixels_of(url: str) -> np.ndarray:
    data = base64.b64decode(url.partition(",")[2])
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def engine(row: dict) -> dict:
    """A stand-in for the vLLM stage: it reads the image from the message it is given (the
    data URL, decoded) and answers with the scene model's rules, returning the columns
    vLLM's stage returns. The caption comes from the carried request (Ray carries every
    column), since the rules read it as a field."""
    (user,) = [message for message in row["messages"] if message["role"] == "user"]
    image, text = user["content"]
    assert text["type"] == "text" and image["type"] == "image_url"
    caption = json.loads(row[REQUEST_COLUMN])["fields"]["caption"]
    response = answer_gavel(pixels_of(image["image_url"]["url"]), caption)
    return {**row, "generated_text": response, "num_input_tokens": 321,
            "num_generated_tokens": 45, "time_taken_llm": 0.25}  # fmt: skip


def through_the_processor(rows, **options):
    """preprocess -> engine -> postprocess, merging columns as Ray Data LLM's processor does
    (the preprocess output is added to the row; every column reaches postprocess)."""
    for row in rows:
        prepared = {**row, **preprocess(row, model="scene-vllm", box_format="pixel", **options)}
        yield postprocess(engine(prepared))


def test_messages_are_what_gavel_sends_to_an_openai_compatible_server(dataset, monkeypatch):
    from gavel.models.openai_compat import OpenAIChatModel

    monkeypatch.setenv("GAVEL_TEST_KEY", "k")
    for side in (None, 64):  # unchanged files, then images resized (re-encoded)
        server = OpenAIChatModel("m", base_urls="http://127.0.0.1:9/v1",
                                 api_key_env="GAVEL_TEST_KEY", max_image_side=side)  # fmt: skip
        for request, row in zip(requests_of(dataset), request_rows(requests_of(dataset)),
                                strict=True):  # fmt: skip
            prepared = preprocess(row, model="m", box_format="pixel", max_tokens=77,
                                  max_image_side=side)  # fmt: skip
            content, sent = server.build_content(request)
            assert prepared["messages"] == [{"role": "user", "content": content}]
            assert prepared["gavel_sent"] == list(sent)
            assert prepared["sampling_params"] == {"temperature": 0.0, "max_tokens": 77}
        assert side is None or max(sent) == side


def test_an_unchanged_png_is_sent_byte_for_byte_and_the_system_message_first(dataset):
    (request, *_) = requests_of(dataset)
    row = next(request_rows([replace(request, system="You are a careful judge.")]))
    messages = preprocess(row, model="m", box_format="pixel")["messages"]
    assert messages[0] == {"role": "system", "content": "You are a careful judge."}
    url = messages[1]["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.partition(",")[2]) == request.images[0].read_bytes()
    assert messages[1]["content"][1] == {"type": "text", "text": request.prompt}


def test_lines_written_from_the_replies_equal_a_local_run_and_score_the_same(
    dataset, tmp_path, gavel
):
    local = tmp_path / "local.jsonl"
    run_model(load_model("scene"), requests_of(dataset), local, progress=False)
    out = tmp_path / "ray.jsonl"
    assert (
        write_predictions(through_the_processor(request_rows(requests_of(dataset))), out) == SAMPLES
    )

    def said(path):
        return [(p["id"], p["response"], p["box_format"], p.get("sent_size"))
                for p in map(json.loads, path.read_text().splitlines())]  # fmt: skip

    assert said(out) == said(local)
    first = json.loads(out.read_text().splitlines()[0])
    assert first["model"] == "scene-vllm"
    assert (first["prompt_tokens"], first["completion_tokens"], first["latency_s"]) == (
        321,
        45,
        0.25,
    )

    for name, path in (("local", local), ("ray", out)):
        done = gavel("score", "--data", dataset / "gavel.jsonl", "--predictions", path,
                     "--out", tmp_path / f"{name}.results.json")  # fmt: skip
        assert done.returncode == 0, done.stderr
    scores = [(tmp_path / f"{name}.results.scores.jsonl").read_text() for name in ("local", "ray")]
    assert scores[0] == scores[1] and len(scores[0].splitlines()) == SAMPLES


def test_a_failed_generation_is_written_with_its_error_and_resume_skips_what_is_there(
    dataset, tmp_path
):
    requests = requests_of(dataset)
    rows = list(request_rows(requests))
    out = tmp_path / "ray.jsonl"
    # Ray sends a failed row past postprocess, with every column and the error set.
    failed = {**rows[0], **preprocess(rows[0], model="scene-vllm", box_format="pixel"),
              ERROR_COLUMN: "ValueError: prompt too long"}  # fmt: skip
    assert write_predictions([failed], out) == 1
    line = json.loads(out.read_text())
    assert line == {"id": requests[0].sample_id, "error": "ValueError: prompt too long",
                    "model": "scene-vllm"}  # fmt: skip

    out.write_bytes(out.read_bytes() + b'{"id": "cut sh')  # a crash mid-line
    done = {requests[0].sample_id}
    again = write_predictions(through_the_processor(request_rows(requests, done)), out)
    assert again == SAMPLES - 1
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert ids == [request.sample_id for request in requests]
    # Rows for ids already written (a rerun without `done`) are not written twice.
    assert write_predictions(through_the_processor(request_rows(requests)), out) == 0


def test_a_row_without_a_prediction_is_one_clear_error():
    from gavel.errors import GavelError

    with pytest.raises(GavelError, match=r"postprocess=gavel\.runner\.ray_data\.postprocess"):
        prediction_line({"gavel_id": "x", "generated_text": "hi"})


def test_a_video_is_sent_as_its_sampled_frames(counting_video, tmp_path):
    from gavel.requests import Request

    video = counting_video(tmp_path / "v.mp4", frames=16)
    request = Request(sample_id="v", task="videohallucer", prompt="Is it grey?",
                      images=(video,))  # fmt: skip
    prepared = preprocess(next(request_rows([request])), model="m", box_format=None, frames=4)
    parts = prepared["messages"][0]["content"]
    assert [part["type"] for part in parts] == ["image_url"] * 4 + ["text"]
    levels = [int(pixels_of(part["image_url"]["url"]).mean()) for part in parts[:4]]
    assert levels == sorted(levels) and len(set(levels)) == 4  # four different frames, in order
    assert prepared["gavel_sent"] == [64, 48]
    assert msgspec.json.decode(postprocess({**prepared, "gavel_id": "v",
                                            "generated_text": "yes"})["prediction"]) == {
        "id": "v", "response": "yes", "model": "m", "sent_size": [64, 48]}  # fmt: skip


@pytest.mark.parametrize(("generated", "expected"), [(45, "length"), (44, "stop")])
def test_an_answer_that_used_every_token_allowed_is_marked_cut_off(dataset, generated, expected):
    """vLLM's stage returns how many tokens it generated, not why it stopped: as many as
    ``max_tokens`` means the limit cut the answer."""
    row = next(iter(request_rows(requests_of(dataset))))
    prepared = {**row, **preprocess(row, model="scene-vllm", box_format="pixel", max_tokens=45)}
    replied = {**engine(prepared), "num_generated_tokens": generated}
    line = msgspec.json.decode(postprocess(replied)["prediction"])
    assert line["finish_reason"] == expected
    assert (
        msgspec.json.decode(postprocess({**replied, "finish_reason": "abort"})["prediction"])[
            "finish_reason"
        ]
        == "abort"
    )


def test_a_file_several_rows_send_is_encoded_once_per_process(tmp_path, monkeypatch):
    from gavel.media.image_cache import EncodedImages
    from gavel.runner import ray_data

    monkeypatch.setattr(ray_data, "ENCODED", EncodedImages())
    photo = tmp_path / "photo.png"
    Image.new("RGB", (40, 30), (200, 10, 10)).save(photo)
    captions = [Request(f"s{i}", "gavel", f"caption {i}", images=(photo,)) for i in range(4)]
    rows = list(request_rows(captions))
    urls = [preprocess(row, model="m", box_format="pixel")["messages"][0]["content"][0]
            for row in rows]  # fmt: skip
    assert ray_data.ENCODED.misses == 1 and ray_data.ENCODED.hits == 3
    assert all(url == urls[0] for url in urls)
    resized = preprocess(rows[0], model="m", box_format="pixel", max_image_side=20)
    assert resized["gavel_sent"] == [20, 15] and ray_data.ENCODED.misses == 2  # another entry
    Image.new("RGB", (50, 30), (0, 0, 255)).save(photo)  # replaced: encoded afresh
    replaced = preprocess(rows[1], model="m", box_format="pixel")
    assert replaced["gavel_sent"] == [50, 30] and ray_data.ENCODED.misses == 3
