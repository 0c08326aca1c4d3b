"""``--dry-run`` against a real loopback server whose usage is counted with a real tokenizer:
nothing is sent, the request counts are exact, the input tokens within 10% of what the server
then reports, and the resume file and the cache are counted exactly."""

from __future__ import annotations

import base64
import io
import json

import pytest

pytest.importorskip("openai", reason="served models need the api extra (openai)")


def rows(text: str, title_start: str) -> dict:
    """The rows of the report section whose title starts with ``title_start``, by name."""
    report = json.loads(text)
    assert report["dry_run"] is True
    (section,) = [s for s in report["sections"] if s["title"].startswith(title_start)]
    return {row["name"]: row["value"] for row in section["rows"]}


def qwen_tokens_by_hand(url: str) -> int:
    """Qwen2.5-VL's count for a small image, as the server sees the data URL: one token per
    28 x 28 px of the size rounded to multiples of 28, plus the two vision tokens."""
    from PIL import Image

    data = base64.b64decode(url.split(",", 1)[1])
    width, height = Image.open(io.BytesIO(data)).size
    return round(width / 28) * round(height / 28) + 2


@pytest.fixture
def synth_set(gavel_main, tmp_path):
    code, text = gavel_main("synth", "--n", "10", "--out", tmp_path / "set")
    assert code == 0, text
    return tmp_path / "set" / "gavel.jsonl"


def generate(server, data, out, cache, tokenizer, *extra):
    return ["generate", "--data", data, "--model", "openai:m", "--preset", "qwen2.5-vl",
            "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--max-tokens", "64",
            "--cache", cache, "--tokenizer", tokenizer, "--no-progress", "--out", out, *extra]  # fmt: skip


def test_generation_estimate_matches_the_ledger_and_counts_resume_and_cache(
    gavel_main, counting_server, synth_set, tokenizer_dir, tmp_path, api_key
):
    server = counting_server
    server.served = [{"id": "m"}]  # the preflight would ask GET /models: it must not
    server.image_tokens = qwen_tokens_by_hand
    out, cache = tmp_path / "p.jsonl", tmp_path / "cache.sqlite"
    command = generate(server, synth_set, out, cache, tokenizer_dir, "--price", "1,4")

    done = gavel_main(*command, "--dry-run", "--dry-run-format", "json")
    assert done.code == 0, done.text
    assert server.hits == 0 and server.models_asked == 0  # nothing sent, not even the preflight
    assert not out.exists() and not cache.exists()  # nothing written
    before = rows(done.out, "model")
    assert before["requests"] == before["to send"] == 10
    assert before["images and frames"] == 10
    assert before["output tokens"] == 10 * 64  # no earlier answers: --max-tokens, an upper bound

    done = gavel_main(*command)
    assert done.code == 0, done.text
    assert server.hits == before["to send"]  # exact
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    ledger_in = sum(line["prompt_tokens"] for line in lines)
    assert abs(before["input tokens"] - ledger_in) <= 0.10 * ledger_in
    spent = (ledger_in * 1 + sum(line["completion_tokens"] for line in lines) * 4) / 1e6
    assert f"cost {spent:.4f}" in done.err  # --price also costs the real run

    done = gavel_main(*command, "--dry-run", "--dry-run-format", "json")
    resumed = rows(done.out, "model")
    assert (resumed["already in the resume file"], resumed["to send"]) == (10, 0)

    other = tmp_path / "q.jsonl"  # a new file: every answer is in the cache
    done = gavel_main(*generate(server, synth_set, other, cache, tokenizer_dir),
                      "--dry-run", "--dry-run-format", "json")  # fmt: skip
    cached = rows(done.out, "model")
    assert (cached["answered by the cache"], cached["to send"]) == (10, 0)
    assert not other.exists()

    # Part of a file, no cache: the rest's replies are estimated from the earlier ones.
    partial = tmp_path / "r.jsonl"
    partial.write_text("".join(line + "\n" for line in out.read_text().splitlines()[:4]))
    again = generate(server, synth_set, partial, cache, tokenizer_dir, "--no-cache",
                     "--price", "1,4")  # fmt: skip
    done = gavel_main(*again, "--dry-run", "--dry-run-format", "json")
    half = rows(done.out, "model")
    assert (half["already in the resume file"], half["to send"]) == (4, 6)
    assert "mean of 4 earlier answers" in done.out
    hits = server.hits
    done = gavel_main(*again)
    assert done.code == 0, done.text
    assert server.hits - hits == 6
    new = [json.loads(line) for line in partial.read_text().splitlines()[4:]]
    real = sum(n["prompt_tokens"] for n in new) * 1 + sum(n["completion_tokens"] for n in new) * 4
    assert abs(half["cost (USD)"] - real / 1e6) <= 0.10 * real / 1e6


