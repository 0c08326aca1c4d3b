"""``gavel generate`` (and ``gavel run``) choose a video's frames from the command line, and
record the choice, against a real Chat Completions server on loopback."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("openai")
pytest.importorskip("av")

#: Most commands here run in-process: an exception that a thread or a finalizer would print as
#: a traceback on the console fails the test instead of passing unseen.
pytestmark = pytest.mark.filterwarnings(
    "error::pytest.PytestUnhandledThreadExceptionWarning",
    "error::pytest.PytestUnraisableExceptionWarning",
)


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    """Two synthetic VideoHallucer pairs, read (never written) by every test here."""
    import gavel

    folder = tmp_path_factory.mktemp("vh")
    return gavel.synthesize("videohallucer", out=folder, n=2)


def generate(gavel_main, server, data, out, *flags):
    return gavel_main("generate", "--benchmark", "videohallucer", "--data", data,
                 "--model", "openai:vlm", "--base-url", server.url, "--no-cache",
                 "--no-progress", "--out", out, *flags)  # fmt: skip


def images_per_request(server) -> list[int]:
    return [sum(p.get("type") == "image_url" for p in body["messages"][-1]["content"])
            for _, body, _ in server.received]  # fmt: skip


def test_frames_sets_the_count_and_is_recorded(gavel_main, server, videos, tmp_path):
    done = generate(gavel_main, server, videos, tmp_path / "p.jsonl", "--frames", "3")
    assert done.code == 0, done.err
    assert images_per_request(server) == [3] * 4
    manifest = json.loads((tmp_path / "p.manifest.json").read_text())
    assert manifest["settings"]["frames"] == {"mode": "uniform", "count": 3}
    assert manifest["adapter"]["frames"] == {"mode": "uniform", "count": 3}


def test_fps_and_max_frames_sample_by_rate(gavel_main, server, videos, tmp_path):
    from gavel.benchmarks.videohallucer.data import load_pairs
    from gavel.benchmarks.videohallucer.prompt import build_requests
    from gavel.media.frames import FrameSampling, sample_frames

    done = generate(
        gavel_main, server, videos, tmp_path / "p.jsonl", "--fps", "2", "--max-frames", "5"
    )
    assert done.code == 0, done.err
    manifest = json.loads((tmp_path / "p.manifest.json").read_text())
    assert manifest["settings"]["frames"] == {"mode": "fps", "fps": 2.0, "max_frames": 5}
    sampling = FrameSampling(mode="fps", fps=2.0, max_frames=5)
    expected = [len(sample_frames(r.images[0], sampling).images)
                for r in build_requests(load_pairs(videos), videos)]  # fmt: skip
    assert sorted(images_per_request(server)) == sorted(expected)
    assert max(expected) <= 5


def test_a_presets_default_applies_and_a_flag_overrides_it(gavel_main, server, videos, tmp_path):
    done = generate(gavel_main, server, videos, tmp_path / "a.jsonl", "--preset", "gemini")
    assert done.code == 0, done.err
    manifest = json.loads((tmp_path / "a.manifest.json").read_text())
    assert manifest["settings"]["frames"] == {"mode": "fps", "fps": 1.0, "max_frames": 32}
    done = generate(gavel_main, server, videos, tmp_path / "b.jsonl", "--preset", "gemini",
                    "--frames", "2")  # fmt: skip
    manifest = json.loads((tmp_path / "b.manifest.json").read_text())
    assert manifest["settings"]["frames"] == {"mode": "uniform", "count": 2}


def test_run_passes_the_frame_flags_through(gavel_main, server, videos, tmp_path):
    done = gavel_main("run", "--benchmark", "videohallucer", "--data", videos, "--model", "openai:vlm",
                 "--base-url", server.url, "--no-cache", "--no-progress", "--frames", "2",
                 "--out", tmp_path / "run")  # fmt: skip
    assert done.code == 0, done.err
    manifest = json.loads((tmp_path / "run" / "predictions.manifest.json").read_text())
    assert manifest["settings"]["frames"] == {"mode": "uniform", "count": 2}
    assert images_per_request(server) == [2] * 4


def test_contradictory_or_misplaced_flags_are_refused(gavel_main, server, videos, tmp_path):
    out = tmp_path / "p.jsonl"
    both = generate(gavel_main, server, videos, out, "--frames", "3", "--fps", "1")
    assert both.code == 2 and "not both" in both.err
    alone = generate(gavel_main, server, videos, out, "--max-frames", "3")
    assert alone.code == 2 and "give --fps too" in alone.err
    images = gavel_main("generate", "--data", videos / "nothing.jsonl", "--model", "scene",
                   "--out", out, "--frames", "3")  # fmt: skip
    assert images.code == 2 and "only for video benchmarks" in images.err
    assert "Traceback" not in both.err + alone.err + images.err
    assert not out.exists() and server.received == []


@pytest.mark.parametrize(
    ("model", "flags", "message"),
    [
        ("hf:some/model", ["--timeout", "5"], "--timeout applies to openai: models only"),
        ("hf:some/model", ["--api-key-env", "KEY"], "--api-key-env applies to openai: models only"),
        ("scene", ["--temperature", "0.5"], "--temperature applies to openai: and hf: models only"),
        ("replay:p.jsonl", ["--max-tokens", "9"], "--max-tokens applies to openai: and hf: models"),
        ("openai:m", ["--device", "cpu"], "--device applies to hf: models only"),
        ("openai:m", ["--dtype", "float32"], "--dtype applies to hf: models only"),
    ],
)
def test_a_flag_the_model_does_not_take_is_named_as_a_flag(
    gavel_main, tmp_path, model, flags, message
):
    from gavel.examples import example_dir

    data = example_dir("photos") / "gavel.jsonl"
    done = gavel_main(
        "generate", "--data", data, "--model", model, *flags, "--out", tmp_path / "p.jsonl"
    )
    assert done.code == 2 and "Traceback" not in done.err
    assert f"Error: {message}" in done.err
    assert not (tmp_path / "p.jsonl").exists()
