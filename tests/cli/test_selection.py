"""--limit, --sample-id and --shuffle on generate, score and run; values worked out by hand.

The shipped photos hold 12 GAVEL samples in this order: astronaut-1, astronaut-2, coffee-1,
coffee-2, chelsea-1, chelsea-2, camera-1, camera-2, rocket-1, rocket-2, hubble-1, hubble-2;
all are hallucinated except rocket-2 and hubble-2. The predictions below call every caption
hallucinated, so a sample is right exactly when it is hallucinated.
"""

from __future__ import annotations

import json

import pytest

from gavel.examples import example_dir

PHOTOS = example_dir("photos")
GOLD = PHOTOS / "gavel.jsonl"
IDS = [json.loads(line)["id"] for line in GOLD.read_text().splitlines()]


@pytest.fixture
def always_yes(tmp_path):
    """Every caption called hallucinated (no boxes), and one line for an id not in the data."""
    answer = json.dumps({"hallucination": True, "explanation": "wrong", "boxes": []})
    lines = [{"id": i, "response": answer, "box_format": "pixel"} for i in IDS]
    lines.append({"id": "ghost", "response": answer, "box_format": "pixel"})
    path = tmp_path / "always-yes.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def score(gavel_main, tmp_path, predictions, *flags):
    out = tmp_path / "results.json"
    done = gavel_main("score", "--data", GOLD, "--predictions", predictions, "--out", out,
                      "--bootstrap", "0", *flags)  # fmt: skip
    result = json.loads(out.read_text()) if done.code == 0 else None
    return done, result


def test_full_score_has_no_selection_note(gavel_main, tmp_path, always_yes):
    done, result = score(gavel_main, tmp_path, always_yes)
    assert done.code == 0, done.err
    assert result["metrics"]["verification"]["accuracy"] == pytest.approx(100 * 10 / 12)
    assert "selection" not in result["manifest"]["settings"] and "selection:" not in done.out


def test_limit_scores_the_first_n_and_every_table_says_so(gavel_main, tmp_path, always_yes):
    done, result = score(gavel_main, tmp_path, always_yes, "--limit", "3", "--format", "markdown")
    assert done.code == 0, done.err
    assert result["counts"]["total"] == 3 and result["counts"]["missing"] == 0
    assert result["metrics"]["verification"]["accuracy"] == 100.0  # three hallucinated ones
    assert result["counts"]["unknown_ids"] == 1  # ghost; the other nine are set aside
    assert result["manifest"]["settings"]["selection"] == {
        "limit": 3, "sample_ids": [], "shuffle": False, "seed": None, "unit": "sample",
        "chosen": 3, "of": 12,
    }  # fmt: skip
    scored = [json.loads(line)["id"] for line in (tmp_path / "results.scores.jsonl").open()]
    assert scored == IDS[:3]
    note = "selection: 3 of 12 samples scored (--limit 3)"
    assert f"*{note}; the numbers describe these only*" in done.out  # under the Markdown table
    for style in ("table", "csv", "latex"):
        again, _ = score(gavel_main, tmp_path, always_yes, "--limit", "3", "--format", style)
        assert note in " ".join(again.out.split()), style  # the terminal table wraps its notes
    page = gavel_main("report", tmp_path / "results.json", "--out", tmp_path / "report")
    assert page.code == 0, page.err
    html = " ".join(p.read_text() for p in (tmp_path / "report").rglob("*.html"))
    assert note in html


def test_sample_ids_from_flags_and_from_a_file(gavel_main, tmp_path, always_yes):
    listed = tmp_path / "ids.txt"
    listed.write_text("rocket-2\n# the clean one and its hallucinated twin\nrocket-1\n")
    by_flag, a = score(gavel_main, tmp_path, always_yes, "--sample-id", "rocket-1",
                       "--sample-id", "rocket-2")  # fmt: skip
    by_file, b = score(gavel_main, tmp_path, always_yes, "--sample-id", f"@{listed}")
    assert by_flag.code == by_file.code == 0, by_flag.err + by_file.err
    for result in (a, b):
        # rocket-1 right (tp), rocket-2 wrong (fp): accuracy 1/2, precision 1/2, recall 1/1
        verification = result["metrics"]["verification"]
        assert (verification["tp"], verification["fp"], verification["fn"]) == (1, 1, 0)
        assert verification["accuracy"] == 50.0 and verification["recall"] == 100.0
        assert result["manifest"]["settings"]["selection"]["sample_ids"] == [
            "rocket-1",
            "rocket-2",
        ] or result["manifest"]["settings"]["selection"]["sample_ids"] == ["rocket-2", "rocket-1"]
    assert "selection: 2 of 12 samples scored (2 --sample-id)" in by_file.out


