"""DetailVerifyBench: loaders, prompt, answer handling, the official metrics and the modes."""

from __future__ import annotations

import json
import re

import pytest

from gavel.benchmarks.detailverify.data import load_samples
from gavel.benchmarks.detailverify.prompt import build_requests, load_prompt
from gavel.benchmarks.detailverify.scoring import NAME, DetailVerifySettings, evaluate_files
from gavel.benchmarks.detailverify.table import detailverify_table
from gavel.errors import ConfigError, DataError
from gavel.report.tables import render

H, E = "<HALLUCINATION>", "</HALLUCINATION>"
COLOR = "Object Color Hallucination"
CATEGORY = "Object Category Hallucination"
NUMBER = "Object Number Hallucination"


def write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def real(filename, tagged, labels=(), modify="Yes", category="Nature", gt=None):
    plain = tagged.replace("<Hallucination>", "").replace("</Hallucination>", "")
    return {
        "image": f"https://example.org/{filename}",
        "filename": filename,
        "category": category,
        "Pre-recognition": "",
        "GT_description": plain if gt is None else gt,
        "Modify": modify,
        "prompt": "Describe the image in detail.",
        "modelname": "some-captioner",
        "description_tag": tagged,
        "hallucination_labels": [{"text": t, "labels": list(c)} for t, c in labels],
    }


def synthetic(image_path, tagged, edits=(), category="Chart"):
    return {
        "image": None,
        "id": 7,
        "image_path": image_path,
        "original_description": "The original caption.",
        "description_tag": tagged,
        "description_tag_nodetect": tagged,
        "adversarial_iterations": 2,
        "final_detection_rate": 0.5,
        "iteration_history": [],
        "category": category,
        "hallucination_labels": [
            {
                "location_id": i,
                "attribute_type": kind,
                "original_span": "x",
                "candidate_replacements": [text],
                "final_replacement": text,
                "reason": "r",
                "applied": applied,
            }
            for i, (text, kind, applied) in enumerate(edits)
        ],
    }


def result(text):
    return f"<result>{text}</result>"


# The three samples of the worked example in docs/detailverify.md.
A = real(
    "a.jpg",
    "The <Hallucination>red</Hallucination> car is parked. "
    "Two <Hallucination>dogs sit</Hallucination> nearby.",
    labels=[("red", [COLOR]), ("dogs sit", [CATEGORY, NUMBER])],
)
B = real("b.jpg", "A calm lake at dawn.", modify="No")
C = real("c.jpg", "A calm lake at dawn.", modify="No", category="Chart")
ANSWERS = {
    "a.jpg": result(f"The {H}red{E} car is {H}parked{E}. Two dogs sit nearby."),
    "b.jpg": result("NO HALLUCINATION"),
    "c.jpg": result(f"A calm {H}lake{E} at dawn."),
}


def run(tmp_path, rows, answers, **settings):
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    preds = [
        a if isinstance(a, dict) else {"id": i, "response": a, "model": "m"}
        for i, a in answers.items()
    ]
    predictions = write_jsonl(tmp_path / "pred.jsonl", preds)
    settings.setdefault("resamples", 50)
    return evaluate_files(data, predictions, DetailVerifySettings(**settings))


# --- loading --------------------------------------------------------------------------------


def test_real_layout(tmp_path):
    (sample,) = load_samples(write_jsonl(tmp_path / "d.jsonl", [A]))
    assert sample.id == "a.jpg"
    assert sample.layout == "real_test"
    assert sample.image == "Nature/a.jpg"
    assert sample.category == "Nature"
    assert sample.tagged == f"The {H}red{E} car is parked. Two {H}dogs sit{E} nearby."
    assert sample.caption == "The red car is parked. Two dogs sit nearby."
    assert sample.labels == [("red", [COLOR]), ("dogs sit", [CATEGORY, NUMBER])]
    assert sample.modified


