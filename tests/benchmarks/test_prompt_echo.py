"""A model that only parrots its prompt earns nothing from any reader.

Every prompt gavel sends (each template file, rendered as it is sent; the GAVEL prompt as each
preset asks for it; the DetailVerifyBench thinking prompt; the judge's two prompts) is cut into
fragments here (the whole text, its lines, its sentences, its JSON examples, a ramble that
repeats it, a copy cut off at its JSON example) by this file's own rules, and each fragment is
given back as the answer to every reader:

- GAVEL: no verdict (``unparseable``), no box in any coordinate convention;
- the LLM judge and the alignment rater: no score;
- DetailVerifyBench: no tagged hallucination, in both modes, with and without thinking; an
  answer the official rules accept (``NO HALLUCINATION`` from the rule line) is marked ``echo``;
- VideoHallucer: under the strict rule neither yes nor no; under the official rule, which
  credits a whole-word "yes" or "no" anywhere (upstream's behaviour, kept), every credited echo
  is marked ``echo`` and counted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gavel.benchmarks.detailverify import prompt as detailverify
from gavel.benchmarks.detailverify.data import DetailVerifySample
from gavel.benchmarks.detailverify.tokens import score_sample
from gavel.benchmarks.gavel import prompt as gavel
from gavel.benchmarks.gavel import scoring as gavel_scoring
from gavel.benchmarks.gavel.data import load_samples
from gavel.benchmarks.registry import echo_filter
from gavel.benchmarks.videohallucer import prompt as videohallucer
from gavel.benchmarks.videohallucer import scoring as videohallucer_scoring
from gavel.benchmarks.videohallucer.data import VideoHallucerPair, VideoHallucerQuestion
from gavel.curate.alignment import read_rating
from gavel.examples import example_dir
from gavel.judge.protocol import judge_messages, prediction_text, read_reply
from gavel.models.presets import get_preset, preset_names
from gavel.parsing import ImageGeometry, convention_names, parse_boxes
from gavel.parsing.verdict import read_answer
from gavel.prompts import load_template, template_names
from gavel.records import Outcome, Prediction

CAPTION = "A brown dog sits on a red sofa next to two cushions."
QUESTION = "Is the man in the video holding a cup?"
DVB_CAPTION = (
    "The photo shows a kitchen with white cabinets. A kettle stands on the stove. "
    "Two mugs are on the counter near the window."
)


def gavel_prompts() -> dict[str, str]:
    """The GAVEL prompt of every preset (and of every template), exactly as sent."""
    samples, _ = load_samples(example_dir("photos") / "gavel.jsonl")
    prompts = {}
    for name in preset_names():
        preset = get_preset(name)
        template = load_template(preset.gavel_prompt)
        requests = gavel.build_requests(samples[:1], Path("."), template, preset.box_format)
        prompts[f"preset {name}"] = next(requests).prompt
    return prompts


def all_prompts() -> dict[str, str]:
    prompts = gavel_prompts()
    fields = {"caption": CAPTION, "question": QUESTION, "box_instruction": ""}
    for name in template_names():
        prompts[f"template {name}"] = load_template(name).text.format(**fields)
    sample = dvb_sample()
    for thinking in (False, True):
        template = detailverify.load_prompt(thinking=thinking)
        request = next(detailverify.build_requests([sample], Path("."), template))
        prompts[f"detailverify thinking={thinking}"] = request.prompt
    pair = vh_pair()
    request = next(videohallucer.build_requests([pair], Path(".")))
    prompts["videohallucer official"] = request.prompt
    # The judge's data slots hold a prediction without a verdict: a verdict placed there is the
    # judged model's, which the other readers would rightly read.
    prediction = prediction_text(None, "The sofa is blue.")
    for hallucinated in (True, False):
        system, user = judge_messages(prediction, "The sofa is red.", hallucinated)
        prompts[f"judge hallucinated={hallucinated}"] = system["content"] + "\n" + user["content"]
    return prompts


def cut(text: str) -> list[str]:
    """This test's own fragments of a prompt."""
    pieces = [text, text + "\n" + text, text.upper(), text.replace("**", "")]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    pieces += lines
    pieces += [s for line in lines for s in re.split(r"(?<=[.?!])\s+", line) if s]
    examples = re.findall(r"\{[^{}]*\}", text)
    pieces += examples
    for example in examples:  # the example cut off just after its first number
        number = re.search(r"\d", example)
        if number:
            pieces.append(example[: number.end()])
    pieces += ["Is there a hallucination? yes or no", QUESTION + " yes or no"]
    return list(dict.fromkeys(pieces))