def test_an_unknown_sample_id_is_one_clear_error(gavel_main, tmp_path, always_yes):
    done, _ = score(gavel_main, tmp_path, always_yes, "--sample-id", "rocket-1",
                    "--sample-id", "rocket-3")  # fmt: skip
    assert done.code != 0
    assert "no sample with id 'rocket-3' in the data" in done.err
    assert "Traceback" not in done.err and not (tmp_path / "results.json").exists()
    missing = gavel_main("score", "--data", GOLD, "--predictions", always_yes, "--sample-id",
                         f"@{tmp_path / 'absent.txt'}")  # fmt: skip
    assert missing.code != 0 and "absent.txt: no such file" in missing.err


def test_shuffle_needs_limit(gavel_main, tmp_path, always_yes):
    done, _ = score(gavel_main, tmp_path, always_yes, "--shuffle")
    assert done.code == 2 and "give --limit too" in done.err


def test_shuffled_generate_is_seeded_and_in_file_order(gavel_main, tmp_path):
    def generate(seed, name):
        out = tmp_path / f"{name}.jsonl"
        done = gavel_main("generate", "--data", GOLD, "--model",
                          f"replay:{PHOTOS / 'predictions' / 'gpt.jsonl'}", "--out", out,
                          "--limit", "4", "--shuffle", "--seed", seed, "--no-progress")  # fmt: skip
        assert done.code == 0, done.err
        return [json.loads(line)["id"] for line in out.open()], out

    first, out = generate(5, "a")
    again, _ = generate(5, "b")
    assert first == again and len(first) == 4
    assert first == sorted(first, key=IDS.index)  # asked in file order
    others = {tuple(generate(seed, f"s{seed}")[0]) for seed in range(6, 12)}
    assert len(others | {tuple(first)}) > 1  # the seed decides which four
    manifest = json.loads(out.with_suffix(".manifest.json").read_text())
    assert manifest["settings"]["selection"] == {
        "limit": 4, "sample_ids": [], "shuffle": True, "seed": 5, "unit": "sample",
        "chosen": 4, "of": 12,
    }  # fmt: skip


def test_run_takes_the_same_samples_for_both_steps(gavel_main, tmp_path):
    out = tmp_path / "run"
    done = gavel_main("run", "--data", GOLD, "--model",
                      f"replay:{PHOTOS / 'predictions' / 'gpt.jsonl'}", "--out", out,
                      "--sample-id", "hubble-2", "--sample-id", "astronaut-1", "--no-progress",
                      "--bootstrap", "0")  # fmt: skip
    assert done.code == 0, done.err
    asked = [json.loads(line)["id"] for line in (out / "predictions.jsonl").open()]
    assert asked == ["astronaut-1", "hubble-2"]
    result = json.loads((out / "results.json").read_text())
    assert result["counts"]["total"] == 2 and result["counts"]["missing"] == 0
    assert result["manifest"]["settings"]["selection"]["chosen"] == 2
    assert "selection: 2 of 12 samples scored" in done.out


def test_videohallucer_counts_pairs_and_never_splits_one(gavel_main, tmp_path):
    from gavel.benchmarks.videohallucer.data import load_pairs

    data = tmp_path / "vh"
    assert gavel_main("synth", "--benchmark", "videohallucer", "--n", "3", "--out", data).code == 0
    pairs = load_pairs(data)
    # every question answered with its gold word: each pair right on both sides
    lines = [
        {"id": pair.question_id(side), "response": pair.side(side).answer.capitalize() + "."}
        for pair in pairs
        for side in ("basic", "hallucination")
    ]
    predictions = tmp_path / "vh.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "vh-results.json"
    done = gavel_main("score", "--benchmark", "videohallucer", "--data", data, "--predictions",
                      predictions, "--out", out, "--limit", "2", "--bootstrap", "0")  # fmt: skip
    assert done.code == 0, done.err
    result = json.loads(out.read_text())
    assert result["counts"]["pairs"] == 2
    scored = [json.loads(line) for line in (tmp_path / "vh-results.scores.jsonl").open()]
    assert [(s["pair"], s["side"]) for s in scored] == [
        (pair.id, side) for pair in pairs[:2] for side in ("basic", "hallucination")
    ]
    assert "selection: 2 of 3 pairs scored (--limit 2)" in done.out
    unknown = gavel_main("score", "--benchmark", "videohallucer", "--data", data,
                         "--predictions", predictions, "--sample-id", "temporal/999")  # fmt: skip
    assert unknown.code != 0 and "no pair with id 'temporal/999'" in unknown.err