def test_unmodified_real_samples_show_gt_description(tmp_path):
    row = real("b.jpg", "A calm lake.", modify="No", gt="A calm lake at dawn.")
    (sample,) = load_samples(write_jsonl(tmp_path / "d.jsonl", [row]))
    assert not sample.modified
    assert sample.caption == "A calm lake at dawn."
    assert sample.tagged == "A calm lake."  # gold still comes from description_tag


def test_modify_other_than_yes_counts_as_unmodified_as_officially(tmp_path):
    row = real("b.jpg", "A <Hallucination>red</Hallucination> lake.", modify="yes", gt="A lake.")
    (sample,) = load_samples(write_jsonl(tmp_path / "d.jsonl", [row]))
    assert not sample.modified and sample.caption == "A lake."


def test_a_boolean_modify_counts_as_unmodified_as_officially_with_a_warning(tmp_path):
    # The official converter tests Modify == "Yes", which a JSON true never is.
    rows = [
        real("t.jpg", "A <Hallucination>red</Hallucination> car.", modify=True, gt="A blue car."),
        real("f.jpg", "A calm lake.", modify=False),
    ]
    samples = load_samples(write_jsonl(tmp_path / "d.jsonl", rows))
    assert [s.modified for s in samples] == [False, False]
    assert samples[0].caption == "A blue car."  # GT_description, not the tagged caption
    answers = {"t.jpg": result("NO HALLUCINATION"), "f.jpg": result("NO HALLUCINATION")}
    result_, _ = run(tmp_path, rows, answers)
    (warning,) = [w for w in result_.warnings if "Modify a JSON boolean" in w]
    assert warning.startswith("2 line(s)") and "even when true" in warning


def test_synthetic_layout_and_labels_from_applied_edits(tmp_path):
    row = synthetic(
        "images/chart/plot_3.png",
        f"Bars are {H}green{E} and {H}four{E} in total.",
        edits=[("green", COLOR, True), ("four", "", True), ("ten", NUMBER, False)],
    )
    (sample,) = load_samples(write_jsonl(tmp_path / "d.jsonl", [row]))
    assert sample.id == "plot_3.png"
    assert sample.layout == "synthetic_test"
    assert sample.image == "plot_3.png"
    assert sample.caption == "Bars are green and four in total."
    assert sample.labels == [("green", [COLOR]), ("four", [])]
    assert sample.category == "Chart"


def test_synthetic_model_reply_is_read_as_the_official_converter_does(tmp_path):
    reply = '```json\n{"edits": [{"applied": true, "final_replacement": "blue", "attribute_type": "C"}]}\n```'
    row = synthetic("x/p.png", f"A {H}blue{E} sky.") | {"model_reply": reply}
    (sample,) = load_samples(write_jsonl(tmp_path / "d.jsonl", [row]))
    assert sample.labels == [("blue", ["C"])]


def test_synthetic_tags_are_used_as_they_are(tmp_path):
    # The advi converter does not normalise: mixed-case tags stay text there.
    row = synthetic("p.png", "A <Hallucination>blue</Hallucination> sky.")
    (sample,) = load_samples(write_jsonl(tmp_path / "d.jsonl", [row]))
    assert H not in sample.tagged and "<Hallucination>" in sample.caption


