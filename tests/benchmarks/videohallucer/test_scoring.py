"""VideoHallucer on the real annotations: loader, prompts, both answer rules, every metric.

Scripted "models" answer the 1,150 real pairs (976 on the leaderboard, 124 interaction, 50
fact_detect); every metric is compared with values computed here independently: by hand for
the constant scripts, by a plain re-implementation (words by tokenizing, the bias script
transcribed loop by loop) for a seeded random mix of answers.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

import msgspec
import pytest

from gavel.benchmarks.videohallucer.data import LEADERBOARD, load_dataset, load_pairs
from gavel.benchmarks.videohallucer.prompt import OFFICIAL_TEMPLATE, build_requests
from gavel.benchmarks.videohallucer.scoring import NAME, VideoHallucerSettings, evaluate_files
from gavel.benchmarks.videohallucer.table import videohallucer_table
from gavel.errors import ConfigError, DataError
from gavel.parsing.yesno import ANSWER_RULES
from gavel.prompts import Template
from gavel.report.tables import render

SUFFIX = "\nAnswer the question using 'yes' or 'no'."
SIZES = {
    "object_relation": 200,
    "temporal": 176,
    "semantic_detail": 200,
    "external_factual": 200,
    "external_nonfactual": 200,
    "interaction": 124,
    "fact_detect": 50,
}
TYPES = {
    "object_relation": {"relation": 100, "subject": 50, "object": 50},
    "temporal": {"temporal_relative": 75, "length_relative": 75, "temporal_absolute": 26},
    "semantic_detail": {"semantic_detail": 200},
    "external_factual": {"external_factual_instruct": 150, "external_factual_course": 50},
    "external_nonfactual": {
        "external_nonfactual_instruct": 150,
        "external_nonfactual_course": 50,
    },
    "fact_detect": {"fact_nonfact_course": 50},
}
SIDES = ("basic", "hallucination")


@pytest.fixture
def root(shared_data: Path) -> Path:
    folder = shared_data / "videohallucer"
    if not folder.is_dir():
        pytest.skip(f"VideoHallucer annotations not found at {folder}")
    return folder


@pytest.fixture
def pairs(root):
    return load_pairs(root)


MISSING = object()
ERROR = object()


def write_predictions(path: Path, answers: dict[str, object]) -> Path:
    """One line per question id: a response, an error line (ERROR) or no line (MISSING)."""
    with path.open("w") as handle:
        for qid, answer in answers.items():
            if answer is MISSING:
                continue
            row = {"id": qid, "model": "script"}
            if answer is ERROR:
                row["error"] = "CUDA out of memory"
            else:
                row["response"] = answer
            handle.write(json.dumps(row) + "\n")
    return path


def script(pairs, respond) -> dict[str, object]:
    return {f"{p.id}/{s}": respond(p, s) for p in pairs for s in SIDES}


def run(root, tmp_path, answers, **settings):
    predictions = write_predictions(tmp_path / "predictions.jsonl", answers)
    result, scores = evaluate_files(root, predictions, VideoHallucerSettings(**settings))
    return result, scores


# ============================================================================================
# Loader


def test_real_release_loads_every_category(pairs):
    counts = {}
    for pair in pairs:
        counts[pair.category] = counts.get(pair.category, 0) + 1
    assert counts == SIZES
    assert sum(counts[c] for c in LEADERBOARD) == 976
    assert len({p.id for p in pairs}) == len(pairs)
    for category, types in TYPES.items():
        found: dict[str, int] = {}
        for pair in pairs:
            if pair.category == category:
                found[pair.type] = found.get(pair.type, 0) + 1
        assert found == types
    assert all(p.type is None for p in pairs if p.category == "interaction")


def test_ids_are_category_and_file_position(pairs, root):
    temporal = [p for p in pairs if p.category == "temporal"]
    assert [p.id for p in temporal[:2]] == ["temporal/0", "temporal/1"]
    assert temporal[-1].id == "temporal/175"
    raw = json.loads((root / "temporal" / "temporal.json").read_text())
    for pair, row in zip(temporal, raw, strict=True):
        assert pair.basic.question == row["basic"]["question"]
        assert pair.hallucination.video == row["hallucination"]["video"]
    assert temporal[3].question_id("hallucination") == "temporal/3/hallucination"


def test_gold_answers_and_extra_fields(pairs):
    for pair in pairs:
        expected = ("no", "no") if pair.category == "fact_detect" else ("yes", "no")
        assert (pair.basic.answer, pair.hallucination.answer) == expected
    factual = [p for p in pairs if p.category == "external_factual"]
    assert all(p.hallucination.explanation for p in factual)
    semantic = [p for p in pairs if p.category == "semantic_detail"]
    assert all(p.basic.question == p.hallucination.question for p in semantic)
    assert all(p.basic.video != p.hallucination.video for p in semantic)


def test_single_file_category_folder_and_hash(root):
    file = root / "temporal" / "temporal.json"
    data = load_dataset(file)
    assert data.categories == ["temporal"] and len(data.pairs) == 176
    assert data.sha256 == hashlib.sha256(file.read_bytes()).hexdigest()
    assert [p.id for p in load_pairs(root / "temporal")] == [p.id for p in data.pairs]
    # fact_detect_yn.json and interaction/conflict.jsonl are variants, never read.
    everything = load_dataset(root)
    assert [f.path.name for f in everything.files] == [f"{c}.json" for c in SIZES]
    listing = "".join(
        f"{hashlib.sha256((root / c / f'{c}.json').read_bytes()).hexdigest()}  {c}\n" for c in SIZES
    )
    assert everything.sha256 == hashlib.sha256(listing.encode()).hexdigest()


def test_a_renamed_file_needs_its_category(root, tmp_path):
    copy = tmp_path / "mine.json"
    copy.write_bytes((root / "temporal" / "temporal.json").read_bytes())
    with pytest.raises(DataError, match="cannot tell the category"):
        load_pairs(copy)
    assert load_pairs(copy, category="temporal")[0].id == "temporal/0"


PAIR = {
    "basic": {"video": "a.mp4", "question": "Is there a cat?", "answer": "yes"},
    "hallucination": {"video": "a.mp4", "question": "Is there a dog?", "answer": "no"},
    "type": "object",
}


def _write(tmp_path: Path, text: str, name: str = "object_relation.json") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_bad_json_names_the_line(tmp_path):
    text = "[\n" + json.dumps(PAIR) + ",\n" + json.dumps(PAIR)[:-1] + ",,\n]\n"
    with pytest.raises(DataError) as error:
        load_pairs(_write(tmp_path, text))
    assert error.value.line == 3
    assert "not valid JSON" in error.value.message


def test_missing_field_names_pair_line_and_field(tmp_path):
    broken = json.loads(json.dumps(PAIR))
    del broken["hallucination"]["answer"]
    text = json.dumps([PAIR, broken], indent=4)
    with pytest.raises(DataError) as error:
        load_pairs(_write(tmp_path, text))
    assert error.value.field == "[1].hallucination.answer"
    # The line on which the second pair's "{" stands.
    openings = [n for n, line in enumerate(text.splitlines(), start=1) if line == "    {"]
    assert error.value.line == openings[1] == 15
    assert "object_relation.json" in str(error.value)


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda p: p["basic"].update(answer="maybe"), "[0].basic.answer", "'yes' or 'no'"),
        (lambda p: p.update(type=5), "[0].type", "Expected"),
        (lambda p: p["basic"].update(question=" "), "[0].basic.question", "empty question"),
        (lambda p: p["hallucination"].update(video="/x/a.mp4"), "[0].hallucination.video", ""),
        (lambda p: p["basic"].update(video="../a.mp4"), "[0].basic.video", "escapes"),
        (lambda p: p.pop("basic"), "[0].basic", "missing required field"),
    ],
)
def test_invalid_pairs(tmp_path, change, field, message):
    broken = json.loads(json.dumps(PAIR))
    change(broken)
    with pytest.raises(DataError) as error:
        load_pairs(_write(tmp_path, json.dumps([broken])))
    assert error.value.field == field
    assert message in error.value.message
    assert error.value.line == 1


def test_answers_are_normalized(tmp_path):
    loud = json.loads(json.dumps(PAIR))
    loud["basic"]["answer"] = "Yes\n"
    assert load_pairs(_write(tmp_path, json.dumps([loud])))[0].basic.answer == "yes"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{}", "expected a JSON list"),
        ("[]", "no pairs"),
        ("[1]", "pair 0"),
        ("", "not valid JSON"),
        ('[{"basic": NaN}]', "not valid JSON"),
    ],
)
def test_malformed_files(tmp_path, text, message):
    with pytest.raises(DataError, match=message):
        load_pairs(_write(tmp_path, text))


def test_missing_paths(tmp_path):
    with pytest.raises(DataError, match="not found"):
        load_pairs(tmp_path / "nothing")
    with pytest.raises(DataError, match="no VideoHallucer annotation file"):
        load_pairs(tmp_path)


# ============================================================================================
# Prompts and requests


def test_requests_use_the_official_prompt_and_each_question_s_own_video(pairs):
    requests = list(build_requests(pairs, Path("/videos"), None))
    assert len(requests) == 2 * len(pairs) == 2300
    first, second = requests[0], requests[1]
    assert first.sample_id == "object_relation/0/basic"
    assert second.sample_id == "object_relation/0/hallucination"
    assert first.prompt == "Is there a baby in the video?\nAnswer the question using 'yes' or 'no'."
    assert second.prompt == "Is there a doll in the video?" + SUFFIX
    assert first.task == NAME == "videohallucer"
    assert first.fields == {"question": "Is there a baby in the video?"}
    assert first.images == (Path("/videos/object_relation/videos/1052_6143391925_916_970.mp4"),)
    by_id = {r.sample_id: r for r in requests}
    for pair in pairs:
        for side in SIDES:
            request = by_id[pair.question_id(side)]
            assert request.prompt == pair.side(side).question + SUFFIX
            assert request.images[0].name == pair.side(side).video


def test_questions_are_sent_verbatim(pairs):
    trailing = [p for p in pairs if p.category == "interaction" and p.basic.question.endswith(" ")]
    trailing += [
        p for p in pairs if p.category == "interaction" and p.hallucination.question.endswith(" ")
    ]
    assert len(trailing) == 4  # upstream does not strip them, nor do we
    requests = {r.sample_id: r for r in build_requests(trailing, Path("v"), None)}
    assert any(r.prompt.endswith(" " + SUFFIX) for r in requests.values())


def test_upstream_video_bug_is_a_named_variant(pairs):
    semantic = [p for p in pairs if p.category == "semantic_detail"]
    own = list(build_requests(semantic, Path("v"), None))
    bug = list(build_requests(semantic, Path("v"), None, hallucination_video="basic"))
    for basic, halluc in zip(own[0::2], own[1::2], strict=True):
        assert basic.prompt == halluc.prompt  # same question ...
        assert basic.images != halluc.images  # ... about two different videos
    for basic, halluc in zip(bug[0::2], bug[1::2], strict=True):
        assert basic.prompt == halluc.prompt and basic.images == halluc.images
    with pytest.raises(ConfigError):
        list(build_requests(semantic, Path("v"), None, hallucination_video="other"))


def test_flat_layout_and_custom_template(pairs):
    template = Template("short", "Q: {question}")
    request = next(build_requests(pairs, Path("v"), template, layout="flat"))
    assert request.prompt == "Q: Is there a baby in the video?"
    assert request.images == (Path("v/1052_6143391925_916_970.mp4"),)
    assert OFFICIAL_TEMPLATE.render(question="X?") == "X?" + SUFFIX


def test_the_bug_collapses_semantic_detail_for_a_perfect_model(root, tmp_path, pairs):
    """A model that sees the truth: the same question is "yes" for one video, "no" for the
    other; with the basic video sent twice it answers "yes" twice, and every pair fails."""
    semantic = [p for p in pairs if p.category == "semantic_detail"]
    truth = {}
    for pair in semantic:
        for side in SIDES:
            truth[(pair.side(side).question, pair.side(side).video)] = pair.side(side).answer
    for variant, expected in (("own", 100.0), ("basic", 0.0)):
        requests = build_requests(semantic, Path("v"), None, hallucination_video=variant)
        answers = {r.sample_id: truth[(r.fields["question"], r.images[0].name)] for r in requests}
        predictions = write_predictions(tmp_path / f"{variant}.jsonl", answers)
        result, _ = evaluate_files(root / "semantic_detail", predictions)
        assert result.metrics["per_category"]["semantic_detail"]["paired"] == expected
        assert result.metrics["per_category"]["semantic_detail"]["basic"] == 100.0


# ============================================================================================
# Constant scripts, worked by hand


def _check_categories(result, expected):
    for category, (basic, halluc, paired) in expected.items():
        block = result.metrics["per_category"][category]
        assert (block["basic"], block["hallucination"], block["paired"]) == (basic, halluc, paired)
        assert block["n"] == SIZES[category]


def test_always_yes(root, tmp_path, pairs):
    result, scores = run(root, tmp_path, script(pairs, lambda p, s: "Yes"))
    m = result.metrics
    # Every basic gold is "yes", every hallucinated gold "no" (fact_detect: both "no").
    _check_categories(
        result,
        {c: (100.0, 0.0, 0.0) for c in (*LEADERBOARD, "interaction")}
        | {"fact_detect": (0.0, 0.0, 0.0)},
    )
    assert (m["overall"], m["overall_basic"], m["overall_hallucination"]) == (0.0, 100.0, 0.0)
    # Script: n_yes = 976 (basic) + 976 (halluc wrong, basic yes) = 1952; n_no = 0; n = 976
    # wrong halluc answers, all with a basic "yes": fp = 976.
    # ydp = (1952 - 976) / 1952 = +50; ndp = (0 - 976) / 1952 = -50; fpr = 976/976 = 100.
    official = m["bias"]["official"]
    assert official["counters"] == {
        "gt_yes": 976,
        "gt_no": 976,
        "n_yes": 1952,
        "n_no": 0,
        "n": 976,
        "fp": 976,
        "basic": 976,
        "halluc": 976,
    }
    assert (official["yes_pct_diff"], official["no_pct_diff"], official["fp_ratio"]) == (
        50.0,
        -50.0,
        100.0,
    )
    # Card: 1952 yes answers for 976 yes golds over 1952 questions -> +50; the 976 wrong
    # answers are all "yes" -> 100.
    assert (m["bias"]["card"]["yes_pct_diff"], m["bias"]["card"]["fp_ratio"]) == (50.0, 100.0)
    # Hallucination score: every basic is right (976) and every hallucinated one then wrong.
    assert official["hallucination_score"] == 100.0
    # Card recipe: 976 basic "yes" for 976 basic golds "yes" -> |0| = 0; all 976 pairs are
    # wrong, each with a "yes" -> 100.
    recipe = m["bias"]["card_recipe"]
    assert (recipe["yes_pct_diff"], recipe["fp_ratio"]) == (0.0, 100.0)
    assert m["per_category"]["fact_detect"]["bias"]["official"] is None  # gold is no/no
    # fact_detect (basic gold "no"): 50 basic "yes" against 0 gold "yes" -> 100.
    assert m["per_category"]["fact_detect"]["bias"]["card_recipe"]["yes_pct_diff"] == 100.0
    assert m["per_category"]["fact_detect"]["fact_score"] == 0.0
    assert m["pooled"] == {"n": 976, "basic": 100.0, "hallucination": 0.0, "paired": 0.0}
    assert result.counts["ok"] == 2300 and result.counts["missing"] == 0
    assert m["answers"] == {"yes": 2300} and m["unknown_rate"] == 0.0
    assert len(scores) == 2300 and scores[0].id == "object_relation/0/basic"
    assert result.ci["overall"] == [0.0, 0.0]


def test_always_no(root, tmp_path, pairs):
    result, _ = run(root, tmp_path, script(pairs, lambda p, s: "no."))
    m = result.metrics
    _check_categories(
        result,
        {c: (0.0, 100.0, 0.0) for c in (*LEADERBOARD, "interaction")}
        | {"fact_detect": (100.0, 100.0, 100.0)},
    )
    assert m["overall"] == 0.0
    # Script: n_yes = 0; n_no = 976 (halluc) + 976 (basic wrong, halluc "no") = 1952;
    # n = 976, fp = 0 -> ydp -50, ndp +50, fpr 0. Card: (0 - 976) / 1952 = -50, no "yes".
    official = m["bias"]["official"]
    assert (official["yes_pct_diff"], official["no_pct_diff"], official["fp_ratio"]) == (
        -50.0,
        50.0,
        0.0,
    )
    assert (m["bias"]["card"]["yes_pct_diff"], m["bias"]["card"]["fp_ratio"]) == (-50.0, 0.0)
    assert official["hallucination_score"] is None  # no basic right: the script divides by 0
    # Card recipe: no basic "yes" against 976 -> 100; 976 wrong pairs, none with a "yes" -> 0.
    recipe = m["bias"]["card_recipe"]
    assert (recipe["yes_pct_diff"], recipe["fp_ratio"]) == (100.0, 0.0)
    assert m["per_category"]["fact_detect"]["fact_score"] == 100.0


def test_answer_the_gold(root, tmp_path, pairs):
    result, _ = run(root, tmp_path, script(pairs, lambda p, s: p.side(s).answer.title() + "."))
    m = result.metrics
    _check_categories(result, {c: (100.0, 100.0, 100.0) for c in SIZES})
    assert (m["overall"], m["overall_basic"], m["overall_hallucination"]) == (100.0,) * 3
    official = m["bias"]["official"]
    assert (official["yes_pct_diff"], official["no_pct_diff"], official["fp_ratio"]) == (0.0,) * 3
    # Nothing is wrong: the script's 0/0 gives 0, the card's ratio is undefined.
    assert (m["bias"]["card"]["yes_pct_diff"], m["bias"]["card"]["fp_ratio"]) == (0.0, None)
    assert official["hallucination_score"] == 0.0
    recipe = m["bias"]["card_recipe"]
    assert (recipe["yes_pct_diff"], recipe["fp_ratio"]) == (0.0, None)  # no wrong pair
    assert result.warnings == []
    for category in LEADERBOARD:
        for block in m["per_category"][category]["per_type"].values():
            assert block["paired"] == 100.0


def test_hedged_answers(root, tmp_path, pairs):
    answers = script(pairs, lambda p, s: "Yes or no.")
    official, _ = run(root, tmp_path, answers)
    m = official.metrics
    # Both words occur, so both golds are found: a perfect score under the official rule.
    _check_categories(official, {c: (100.0, 100.0, 100.0) for c in SIZES})
    assert m["overall"] == 100.0 and m["answers"] == {"both": 2300}
    # The script only looks at hits: b = h = 1 everywhere, so it sees no bias at all ...
    assert m["bias"]["official"]["yes_pct_diff"] == 0.0
    assert m["bias"]["official"]["fp_ratio"] == 0.0
    # ... while per question every answer contains "yes": (1952 - 976) / 1952 = +50.
    assert m["bias"]["card"]["yes_pct_diff"] == 50.0
    strict, _ = run(root, tmp_path, answers, answer_rule="strict")
    s = strict.metrics
    _check_categories(strict, {c: (0.0, 0.0, 0.0) for c in SIZES})
    assert s["unknown_rate"] == 100.0 and strict.counts["unparseable"] == 2300
    assert s["bias"]["card"] == {
        "yes_pct_diff": -50.0,
        "fp_ratio": 0.0,
        "counters": {
            "questions": 1952,
            "yes_predicted": 0,
            "yes_gold": 976,
            "wrong": 1952,
            "wrong_yes": 0,
        },
    }
    assert any("neither a clear yes nor a clear no" in w for w in strict.warnings)


def test_what_each_rule_cannot_read_is_counted_under_either_rule(root, tmp_path, pairs):
    forms = [
        "Yes.",
        "No, the speaker cannot fit behind it; nobody would answer yes.",  # both words
        "The sum of the angles is not less than 180 degrees.",  # neither word
        "Yes or no.",  # the options restated
    ]
    questions = [f"{p.id}/{s}" for p in pairs for s in SIDES]
    answers = {qid: forms[i % 4] for i, qid in enumerate(questions)}
    quarter = len(questions) // 4
    expected = {
        "official": {"total": 3 * quarter, "both": 2 * quarter, "neither": quarter},
        "strict": {
            "total": 3 * quarter,
            "echo": quarter,
            "no_opening_word": quarter,
            "other_word_too": quarter,
        },
    }
    for rule in ANSWER_RULES:
        result, scores = run(root, tmp_path, answers, answer_rule=rule)
        assert result.metrics["unread"] == expected
        by_id = {s.id: s.unread for s in scores}
        assert by_id[questions[0]] == {}
        assert by_id[questions[1]] == {"official": "both", "strict": "other_word_too"}
        assert by_id[questions[2]] == {"official": "neither", "strict": "no_opening_word"}
    # Recorded, never scored: the strict rule's numbers are those it always had.
    assert result.counts["unparseable"] == 3 * quarter


# ============================================================================================
# A seeded random mix, against an independent re-implementation

#: Response -> strict label (by hand). "None" marks a missing line or a model error.
POOL: list[tuple[object, str | None]] = [
    ("Yes", "yes"),
    ("No", "no"),
    ("Yes.", "yes"),
    ("no.", "no"),
    ("YES! There is a baby.", "yes"),
    ("No, there is not.", "no"),
    ("**Answer:** No", "no"),
    ("Yesterday I saw it.", "unknown"),  # official: neither word
    ("Nope", "unknown"),  # official: neither
    ("yes or no", "unknown"),  # official: both
    ("Yes, there is no doubt.", "unknown"),  # official: both
    ("The answer is yes", "unknown"),  # official: yes
    ("I cannot tell.", "unknown"),
    ("", "unknown"),
    (MISSING, None),
    (ERROR, None),
]
WEIGHTS = [12, 12, 6, 6, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 2, 1]


def _mix(pairs, seed):
    rng = random.Random(seed)
    choice = {}
    for pair in pairs:
        for side in SIDES:
            choice[f"{pair.id}/{side}"] = rng.choices(range(len(POOL)), WEIGHTS)[0]
    return choice


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _reference(pairs, choice, rule):
    """Per question (said_yes, said_no, correct), then every metric, computed plainly."""
    said = {}
    for pair in pairs:
        for side in SIDES:
            qid = f"{pair.id}/{side}"
            response, strict_label = POOL[choice[qid]]
            if strict_label is None:  # missing or error: no word, wrong
                yes = no = False
            elif rule == "official":
                yes, no = "yes" in _words(response), "no" in _words(response)
            else:
                yes, no = strict_label == "yes", strict_label == "no"
            gold = pair.side(side).answer
            said[qid] = (yes, no, yes if gold == "yes" else no)
    ref = {"per_category": {}, "per_type": {}}
    for category in SIZES:
        group = [p for p in pairs if p.category == category]
        basic = [said[f"{p.id}/basic"][2] for p in group]
        halluc = [said[f"{p.id}/hallucination"][2] for p in group]
        ref["per_category"][category] = (
            100 * sum(basic) / len(group),
            100 * sum(halluc) / len(group),
            100 * sum(a and b for a, b in zip(basic, halluc, strict=True)) / len(group),
        )
        for type_ in {p.type for p in group if p.type}:
            members = [p for p in group if p.type == type_]
            hits = sum(
                said[f"{p.id}/basic"][2] and said[f"{p.id}/hallucination"][2] for p in members
            )
            ref["per_type"][(category, type_)] = 100 * hits / len(members)
    ref["overall"] = sum(ref["per_category"][c][2] for c in LEADERBOARD) / 5
    board = [p for p in pairs if p.category in LEADERBOARD]
    # evaluation_bias.py, loop for loop (b: "yes" found in basic_pred, h: "no" in halluc_pred),
    # with the later version's hallucination and overall scores.
    gt_yes = gt_no = n_yes = n_no = n = fp = 0
    basic = halluc = overall = overall_basic = overall_halluc = cnt = 0
    for pair in board:
        b = said[f"{pair.id}/basic"][0]
        h = said[f"{pair.id}/hallucination"][1]
        gt_yes += 1
        if b:
            n_yes += 1
            basic += 1
            overall_basic += 1
            if not h:
                halluc += 1
        else:
            if h:
                n_no += 1
            n += 1
        gt_no += 1
        if h:
            n_no += 1
            overall_halluc += 1
        else:
            if b:
                n_yes += 1
                fp += 1
            n += 1
        if b and h:
            overall += 1
        cnt += 1
    ref["official"] = (
        100 * (n_yes - gt_yes) / (gt_yes * 2),
        100 * (n_no - gt_no) / (gt_no * 2),
        100 * fp / n,
        100 * halluc / basic,
    )
    ref["bias_script_overall"] = (
        100 * overall_basic / cnt,
        100 * overall_halluc / cnt,
        100 * overall / cnt,
    )
    # The card's scoring recipe: "yes" on basic answers only; wrong pairs with any "yes".
    yes_preds = sum(said[f"{p.id}/basic"][0] for p in board)
    wrong_pairs = [
        p for p in board if not (said[f"{p.id}/basic"][2] and said[f"{p.id}/hallucination"][2])
    ]
    with_yes = [
        p for p in wrong_pairs if said[f"{p.id}/basic"][0] or said[f"{p.id}/hallucination"][0]
    ]
    ref["card_recipe"] = (
        100 * abs(yes_preds - len(board)) / len(board),
        100 * len(with_yes) / len(wrong_pairs),
    )
    # The card, per question: V = all 1952 questions, W = the wrongly answered ones.
    questions = [said[f"{p.id}/{s}"] for p in board for s in SIDES]
    yes_predicted = sum(q[0] for q in questions)
    wrong = [q for q in questions if not q[2]]
    ref["card"] = (
        100 * (yes_predicted - len(board)) / len(questions),
        100 * sum(q[0] for q in wrong) / len(wrong),
    )
    return ref


def _compare(result, ref):
    m = result.metrics
    for category, values in ref["per_category"].items():
        block = m["per_category"][category]
        got = (block["basic"], block["hallucination"], block["paired"])
        assert got == pytest.approx(values), category
        assert result.per_category[category]["paired"] == pytest.approx(values[2])
    for (category, type_), paired in ref["per_type"].items():
        assert m["per_category"][category]["per_type"][type_]["paired"] == pytest.approx(paired)
    assert m["overall"] == pytest.approx(ref["overall"])
    official = m["bias"]["official"]
    got = (official["yes_pct_diff"], official["no_pct_diff"], official["fp_ratio"])
    assert (*got, official["hallucination_score"]) == pytest.approx(ref["official"])
    card = m["bias"]["card"]
    assert (card["yes_pct_diff"], card["fp_ratio"]) == pytest.approx(ref["card"])
    recipe = m["bias"]["card_recipe"]
    assert (recipe["yes_pct_diff"], recipe["fp_ratio"]) == pytest.approx(ref["card_recipe"])
    # metrics.pooled is exactly the script's overall basic, hallucination and overall scores.
    pooled = (m["pooled"]["basic"], m["pooled"]["hallucination"], m["pooled"]["paired"])
    assert pooled == pytest.approx(ref["bias_script_overall"])


@pytest.mark.parametrize("seed", [7, 2024])
def test_random_mix_official_rule(root, tmp_path, pairs, seed):
    choice = _mix(pairs, seed)
    answers = {qid: POOL[i][0] for qid, i in choice.items()}
    result, scores = run(root, tmp_path, answers)
    _compare(result, _reference(pairs, choice, "official"))
    missing = sum(POOL[i][0] is MISSING for i in choice.values())
    errors = sum(POOL[i][0] is ERROR for i in choice.values())
    assert result.counts["missing"] == missing > 0
    assert result.counts["model_error"] == errors > 0
    assert result.counts["ok"] == 2300 - missing - errors
    assert result.counts["unparseable"] == 0 and result.metrics["unknown_rate"] == 0.0
    assert any(f"{missing} question(s) have no prediction" in w for w in result.warnings)
    by_id = {s.id: s for s in scores}
    for qid, i in choice.items():
        if POOL[i][0] is ERROR:
            assert by_id[qid].outcome == "model_error" and not by_id[qid].correct
            assert by_id[qid].detail == "CUDA out of memory"


@pytest.mark.parametrize("seed", [7, 2024])
def test_random_mix_strict_rule(root, tmp_path, pairs, seed):
    choice = _mix(pairs, seed)
    answers = {qid: POOL[i][0] for qid, i in choice.items()}
    result, _ = run(root, tmp_path, answers, answer_rule="strict")
    _compare(result, _reference(pairs, choice, "strict"))
    unknown = sum(POOL[i][1] == "unknown" for i in choice.values())
    answered = sum(POOL[i][1] is not None for i in choice.values())
    assert result.counts["unparseable"] == unknown
    assert result.metrics["unknown_rate"] == pytest.approx(100 * unknown / answered)
    assert result.metrics["answers"]["unknown"] == unknown


def test_the_rules_disagree_exactly_where_expected(root, tmp_path, pairs):
    choice = _mix(pairs, 7)
    answers = {qid: POOL[i][0] for qid, i in choice.items()}
    _, official = run(root, tmp_path, answers)
    _, strict = run(root, tmp_path, answers, answer_rule="strict")
    for a, b in zip(official, strict, strict=True):
        response = POOL[choice[a.id]][0]
        if a.correct != b.correct:
            # Only answers the strict rule calls unknown can differ, and only towards wrong.
            assert response in ("yes or no", "Yes, there is no doubt.", "The answer is yes")
            assert a.correct and not b.correct


# ============================================================================================
# The worked four-pair example, end to end


def test_four_pair_example(tmp_path):
    rows = [
        {
            "basic": {"video": f"{i}.mp4", "question": f"Q{i}?", "answer": "yes"},
            "hallucination": {"video": f"{i}.mp4", "question": f"H{i}?", "answer": "no"},
            "type": "object",
        }
        for i in range(4)
    ]
    data = _write(tmp_path, json.dumps(rows))
    answers = {
        "object_relation/0/basic": "Yes.",
        "object_relation/0/hallucination": "No.",
        "object_relation/1/basic": "Yes",
        "object_relation/1/hallucination": "Yes, there is.",
        "object_relation/2/basic": "No.",
        "object_relation/2/hallucination": "No.",
        "object_relation/3/basic": "No",
        "object_relation/3/hallucination": "Yes",
    }
    predictions = write_predictions(tmp_path / "p.jsonl", answers)
    result, _ = evaluate_files(data, predictions)
    m = result.metrics
    block = m["per_category"]["object_relation"]
    assert (block["basic"], block["hallucination"], block["paired"]) == (50.0, 50.0, 25.0)
    assert m["overall"] == 25.0  # the mean of the one category present ...
    assert any("1 of the 5 leaderboard categories" in w for w in result.warnings)  # ... flagged
    # Script: n_yes 3, n_no 3, n 4, fp 1 -> -12.5, -12.5, 25 (tests/metrics/test_paired.py).
    official = m["bias"]["official"]
    assert (official["yes_pct_diff"], official["no_pct_diff"], official["fp_ratio"]) == (
        -12.5,
        -12.5,
        25.0,
    )
    # Card: 4 "yes" of 8 answers for 4 "yes" golds -> 0; wrong 1h, 2b, 3b, 3h, two "yes" -> 50.
    assert (m["bias"]["card"]["yes_pct_diff"], m["bias"]["card"]["fp_ratio"]) == (0.0, 50.0)


# ============================================================================================
# Missing, unknown and duplicate predictions; results and the table


def test_missing_and_unknown_ids_are_counted_never_dropped(root, tmp_path, pairs):
    answers = script(pairs, lambda p, s: p.side(s).answer)
    answers["temporal/0/hallucination"] = MISSING
    answers["temporal/175/basic"] = MISSING
    answers["temporal/176/basic"] = "yes"  # there is no pair 176
    result, scores = run(root, tmp_path, answers)
    assert result.counts["missing"] == 2 and result.counts["unknown_ids"] == 1
    block = result.metrics["per_category"]["temporal"]
    assert block["paired"] == pytest.approx(100 * 174 / 176)
    assert block["basic"] == pytest.approx(100 * 175 / 176)
    assert block["counts"] == {"ok": 350, "missing": 2}
    assert any("'temporal/176/basic'" in w for w in result.warnings)
    missing = next(s for s in scores if s.id == "temporal/0/hallucination")
    assert missing.outcome == "missing" and not missing.correct and missing.answer is None


def test_duplicate_prediction_is_an_error(root, tmp_path):
    path = tmp_path / "p.jsonl"
    line = json.dumps({"id": "temporal/0/basic", "response": "yes"})
    path.write_text(line + "\n" + line + "\n")
    with pytest.raises(DataError) as error:
        evaluate_files(root / "temporal", path)
    assert error.value.line == 2 and error.value.field == "id"


def test_a_prediction_without_response_or_error_is_a_model_error(root, tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": "temporal/0/basic"}) + "\n")
    result, scores = evaluate_files(root / "temporal", path)
    assert scores[0].outcome == "model_error" and "neither" in scores[0].detail
    assert result.counts["model_error"] == 1 and result.counts["missing"] == 351


def test_settings_are_validated_and_recorded(root, tmp_path, pairs):
    with pytest.raises(ConfigError):
        VideoHallucerSettings(answer_rule="lenient")
    with pytest.raises(ConfigError):
        VideoHallucerSettings(hallucination_video="both")
    predictions = write_predictions(tmp_path / "p.jsonl", script(pairs, lambda p, s: "Yes"))
    settings = VideoHallucerSettings(answer_rule="strict", strip_think=True, resamples=200)
    result, _ = evaluate_files(root, predictions, settings)
    manifest = result.manifest
    assert manifest.benchmark == "videohallucer"
    assert manifest.predictions_sha256 == hashlib.sha256(predictions.read_bytes()).hexdigest()
    assert manifest.data_sha256 == load_dataset(root).sha256
    assert manifest.model == "script"
    assert manifest.settings["answer_rule"] == "strict"
    assert manifest.settings["strip_think"] is True
    assert manifest.settings["resamples"] == 200 == result.ci["resamples"]
    assert manifest.settings["prompt_suffix"] == SUFFIX
    assert manifest.settings["data_files"]["temporal"]["pairs"] == 176
    # Results are plain JSON all the way down.
    decoded = json.loads(msgspec.json.encode(result))
    assert decoded["metrics"]["per_category"]["temporal"]["basic"] == 100.0


def test_intervals_bracket_the_estimates(root, tmp_path, pairs):
    choice = _mix(pairs, 7)
    result, _ = run(root, tmp_path, {qid: POOL[i][0] for qid, i in choice.items()})
    low, high = result.ci["overall"]
    assert low < result.metrics["overall"] < high
    for category in SIZES:
        low, high = result.ci["per_category"][category]["basic"]
        assert low <= result.metrics["per_category"][category]["basic"] <= high
    again, _ = run(root, tmp_path, {qid: POOL[i][0] for qid, i in choice.items()})
    assert again.ci == result.ci


def test_leaderboard_table(root, tmp_path, pairs):
    yes, _ = run(root, tmp_path, script(pairs, lambda p, s: "Yes"))
    gold, _ = run(root, tmp_path, script(pairs, lambda p, s: p.side(s).answer))
    table = videohallucer_table([("always-yes", yes), ("gold", gold)])
    assert table.headers[:4] == ["Method", "ObjRel Basic", "ObjRel Halluc", "ObjRel Overall"]
    assert table.headers[16:19] == ["Basic", "Halluc", "Overall"]
    assert table.rows[0][1:4] == ["100.0", "0.0", "0.0"]
    assert table.rows[0][16:23] == ["100.0", "0.0", "0.0", "50.0", "100.0", "50.0", "100.0"]
    assert table.rows[1][16:23] == ["100.0", "100.0", "100.0", "0.0", "0.0", "0.0", "–"]
    assert table.rows[0][-2:] == ["1150", "0"]
    markdown = render(table, "markdown")
    assert markdown.count("\n") == 4
    assert "| always-yes | 100.0 | 0.0 | 0.0 |" in markdown


def test_the_prompt_template_file_is_the_official_text():
    from gavel.benchmarks.videohallucer.prompt import OFFICIAL_TEMPLATE, PROMPT_SUFFIX

    assert OFFICIAL_TEMPLATE.text == "{question}" + PROMPT_SUFFIX
    assert OFFICIAL_TEMPLATE.render(question="Is there a cat?") == (
        "Is there a cat?\nAnswer the question using 'yes' or 'no'."
    )


def test_a_parroting_model_is_recorded_as_such_and_scores_officially(root, tmp_path, pairs):
    """Every answer repeats its prompt (question + "Answer the question using 'yes' or 'no'.").
    The official whole-word rule finds both words in each, so every question counts as correct
    (upstream's behaviour, kept); each answer is recorded as an echo and the run warns. The
    strict rule reads what is left after the copy: nothing, so no question is credited."""
    answers = script(pairs, lambda p, s: OFFICIAL_TEMPLATE.render(
        question=p.side(s).question))  # fmt: skip
    official, scores = run(root, tmp_path, answers)
    assert official.metrics["overall"] == 100.0  # as the official script would score it
    assert official.metrics["echoes"] == official.metrics["echoes_credited"] == len(scores)
    assert all(s.echo for s in scores)
    assert any("only repeat the prompt" in w and "--answer-rule strict" in w
               for w in official.warnings)  # fmt: skip
    strict, scores = run(root, tmp_path, answers, answer_rule="strict")
    assert strict.metrics["overall"] == 0.0
    assert strict.counts["unparseable"] == len(scores)
    assert all(s.detail == "the response only repeats the prompt" for s in scores)


def test_real_answers_are_no_echoes(root, tmp_path, pairs):
    answers = script(pairs, lambda p, s: f"{p.side(s).answer.capitalize()}, I think so.")
    result, scores = run(root, tmp_path, answers)
    assert result.metrics["echoes"] == 0 and not any(s.echo for s in scores)


def test_a_lone_surrogate_is_named_as_such_with_its_pair_and_line(tmp_path):
    second = json.dumps(PAIR).replace('"question": "', '"question": "\\udfff', 1)
    text = "[\n" + json.dumps(PAIR) + ",\n" + second + "\n]\n"
    with pytest.raises(DataError) as error:
        load_pairs(_write(tmp_path, text))
    assert error.value.line == 3
    assert error.value.field == "[1].basic.question"
    assert "lone surrogate" in error.value.message and "NaN" not in error.value.message


def test_json_nested_too_deep_is_a_located_error(tmp_path):
    deep = "[" * 1000 + "]" * 1000
    pair = json.dumps({**PAIR, "extra": "@"}).replace('"@"', deep)
    with pytest.raises(DataError, match="nested too deeply"):
        load_pairs(_write(tmp_path, "[" + pair + "]"))