def test_the_table_says_how_each_figure_was_found(gavel_main, synth_set, tmp_path, api_key):
    done = gavel_main("generate", "--data", synth_set, "--model", "openai:gpt-4o", "--preset",
                      "gpt", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env",
                      "GAVEL_TEST_KEY", "--out", tmp_path / "p.jsonl", "--dry-run")  # fmt: skip
    assert done.code == 0, done.text
    assert "Dry run" in done.out and "to send" in done.out
    assert "estimate (~4 characters a token" in done.out  # no tokenizer here: said so
    assert "OpenAI tiles" in done.out and "an upper bound" in done.out
    assert "built-in table (gpt-4o, " in done.out and "approximate" in done.out
    assert "nothing was sent" in done.out


def test_a_video_costs_its_sampled_frames_as_images(counting_video, tmp_path):
    from gavel.cost.estimate import Sending, estimate
    from gavel.cost.image_tokens import RULES
    from gavel.cost.tokens import estimate_counter
    from gavel.media.sampling import FrameSampling
    from gavel.requests import Request

    video = counting_video(tmp_path / "v.mp4", frames=24, step=10, fps=8)  # 3 s, 64 x 48
    question = Request(sample_id="q1", task="t", prompt="Is it grey?", images=(str(video),))
    pair = [question, Request(sample_id="q2", task="t", prompt="Is it red?", images=(str(video),))]

    def frames_and_tokens(rule, sampling):
        sending = Sending(counter=estimate_counter(), image_rule=RULES[rule], sampling=sampling)
        part = estimate("model", "m", pair, sending, None, None, "", None)
        return part.images, part.image_tokens

    # 4 frames a question, 258 tokens a Gemini frame; both questions of the pair are sent.
    assert frames_and_tokens("gemini", FrameSampling(count=4)) == (8, 8 * 258)
    # One frame a second of a 3 s video at 8 fps: frames 0, 8 and 16. A 64 x 48 frame is one
    # OpenAI tile: 85 + 170 tokens.
    one_a_second = FrameSampling(mode="fps", fps=1.0, max_frames=32)
    assert frames_and_tokens("openai", one_a_second) == (6, 6 * 255)


def test_an_unreadable_video_is_named_not_counted_as_no_frames(counting_video, tmp_path):
    from gavel.cost.estimate import Sending, estimate
    from gavel.cost.image_tokens import RULES
    from gavel.cost.tokens import estimate_counter
    from gavel.media.sampling import FrameSampling
    from gavel.requests import Request

    good = counting_video(tmp_path / "good.mp4", frames=8)
    broken = []
    for n in range(7):
        broken.append(tmp_path / f"broken{n}.mp4")
        broken[-1].write_bytes(b"not a video" * 100)
    requests = [Request(sample_id=f"q{n}", task="t", prompt="Grey?", images=(str(video),))
                for n, video in enumerate([good, *broken])]  # fmt: skip
    sending = Sending(counter=estimate_counter(), image_rule=RULES["gemini"],
                      sampling=FrameSampling(count=4))  # fmt: skip
    part = estimate("model", "m", requests, sending, None, None, "", None)
    assert part.images == 4  # the good video's frames only
    named = [note for note in part.notes if note.startswith("not counted: ") and ".mp4" in note]
    assert [note.split(": ")[1] for note in named] == [str(p) for p in broken[:5]]
    assert all("cannot read video" in note for note in named)
    assert "not counted: 2 more unreadable images or videos (7 in all)" in part.notes
