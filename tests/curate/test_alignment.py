"""Alignment ratings: lenient reading, re-asking invalid replies, --below, resume and cache,
against a real OpenAI-protocol server on loopback."""

from __future__ import annotations

import json

from PIL import Image

from gavel.curate.alignment import read_rating, score_pairs
from gavel.curate.pairs import Pair, write_pairs
from gavel.models.registry import load_model
from gavel.prompts import Template, load_template


def test_ratings_are_read_leniently_and_validated():
    cases = {
        '{"score": 2, "reason": "The car is blue."}': (2, "The car is blue."),
        '```json\n{"score": "4/5", "reason": "ok"}\n```': (4, "ok"),
        'Sure! {"rating": 3.0, "explanation": "half"} Hope this helps.': (3, "half"),
        "<think>maybe 5</think>Score: 1": (1, ""),
        "4/5": (4, ""),
        '[{"alignment": 5}]': (5, ""),
    }
    for text, (score, reason) in cases.items():
        rating = read_rating(text)
        assert rating is not None and (rating.score, rating.reason) == (score, reason), text
    for text in ('{"score": 7}', '{"score": 2.5}', '{"score": true}', "no idea", "", None):
        assert read_rating(text) is None, text


def test_the_prompt_is_versioned_and_asks_for_the_documented_json():
    template = load_template("alignment_v1")
    text = template.render(caption="A red car.")
    assert 'Sentence: "A red car."' in text
    assert '{"score": 1-5, "reason":' in text
    assert len(template.sha256) == 64


def reply_by_caption(body, number):
    prompt = body["messages"][-1]["content"]
    text = next(part["text"] for part in prompt if part["type"] == "text")
    if "red car" in text:
        return 'The car looks blue. {"score": 2, "reason": "The car is blue, not red."}'
    if "nonsense" in text:
        return "I would rather not say."
    return '```json\n{"score": "5", "reason": "All correct."}\n```'


def make_pairs(tmp_path):
    images = tmp_path / "photos"
    images.mkdir()
    Image.new("RGB", (64, 48), "blue").save(images / "car.png")
    pairs = tmp_path / "pairs.jsonl"
    write_pairs(
        pairs,
        [
            Pair(id="car#0", image="car.png", caption="A red car is parked here."),
            Pair(id="car#1", image="car.png", caption="The picture is mostly blue."),
            Pair(id="car#2", image="car.png", caption="Some nonsense about the picture."),
        ],
    )
    return images, pairs


def test_score_keeps_low_pairs_with_reason_and_resumes(tmp_path, server, api_key):
    images, pairs = make_pairs(tmp_path)
    server.reply = reply_by_caption
    model = load_model("openai:rater", base_urls=(server.url,), api_key_env="GAVEL_TEST_KEY")
    out = tmp_path / "scored.jsonl"
    options = {"concurrency": 4, "progress": False, "cache": tmp_path / "cache.sqlite"}
    result = score_pairs(pairs, images, model, out, below=4, invalid_retries=1, **options)
    assert (result.pairs, result.rated, result.failed, result.kept) == (3, 2, 1, 1)
    (kept,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert kept["id"] == "car#0" and kept["alignment"] == 2.0
    assert kept["alignment_reason"] == "The car is blue, not red."
    assert kept["alignment_model"] == "rater"
    assert server.prompts.total() == 1 + 1 + 2  # the invalid reply was asked twice

    # everything without --below, and the rerun sends only the request that failed before
    model = load_model("openai:rater", base_urls=(server.url,), api_key_env="GAVEL_TEST_KEY")
    again = score_pairs(pairs, images, model, out, invalid_retries=0, **options)
    assert again.pairs == 3 and server.prompts.total() == 4 + 1
    lines = {json.loads(line)["id"]: json.loads(line) for line in out.read_text().splitlines()}
    assert lines["car#1"]["alignment"] == 5.0
    assert "alignment" not in lines["car#2"]
    assert "no valid rating" in lines["car#2"]["alignment_error"]

    # another model is asked afresh: the old model's ratings are never labelled with its name
    other = load_model("openai:rater-2", base_urls=(server.url,), api_key_env="GAVEL_TEST_KEY")
    score_pairs(pairs, images, other, out, invalid_retries=0, **options)
    assert server.prompts.total() == 5 + 3
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["alignment_model"] for line in lines} == {"rater-2"}
    # and so is the same model with another prompt (the shipped one, reworded)
    shipped = load_template("alignment_v1")
    reworded = Template("mine.txt", shipped.text.replace("You are rating", "Please rate"))
    model = load_model("openai:rater", base_urls=(server.url,), api_key_env="GAVEL_TEST_KEY")
    score_pairs(pairs, images, model, out, template=reworded, invalid_retries=0, **options)
    assert server.prompts.total() == 8 + 3


def test_score_command_end_to_end(tmp_path, server, api_key, gavel):
    images, pairs = make_pairs(tmp_path)
    server.reply = reply_by_caption
    out = tmp_path / "scored.jsonl"
    done = gavel(
        "curate",
        "score",
        "--pairs",
        pairs,
        "--images",
        images,
        "--model",
        "openai:rater",
        "--base-url",
        server.url,
        "--api-key-env",
        "GAVEL_TEST_KEY",
        "--out",
        out,
        "--below",
        "4",
        "--no-cache",
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    assert "2 of 3 pairs rated, 1 kept (rated below 4), 1 not rated" in done.stderr
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["car#0"]
    assert (tmp_path / "scored.replies.jsonl").exists()
    assert api_key not in out.read_text() + (tmp_path / "scored.replies.jsonl").read_text()