def test_a_file_may_mix_layouts(tmp_path):
    samples = load_samples(write_jsonl(tmp_path / "d.jsonl", [A, synthetic("s/q.png", "A.")]))
    assert [s.layout for s in samples] == ["real_test", "synthetic_test"]


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ("{not json", None, "not valid JSON"),
        ("[1, 2]", None, "Expected `object`"),
        ({"caption": "x"}, None, "neither layout"),
        ({k: v for k, v in A.items() if k != "GT_description"}, "GT_description", "missing"),
        ({k: v for k, v in A.items() if k != "description_tag"}, "description_tag", "missing"),
        ({k: v for k, v in A.items() if k != "category"}, "category", "missing"),
        (
            {k: v for k, v in synthetic("p.png", "A.").items() if k != "description_tag"},
            "description_tag",
            "missing required field for synthetic_test",
        ),
        (A | {"filename": 3}, "filename", "Expected `str`"),
        (A | {"filename": "../a.jpg"}, "filename", "not a plain file name"),
        (A | {"hallucination_labels": [{"text": 1}]}, "hallucination_labels[0].text", "Expected"),
        (A | {"description_tag": "The <Hallucination>red car."}, "description_tag", "unbalanced"),
        (A | {"description_tag": f"a {H}b {H}c{E}{E}"}, "description_tag", "nested"),
        (A | {"description_tag": f"a {E}b"}, "description_tag", "unbalanced"),
        (A | {"description_tag": f" {H}{E} "}, "description_tag", "empty caption"),
    ],
)
def test_malformed_lines_name_file_line_and_field(tmp_path, line, field, message):
    path = write_jsonl(tmp_path / "d.jsonl", [B, line])
    with pytest.raises(DataError) as info:
        load_samples(path)
    error = info.value
    assert error.line == 2
    assert error.path == str(path)
    if field is not None:
        assert error.field == field
    if message is not None:
        assert message in error.message


def test_missing_required_fields_are_named(tmp_path):
    line = {k: v for k, v in synthetic("p.png", "A.").items() if k != "description_tag"}
    with pytest.raises(DataError, match=r"field 'description_tag'.*synthetic_test"):
        load_samples(write_jsonl(tmp_path / "d.jsonl", [line]))


def test_duplicate_ids_and_empty_files_are_rejected(tmp_path):
    with pytest.raises(DataError, match=r"duplicate id 'b\.jpg' \(first on line 1\)"):
        load_samples(write_jsonl(tmp_path / "d.jsonl", [B, B]))
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DataError, match="no samples"):
        load_samples(tmp_path / "empty.jsonl")


# --- prompt and requests ----------------------------------------------------------------------

OFFICIAL_NO_THINK = (
    "Here is an image and its image caption is: {caption}\n"
    "Your task is to act as a meticulous visual verifier. You must judge whether the image "
    "caption contains 'hallucinations'.\n"
    "A 'hallucination' is defined as any word or phrase describing an object, attribute, "
    "relationship, or other visual content that is **verifiably incorrect** or **not visually "
    "present** in the image.\n"
    "You need to output the final verification result in <result> </result> tags following "
    "these strict rules:\n"
    "1. If there is **no hallucination**, output exactly: <result>NO HALLUCINATION</result>\n"
    "2. If there is a hallucination, output the original caption but enclose the specific "
    "hallucinated word or phrase in <HALLUCINATION> </HALLUCINATION> tags. **CRITICAL: Do NOT "
    "correct, rewrite, or remove the hallucinated words.** You must preserve the original text "
    "exactly, only adding tags around the incorrect parts.\n"
    "\n"
    "Here is the exact output format to follow:\n"
    '<result> [The tagged caption OR "NO HALLUCINATION"] </result>'
)
OFFICIAL_THINK = OFFICIAL_NO_THINK.replace(
    "You need to output the final verification result",
    "Let's think step by step and output the final answer in the required format.\n"
    "First, you need to output your detailed reasoning in <think> tags. In this reasoning, "
    "please break down the caption into its key components (objects, attributes, "
    "relationships) and verify each one against the image. If a component is a hallucination, "
    "clearly state *why*.\n"
    "Second, you need to output the final verification result",
).replace("\n<result> [The", "\n<think> [Your step-by-step analysis] </think> <result> [The")


def test_the_prompts_are_the_official_text():
    assert load_prompt().text == OFFICIAL_NO_THINK
    assert load_prompt(thinking=True).text == OFFICIAL_THINK
    assert load_prompt().name == "detailverify_v1"
    assert load_prompt(True).sha256 != load_prompt(False).sha256