def dvb_sample() -> DetailVerifySample:
    tagged = DVB_CAPTION.replace("white", "<HALLUCINATION>white</HALLUCINATION>")
    return DetailVerifySample(
        id="k1",
        layout="real_test",
        image="kitchen.jpg",
        caption=DVB_CAPTION,
        tagged=tagged,
        labels=[("white", ["Object Color Hallucination"])],
    )


def vh_pair() -> VideoHallucerPair:
    return VideoHallucerPair(
        id="object_relation/0",
        category="object_relation",
        index=0,
        type="relation",
        basic=VideoHallucerQuestion(video="a.mp4", question=QUESTION, answer="yes"),
        hallucination=VideoHallucerQuestion(
            video="b.mp4", question="Is the man in the video holding a knife?", answer="no"
        ),
    )


FRAGMENTS = [(name, piece) for name, text in all_prompts().items() for piece in cut(text)]
IDS = [f"{name}:{i}" for i, (name, _) in enumerate(FRAGMENTS)]


def test_there_are_fragments_of_every_prompt():
    names = {name for name, _ in FRAGMENTS}
    assert {f"preset {p}" for p in preset_names()} <= names
    assert {f"template {t}" for t in template_names()} <= names
    assert len(FRAGMENTS) > 250


@pytest.mark.parametrize(("name", "text"), FRAGMENTS, ids=IDS)
def test_gavel_gives_no_verdict_and_no_box(name, text):
    for truncated in (False, True):
        assert read_answer(text, truncated=truncated, echo=echo_filter()).verdict is None
    geometry = ImageGeometry(640, 480, sent_size=(640, 480), input_size=(644, 476))
    for convention in convention_names():
        assert parse_boxes(text, convention, geometry).boxes == [], convention


@pytest.mark.parametrize(("name", "text"), FRAGMENTS, ids=IDS)
def test_judge_and_rater_give_no_score(name, text):
    assert read_reply(text) is None
    assert read_rating(text) is None


@pytest.mark.parametrize(("name", "text"), FRAGMENTS, ids=IDS)
def test_detailverify_tags_nothing(name, text):
    sample = dvb_sample()
    for mode in ("official", "strict"):
        for thinking in (False, True):
            score = score_sample(sample, Prediction(id="k1", response=text), mode=mode,
                                 thinking=thinking)  # fmt: skip
            assert score.pred_flags == []
            if score.outcome == Outcome.OK:  # NO HALLUCINATION, from a copied rule line
                assert score.validity == "no_hallucination" and score.echo


@pytest.mark.parametrize(("name", "text"), FRAGMENTS, ids=IDS)
def test_videohallucer_credits_no_echo_silently(name, text):
    pair = vh_pair()
    prediction = Prediction(id="object_relation/0/basic", response=text)
    strict = videohallucer_scoring.VideoHallucerSettings(answer_rule="strict")
    score = videohallucer_scoring.score_question(pair, "basic", prediction, strict)
    assert not (score.said_yes or score.said_no or score.correct)
    official = videohallucer_scoring.VideoHallucerSettings()
    score = videohallucer_scoring.score_question(pair, "basic", prediction, official)
    if score.said_yes or score.said_no:
        assert score.echo


def test_gavel_scoring_counts_echoes_as_unparseable(tmp_path):
    """End to end: a parroting model's predictions file scores verification F1 0."""
    photos = example_dir("photos")
    samples, _ = load_samples(photos / "gavel.jsonl")
    prompts = gavel_prompts()
    template = load_template("gavel_v1")
    requests = list(gavel.build_requests(samples, photos, template, "pixel"))
    lines = [
        Prediction(id=r.sample_id, response=r.prompt, box_format="pixel", model="parrot")
        for r in requests
    ]
    run = gavel_scoring.score_samples(samples, lines, gavel_scoring.GavelSettings())
    assert {s.outcome for s in run.scores} == {Outcome.UNPARSEABLE}
    assert run.tally.echoed == len(samples)
    assert prompts  # every preset's prompt was built above
    summary = gavel_scoring.summarize_samples(
        samples, run, gavel_scoring.GavelSettings(resamples=0)
    )
    assert summary["metrics"]["verification"]["f1"] in (0.0, None)
    assert summary["metrics"]["answers"]["echoed"] == len(samples)
