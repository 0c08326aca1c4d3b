"""Real replies of many VLM families, read with each family's preset, as their sources read them.

Two corpora in the shared data quote replies verbatim from public repositories, with the
source's own reading where it gives one: ``real-outputs/corpus.jsonl`` (425 replies of 12
families) and ``real-outputs/corpus-2.jsonl`` (171 more: 126 box replies of 13 families and 45
yes/no answers of LaVIN on MME). Every reply must be read without an exception, by the public
reader (:func:`gavel.parsing.parse_boxes`) and by ``gavel score``; every reply whose source reads
it must come out as the source reads it (the same number of boxes, matched one to one within
1 px; the same yes/no label under the source's rule), or be one of the known differences that
docs/data-format.md lists and explains (:data:`KNOWN_DIFFERENCES`, each checked to differ still).

gavel reports every box with its corners ordered and clipped to the image, and drops a box
without area (docs/data-format.md); a source that draws its boxes as computed (DeepSeek-OCR's
script) is compared with its boxes treated the same way, worked out here by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gavel.models.presets import get_preset
from gavel.parsing import ImageGeometry, parse_boxes
from gavel.parsing.yesno import mme_label, official_label, strict_yes_no

#: The preset each family of the corpora declares (the family's documented convention).
FAMILY_PRESET = {
    "gemini": "gemini",
    "qwen-vl": "qwen-vl",
    "qwen2.5-vl": "qwen2.5-vl",
    "qwen3-vl": "qwen3-vl",
    "internvl": "internvl3.5",
    "florence-2": "florence-2",
    "kosmos-2": "kosmos-2",
    "molmo": "molmo",
    "deepseek-vl2": "deepseek-vl2",
    "kimi-vl": "kimi-vl",
    "llava-1.5": "llava-1.5",
    "gpt-4v": "gpt",
    "paligemma": "paligemma",
    "deepseek-ocr": "deepseek-ocr",
    "cogvlm": "cogvlm",
    "qwen2-vl": "qwen2-vl",
    "asmv2": "asmv2",
    "minicpm-v": "minicpm-v",
    "gpt-4o (fine-tuned to PaliGemma format)": "gpt+paligemma",
    "lavin": "generic",  # yes/no answers only
}
#: Where the model names a member of a family with its own preset (the same convention).
MODEL_PRESET = {
    "OpenGVLab/InternVL2_5": "internvl2.5",
    "InternVL2-": "internvl2",
    "google/paligemma2": "paligemma-2",
    "OS-Copilot/OS-Atlas": "os-atlas",
}
#: Florence-2's output depends on the task token it was asked with: <OCR_WITH_REGION> answers
#: with quadrilaterals, declared by their own preset.
TASK_PRESET = {("florence-2", "<OCR_WITH_REGION>"): "florence-2-ocr"}

#: Replies whose source reads them otherwise than gavel does, and why (docs/data-format.md,
#: "Known differences", explains each). Keyed by the path that differs.
KNOWN_DIFFERENCES = {
    "reader": {
        "paligemma2-cards-1cee156-c26": "label filter: the notebook keeps only boxes labelled "
        "with a class of its detect prompt; read without labels= gavel keeps all 26 boxes "
        "(with the prompt's classes as labels= it reads the source's 25)",
    },
    "score": {
        "paligemma2-cards-1cee156-c26": "label filter: gavel score has no class list (a GAVEL "
        "sample asks for no class), so it keeps all 26 boxes",
    },
}

CORPORA = {"corpus": "corpus.jsonl", "corpus-2": "corpus-2.jsonl"}


def read_corpus(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(params=list(CORPORA))
def corpus(request, shared_data: Path) -> list[dict[str, Any]]:
    path = shared_data / "real-outputs" / CORPORA[request.param]
    if not path.is_file():
        pytest.skip(f"real VLM replies not found at ../shared/data/real-outputs ({path})")
    return read_corpus(path)


@pytest.fixture
def both_corpora(shared_data: Path) -> list[dict[str, Any]]:
    rows = []
    for name in CORPORA.values():
        path = shared_data / "real-outputs" / name
        if not path.is_file():
            pytest.skip(f"real VLM replies not found at ../shared/data/real-outputs ({path})")
        rows += read_corpus(path)
    return rows


def preset_for(row: dict[str, Any]) -> str:
    if (row["family"], row["task"]) in TASK_PRESET:
        return TASK_PRESET[(row["family"], row["task"])]
    for prefix, preset in MODEL_PRESET.items():
        if row["model"].startswith(prefix):
            return preset
    return FAMILY_PRESET[row["family"]]


def geometry(row: dict[str, Any]) -> ImageGeometry | None:
    image = row["image"]
    if not image.get("width") or not image.get("height"):
        return None
    sizes = {k: tuple(image[k]) if image.get(k) else None for k in ("sent_size", "input_size")}
    return ImageGeometry(image["width"], image["height"], **sizes)


def read_boxes(row: dict[str, Any], labels: list[str] | None = None) -> list:
    shape = geometry(row)
    assert shape is not None, row["id"]
    return parse_boxes(row["raw"], get_preset(preset_for(row)).box_format, shape,
                       labels=labels).boxes  # fmt: skip


def as_reported(boxes: list | None, width: float, height: float) -> list:
    """A source's boxes as gavel reports any box: corners ordered, clipped to the image, none
    without area (by hand, not with gavel's geometry)."""
    reported = []
    for x1, y1, x2, y2 in boxes or []:
        left, right = max(0.0, min(x1, x2)), min(float(width), max(x1, x2))
        top, bottom = max(0.0, min(y1, y2)), min(float(height), max(y1, y2))
        if right > left and bottom > top:
            reported.append((left, top, right, bottom))
    return reported


def same_boxes(read: list, expected: list, tolerance: float = 1.0) -> bool:
    """One to one, each coordinate within ``tolerance`` (greedy in the source's order)."""
    if len(read) != len(expected):
        return False
    left = list(read)
    for box in expected:
        match = next(
            (r for r in left if all(abs(a - b) <= tolerance for a, b in zip(r, box, strict=True))),
            None,
        )
        if match is None:
            return False
        left.remove(match)
    return True


def box_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The replies whose source gives its reading of their boxes (None: no box)."""
    return [
        row for row in rows if row["reference"]["kind"] != "none" and "boxes" in row["reference"]
    ]


def expected_boxes(row: dict[str, Any]) -> list:
    image = row["image"]
    return as_reported(row["reference"]["boxes"], image["width"], image["height"])


def detect_classes(prompt: str | None) -> list[str] | None:
    """The classes of a PaliGemma ``detect a ; b`` prompt, as the notebooks make them."""
    if not prompt or not prompt.startswith("detect "):
        return None
    return [name.strip() for name in prompt.removeprefix("detect ").split(";")]


def test_every_family_of_the_corpora_has_a_preset(corpus):
    for row in corpus:
        get_preset(preset_for(row))


def test_no_reply_makes_a_reader_raise(corpus):
    for row in corpus:
        strict_yes_no(row["raw"])
        official_label(row["raw"])
        mme_label(row["raw"])
        if geometry(row) is not None:
            read_boxes(row)
            read_boxes(row, labels=["a"])


def test_every_reply_the_source_reads_is_read_the_same(corpus):
    read = [row for row in corpus if row["reference"]["kind"] != "none"]
    wrong = []
    for row in read:
        reference = row["reference"]
        if "mme_label" in reference:
            if mme_label(row["raw"]) != reference["mme_label"]:
                wrong.append(f"{row['id']}: {mme_label(row['raw'])} != {reference['mme_label']}")
        elif "verdict" in reference:
            got = {strict_yes_no(row["raw"]), official_label(row["raw"])}
            if got != {reference["verdict"]}:
                wrong.append(f"{row['id']}: {got} != {reference['verdict']}")
        elif row["id"] in KNOWN_DIFFERENCES["reader"]:
            continue
        elif not same_boxes(read_boxes(row), expected_boxes(row)):
            wrong.append(f"{row['id']}: {read_boxes(row)} != {expected_boxes(row)}")
    assert len(read) in (73, 119)  # 73 of corpus.jsonl; 74 box and 45 yes/no of corpus-2.jsonl
    assert not wrong, "\n".join(wrong)


def test_known_differences_still_differ_and_are_documented(both_corpora):
    rows = {row["id"]: row for row in both_corpora}
    page = (Path(__file__).resolve().parents[2] / "docs" / "data-format.md").read_text()
    for path, differences in KNOWN_DIFFERENCES.items():
        for row_id in differences:
            assert f"`{row_id}`" in page, (path, row_id)
            assert not same_boxes(read_boxes(rows[row_id]), expected_boxes(rows[row_id]))


def test_with_the_prompts_classes_paligemma_replies_read_as_the_notebooks_read_them(both_corpora):
    """supervision's PaliGemma reader keeps only boxes labelled with a class of the prompt:
    gavel's label filter (``labels=``) does the same."""
    filtered = [row for row in box_rows(both_corpora)
                if row["family"] == "paligemma" and detect_classes(row["prompt"])]  # fmt: skip
    assert len(filtered) >= 20
    for row in filtered:
        boxes = read_boxes(row, labels=detect_classes(row["prompt"]))
        assert same_boxes(boxes, expected_boxes(row)), row["id"]
    # The one reply the filter changes: a label ("5") that is no class of the prompt.
    (c26,) = [row for row in filtered if row["id"] == "paligemma2-cards-1cee156-c26"]
    parsed = parse_boxes(c26["raw"], "loc1024-yx", geometry(c26),
                         labels=detect_classes(c26["prompt"]))  # fmt: skip
    assert (len(parsed.boxes), parsed.label_dropped) == (25, c26["reference"]["dropped_by_classes"])


def test_mme_reads_other_where_the_official_rule_finds_a_no(both_corpora):
    (sign,) = [row for row in both_corpora
               if row["family"] == "lavin" and "no smoking" in row["raw"]]  # fmt: skip
    assert sign["reference"]["mme_label"] == "other"
    assert (mme_label(sign["raw"]), official_label(sign["raw"])) == ("other", "no")


# --- the same replies through `gavel score` -------------------------------------------------


def score_rows(rows: list[dict[str, Any]], folder: Path, gavel_main) -> dict[str, dict]:
    """Every reply with an image size as a GAVEL prediction (its verdict given, so its boxes are
    scored), scored by `gavel score`: the per-sample scores by id."""
    data, predictions = [], []
    for row in rows:
        image = row["image"]
        if geometry(row) is None:
            continue
        data.append({"id": row["id"], "image": "unused.png", "caption": "-", "hallucinated": True,
                     "category": "Obj", "explanation": "-", "boxes": [[0, 0, 1, 1]],
                     "width": image["width"], "height": image["height"]})  # fmt: skip
        prediction = {
            "id": row["id"],
            "response": row["raw"],
            "hallucinated": True,
            "explanation": "-",
            "box_format": get_preset(preset_for(row)).box_format,
        }
        for size in ("sent_size", "input_size"):
            if image.get(size):
                prediction[size] = image[size]
        predictions.append(prediction)
    for name, lines in (("data.jsonl", data), ("predictions.jsonl", predictions)):
        (folder / name).write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = gavel_main("score", "--data", str(folder / "data.jsonl"), "--predictions",
                      str(folder / "predictions.jsonl"), "--out", str(folder / "results.json"),
                      "--bootstrap", "0")  # fmt: skip
    assert done.code == 0, done.text
    scores = (folder / "results.scores.jsonl").read_text().splitlines()
    return {score["id"]: score for score in map(json.loads, scores)}


def test_gavel_score_reads_every_reply_as_the_reader_does(corpus, tmp_path, gavel_main):
    scores = score_rows(corpus, tmp_path, gavel_main)
    assert scores and all(score["outcome"] == "ok" for score in scores.values())
    for row in corpus:
        if row["id"] in scores:
            scored = [tuple(box) for box in scores[row["id"]].get("pred_boxes", [])]
            assert scored == [pytest.approx(box) for box in read_boxes(row)], row["id"]


def test_gavel_score_reads_every_reply_the_source_reads_the_same(corpus, tmp_path, gavel_main):
    scores = score_rows(corpus, tmp_path, gavel_main)
    rows = box_rows(corpus)
    wrong = []
    for row in rows:
        scored = [tuple(box) for box in scores[row["id"]].get("pred_boxes", [])]
        if row["id"] not in KNOWN_DIFFERENCES["score"] and not same_boxes(
            scored, expected_boxes(row)
        ):
            wrong.append(f"{row['id']}: {scored} != {expected_boxes(row)}")
    assert len(rows) in (33, 74)  # box readings: 33 of corpus.jsonl, 74 of corpus-2.jsonl
    assert not wrong, "\n".join(wrong)