def test_requests_carry_the_caption_without_tags(tmp_path):
    rows = [A, synthetic("elsewhere/q.png", f"A {H}blue{E} sky.")]
    samples = load_samples(write_jsonl(tmp_path / "d.jsonl", rows))
    root = tmp_path / "test"
    (root / "Nature").mkdir(parents=True)
    (root / "Nature" / "a.jpg").write_bytes(b"x")
    (root / "Chart").mkdir()
    (root / "Chart" / "q.png").write_bytes(b"x")  # found one folder down, as officially
    first, second = build_requests(samples, root, load_prompt())
    assert first.task == NAME == "detailverify"
    assert first.sample_id == "a.jpg"
    assert first.fields == {"caption": "The red car is parked. Two dogs sit nearby."}
    assert first.prompt.startswith(
        "Here is an image and its image caption is: The red car is parked. Two dogs sit nearby.\n"
    )
    assert "<Hallucination>" not in first.prompt
    assert first.images == (root / "Nature" / "a.jpg",)
    assert second.fields == {"caption": "A blue sky."}
    assert second.images == (root / "Chart" / "q.png",)


# --- scoring: the worked example --------------------------------------------------------------


def test_worked_example_by_hand(tmp_path):
    result_, scores = run(tmp_path, [A, B, C], ANSWERS)
    m = result_.metrics
    # Per sample (P, R, F1, IoU): A (1/2, 1/3, 2/5, 1/4); B (0, 0, 0, 1); C (0, 0, 0, 0).
    assert [s.token for s in scores] == [
        [0.5, 1 / 3, pytest.approx(0.4), 0.25],
        [0.0, 0.0, 0.0, 1.0],
        [0.0, 0.0, 0.0, 0.0],
    ]
    assert m["token"]["precision"] == pytest.approx(100 * 0.5 / 3)
    assert m["token"]["recall"] == pytest.approx(100 / 9)
    assert m["token"]["f1"] == pytest.approx(100 * 0.4 / 3)
    assert m["token"]["iou"] == pytest.approx(100 * 1.25 / 3)
    # Sentences: A has a TP and an FN (1, 1/2, 2/3); B nothing; C one FP (0, 0, 0).
    assert m["sentence"] == pytest.approx(
        {"precision": 100 / 3, "recall": 100 / 6, "f1": 100 * (2 / 3) / 3}
    )
    # Response level, micro: A TP, B TN (ignored), C FP.
    assert m["response"] == pytest.approx(
        {"precision": 50.0, "recall": 100.0, "f1": 200 / 3, "tp": 1, "fp": 1, "fn": 0, "tn": 1}
    )
    # Categories: only the first label of "dogs sit" counts.
    assert m["category_recall"] == {COLOR: 100.0, CATEGORY: 0.0}
    assert result_.per_category[CATEGORY] == {"recall": 0.0, "hits": 0, "gt": 2, "official": True}
    # Halves: A mid=4 -> first (1,1,1,1), second (0,0,0,0); B, C mid=2: first half IoU 1.
    assert m["halves"]["first_half"]["iou"] == pytest.approx(100.0)
    assert m["halves"]["first_half"]["f1"] == pytest.approx(100 / 3)
    assert m["halves"]["second_half"]["iou"] == pytest.approx(100 / 3)
    assert m["halves"]["first_half"]["avg_gt_hal_count"] == pytest.approx(1 / 3)
    assert m["halves"]["second_half"]["avg_test_hal_count"] == pytest.approx(2 / 3)
    assert m["length"]["short (<100)"]["count"] == 3
    assert m["length"]["long (>=150)"] == {
        "precision": None,
        "recall": None,
        "f1": None,
        "iou": None,
        "count": 0,
    }
    assert m["domain"]["Chart"]["count"] == 1 and m["domain"]["Nature"]["count"] == 2
    assert m["domain"]["Nature"]["token"]["f1"] == pytest.approx(20.0)
    assert m["hallucination_counts"]["gold_hallu_tokens"] == 3
    assert m["hallucination_counts"]["test_total_tokens"] == 19
    counts = result_.counts
    assert (counts["valid"], counts["invalid"], counts["scored"], counts["total"]) == (3, 0, 3, 3)
    assert counts["no_hallucination_answers"] == 1


def test_token_card_variant_is_set_based_and_untruncated(tmp_path):
    # Prediction with one extra token ("3,5" splits) and the hallucination after it.
    row = real("d.jpg", "It is 3.5 m <Hallucination>tall</Hallucination>.", labels=[("tall", [])])
    answer = result(f"It is 3,5 m {H}tall{E}.")  # valid: \w words are unchanged
    result_, (score,) = run(tmp_path, [row], {"d.jpg": answer})
    # Gold: It is 3.5 m tall (5 tokens, index 4); answer: It is 3 5 m tall (6, index 5).
    assert (score.gold_tokens, score.pred_tokens) == (5, 6)
    assert score.gold_flags == [4] and score.pred_flags == [5]
    # Official: both cut to 5 tokens -> the flag falls off; P=R=F1=0, IoU 0 (gold has one).
    assert score.token == [0.0, 0.0, 0.0, 0.0]
    assert result_.metrics["length_mismatch"] == 1
    # Card: index sets {5} vs {4}: also 0 here, but untruncated.
    assert result_.metrics["token_card"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    # ...and the answer breaks the card's strict lexical faithfulness ("3.5" -> "3", "5").
    assert score.faithful is False
    assert result_.metrics["faithfulness"] == {"answers": 1, "broken": 1, "broken_percent": 100.0}


def test_card_and_official_differ_when_truncation_drops_a_gold_flag(tmp_path):
    row = real(
        "d.jpg",
        "The <Hallucination>red</Hallucination> car-park is <Hallucination>full</Hallucination>.",
        labels=[("red", [COLOR]), ("full", [])],
    )
    # "is-full" keeps the \w words (valid) but makes one token of two: 4 tokens against 5.
    answer = result(f"The {H}red{E} car-park is-full.")
    result_, (score,) = run(tmp_path, [row], {"d.jpg": answer})
    assert (score.gold_tokens, score.pred_tokens) == (5, 4)
    assert score.gold_flags == [1, 4] and score.pred_flags == [1]
    # Official: both cut to 4 tokens, so the gold "full" falls off and the answer is perfect.
    assert score.token == [1.0, 1.0, 1.0, 1.0]
    assert result_.metrics["token"]["recall"] == 100.0
    # Card: index sets {1} against {1, 4}: recall 1/2.
    assert score.card == [1.0, 0.5, pytest.approx(2 / 3)]
    assert result_.metrics["token_card"]["recall"] == 50.0
    assert result_.metrics["token_card_micro"]["recall"] == 50.0
    # Category recall uses the truncated gold too: the Unknown "full" is not counted at all.
    assert result_.per_category == {COLOR: {"recall": 100.0, "hits": 1, "gt": 1, "official": True}}
    assert score.faithful is False  # "is-full" is not the caption's tokens "is", "full"


# --- modes and answer handling ----------------------------------------------------------------

INVALID = {
    "a.jpg": result(f"The {H}blue{E} car is parked. Two dogs sit nearby."),  # changed word
    "b.jpg": result("NO HALLUCINATION"),
    "c.jpg": result(f"A calm {H}lake at dawn."),  # unbalanced
}


def test_official_mode_drops_invalid_answers_and_counts_them(tmp_path):
    result_, scores = run(tmp_path, [A, B, C], INVALID)
    assert result_.counts["invalid"] == 2
    assert result_.counts["invalid_words_changed"] == 1
    assert result_.counts["invalid_tags_mismatch"] == 1
    assert result_.counts["scored"] == 1
    assert [s.scored for s in scores] == [False, True, False]
    # Only B is scored: P=R=F1=0, IoU 1.
    assert result_.metrics["token"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "iou": 100.0}
    assert any("2 invalid" in w for w in result_.warnings)
    assert scores[0].detail == "invalid answer: words_changed"


def test_strict_mode_scores_invalid_answers_as_flagging_nothing(tmp_path):
    result_, scores = run(tmp_path, [A, B, C], INVALID, mode="strict")
    assert result_.counts["scored"] == 3
    assert result_.counts["invalid"] == 2
    # A: gold has 3 hallucinated tokens, nothing flagged -> 0, 0, 0, 0. B, C: 0, 0, 0, 1.
    assert [s.token for s in scores] == [[0.0] * 4, [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]]
    assert result_.metrics["token"]["iou"] == pytest.approx(200 / 3)
    assert result_.metrics["response"]["fn"] == 1
    assert result_.manifest.settings["mode"] == "strict"


def test_missing_model_errors_and_unknown_ids(tmp_path):
    answers = {
        "a.jpg": ANSWERS["a.jpg"],
        "c.jpg": {"id": "c.jpg", "error": "HTTP 500"},
        "zzz.jpg": result("NO HALLUCINATION"),
    }
    official, scores = run(tmp_path, [A, B, C], answers)
    c = official.counts
    assert (c["missing"], c["model_error"], c["unknown_ids"], c["scored"]) == (1, 1, 1, 1)
    assert scores[2].detail == "HTTP 500"
    assert any("ids not in the data" in w for w in official.warnings)
    strict, _ = run(tmp_path, [A, B, C], answers, mode="strict")
    assert strict.counts["scored"] == 3


def test_thinking_mode_takes_the_last_result(tmp_path):
    answer = (
        "<think>Maybe <result>NO HALLUCINATION</result>? Look again.</think>" + ANSWERS["a.jpg"]
    )
    _, (first,) = run(tmp_path, [A], {"a.jpg": answer})
    thinking, (last,) = run(tmp_path, [A], {"a.jpg": answer}, thinking=True)
    assert first.validity == "no_hallucination" and first.pred_flags == []
    assert last.validity == "tagged" and last.pred_flags == [1, 4]
    assert thinking.manifest.settings["thinking"] is True


def test_mixed_case_tags_in_answers_are_invalid_but_gold_ones_count(tmp_path):
    answer = result("The <Hallucination>red</Hallucination> car is parked. Two dogs sit nearby.")
    _, (score,) = run(tmp_path, [A], {"a.jpg": answer})
    assert score.validity == "words_changed" and not score.scored
    assert score.gold_flags == [1, 6, 7]  # the gold's <Hallucination> was normalised
    assert score.faithful is False


def test_results_layout_and_manifest(tmp_path):
    result_, _ = run(tmp_path, [A, B, C], ANSWERS)
    assert result_.benchmark == "detailverify"
    for key in ("token", "sentence", "response", "category_recall", "token_card"):
        assert key in result_.metrics
    assert set(result_.metrics["token"]) == {"precision", "recall", "f1", "iou"}
    manifest = result_.manifest
    assert re.fullmatch(r"[0-9a-f]{64}", manifest.data_sha256)
    assert re.fullmatch(r"[0-9a-f]{64}", manifest.predictions_sha256)
    assert manifest.settings["mode"] == "official"
    assert manifest.settings["layouts"] == {"real_test": 3}
    assert manifest.model == "m"
    low, high = result_.ci["token"]["f1"]
    assert 0.0 <= low <= result_.metrics["token"]["f1"] <= high <= 100.0


def test_unknown_mode_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown mode"):
        DetailVerifySettings(mode="lenient")


def test_table_has_the_official_columns(tmp_path):
    result_, _ = run(tmp_path, [A, B, C], ANSWERS)
    table = detailverify_table([("model-x", result_)])
    assert table.headers[:7] == [
        "Method",
        "Tok P",
        "Tok R",
        "Tok F1",
        "Sent P",
        "Sent R",
        "Sent F1",
    ]
    assert len(table.headers) == 7 + 13 + 3
    row = dict(zip(table.headers, table.rows[0], strict=True))
    assert (row["Tok F1"], row["Clr"], row["Cat"], row["Num"]) == ("13.3", "100.0", "0.0", "–")
    assert "| model-x | 16.7 |" in render(table, "markdown")


# --- an independent re-implementation on a constructed file -----------------------------------

_TOKEN = re.compile(
    r"[A-Za-z0-9]+(?:[-'.@_][A-Za-z0-9]+)*|[@#][A-Za-z0-9_]+|[\u4e00-\u9fff\u3040-\u309f\u30a0-\u30ff]+"
)


def reference_sequence(tagged):
    """0/1 labels the official way, written naively: 0 = hallucinated (as upstream encodes)."""
    spans = [(m.start(1), m.end(1)) for m in re.finditer(f"{H}(.*?){E}", tagged, re.S)]
    kept = list(_chars_without_tags(tagged))
    clean = "".join(ch for _, ch in kept)
    out = []
    for m in _TOKEN.finditer(clean):
        s, e = kept[m.start()][0], kept[m.end() - 1][0] + 1
        out.append(0 if any(not (e <= a or s >= b) for a, b in spans) else 1)
    return out


def _chars_without_tags(text):
    i = 0
    while i < len(text):
        for tag in (H, E):
            if text.startswith(tag, i):
                i += len(tag)
                break
        else:
            yield i, text[i]
            i += 1


def reference_prf_iou(g, t):
    if not g:
        return 0.0, 0.0, 0.0, 0.0
    tp = sum(a == 0 and b == 0 for a, b in zip(g, t, strict=True))
    fp = sum(a == 1 and b == 0 for a, b in zip(g, t, strict=True))
    fn = sum(a == 0 and b == 1 for a, b in zip(g, t, strict=True))
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f, (tp / (tp + fp + fn) if tp + fp + fn else 1.0)


def test_metrics_match_an_independent_reimplementation(tmp_path):
    rows = [
        A,
        B,
        C,
        real("d.jpg", "Six <Hallucination>U.S.</Hallucination> flags fly. It's 3.5 m tall."),
        real(
            "e.jpg",
            "A <Hallucination>red-brick</Hallucination> wall, a <Hallucination>red</Hallucination>"
            " door! And a <Hallucination>red</Hallucination> roof.",
            labels=[("red", [COLOR]), ("red-brick", ["Object Material Hallucination"])],
        ),
        real("f.jpg", "A <Hallucination>big</Hallucination> dog.", labels=[("big", [])]),
    ]
    answers = {
        **ANSWERS,
        "d.jpg": result(f"Six U.S. flags {H}fly{E}. It's 3.5 m {H}tall{E}."),
        "e.jpg": result(f"A {H}red-brick wall{E}, a red door! And a {H}red{E} roof."),
        "f.jpg": result("no hallucination"),
    }
    result_, _ = run(tmp_path, rows, answers)

    per_sample = []
    for row in rows:
        tagged = row["description_tag"].replace("<Hallucination>", H).replace("</Hallucination>", E)
        g = reference_sequence(tagged)
        inner = answers[row["filename"]][len("<result>") : -len("</result>")]
        t = [1] * len(g) if inner.upper() == "NO HALLUCINATION" else reference_sequence(inner)
        n = min(len(g), len(t))
        per_sample.append(reference_prf_iou(g[:n], t[:n]))
    expected = [100 * sum(v[i] for v in per_sample) / len(rows) for i in range(4)]
    got = result_.metrics["token"]
    assert [got["precision"], got["recall"], got["f1"], got["iou"]] == pytest.approx(expected)
    # e.jpg: "red-brick" takes the Material label, the first "red" the Color one, and the
    # second "red" finds the queue for "red" empty: Unknown. Color gold: A's "red" (flagged)
    # and e's door "red" (not flagged).
    assert result_.per_category[COLOR] == {"recall": 50.0, "hits": 1, "gt": 2, "official": True}
    # Unknown: d's "U.S" (no labels), e's roof "red" (flagged), f's "big" (empty labels).
    assert result_.per_category["Unknown"] == {
        "recall": 100 / 3,
        "hits": 1,
        "gt": 3,
        "official": False,
    }
    assert result_.per_category["Object Material Hallucination"]["hits"] == 1


def test_synthetic_samples_score_with_categories_from_their_edits(tmp_path):
    row = synthetic(
        "imgs/p1.png",
        f"Three {H}green{E} bars and a {H}square{E} legend.",
        edits=[("green", COLOR, True), ("square", "Object Shape Hallucination", True)],
    )
    answer = result(f"Three {H}green{E} bars and a square legend.")
    result_, (score,) = run(tmp_path, [row], {"p1.png": answer})
    assert score.layout == "synthetic_test" and score.domain == "Chart"
    assert result_.metrics["category_recall"] == {
        COLOR: 100.0,
        "Object Shape Hallucination": 0.0,
    }
    # P = 1/1, R = 1/2, F1 = 2/3, IoU = 1/2.
    assert score.token == [1.0, 0.5, pytest.approx(2 / 3), 0.5]
    assert result_.manifest.settings["layouts"] == {"synthetic_test": 1}


def test_gold_tags_in_another_case_stay_text_and_are_warned_about(tmp_path):
    row = real("g.jpg", "A <hallucination>red</hallucination> car.")
    result_, (score,) = run(tmp_path, [row], {"g.jpg": result("NO HALLUCINATION")})
    # As officially: the tag letters become clean tokens and nothing is hallucinated.
    assert score.gold_tokens == 5 and score.gold_flags == []
    assert any("2 gold tag(s) in a case" in w for w in result_.warnings)


def test_an_unmodified_sample_with_gold_tags_is_scored_against_them(tmp_path):
    row = real("h.jpg", "A <Hallucination>red</Hallucination> car.", modify="No", gt="A red car.")
    result_, (score,) = run(tmp_path, [row], {"h.jpg": result("NO HALLUCINATION")})
    assert score.gold_flags == [1] and score.token == [0.0, 0.0, 0.0, 0.0]
    assert any("unmodified sample(s)" in w for w in result_.warnings)


def test_empty_length_strata_are_null_or_the_official_zero(tmp_path):
    # All three worked-example captions are short: medium and long have no caption.
    default, _ = run(tmp_path, [A, B, C], ANSWERS)
    official, _ = run(tmp_path, [A, B, C], ANSWERS, empty_groups="zero")
    for stratum in ("medium (100-150)", "long (>=150)"):
        assert default.metrics["length"][stratum] == {
            "precision": None,
            "recall": None,
            "f1": None,
            "iou": None,
            "count": 0,
        }
        assert official.metrics["length"][stratum] == {
            "precision": 0.0,
            "recall": 0.0,
            "f1": 0.0,
            "iou": 0.0,
            "count": 0,
        }
    # The stratum with captions, and everything else, is the same either way.
    assert official.metrics["length"]["short (<100)"] == default.metrics["length"]["short (<100)"]
    assert official.metrics["length"]["short (<100)"]["f1"] == pytest.approx(100 * 0.4 / 3)
    assert {k: v for k, v in official.metrics.items() if k != "length"} == {
        k: v for k, v in default.metrics.items() if k != "length"
    }
    assert official.manifest.settings["empty_groups"] == "zero"
    with pytest.raises(ConfigError, match="empty_groups"):
        DetailVerifySettings(empty_groups="zeros")


def test_a_copied_rule_line_is_scored_officially_but_recorded_as_an_echo(tmp_path):
    rule = "1. If there is **no hallucination**, output exactly: <result>NO HALLUCINATION</result>"
    answers = dict(ANSWERS) | {"b.jpg": rule, "c.jpg": {"id": "c.jpg", "response": "A calm",
                                                        "finish_reason": "length"}}  # fmt: skip
    result, scores = run(tmp_path, [A, B, C], answers)
    copied = {s.id: s for s in scores}["b.jpg"]
    # The official reader takes the first <result> block: a valid NO HALLUCINATION, kept.
    assert copied.outcome == "ok" and copied.validity == "no_hallucination" and copied.echo
    (tmp_path / "b").mkdir()
    baseline, _ = run(tmp_path / "b", [A, B, C], dict(ANSWERS) | {"c.jpg": answers["c.jpg"]})
    assert result.metrics == baseline.metrics  # the official numbers do not move
    assert (result.counts["echo"], result.counts["echo_valid"]) == (1, 1)
    assert result.counts["truncated"] == 1
    assert any("copied from the prompt" in w for w in result.warnings)
