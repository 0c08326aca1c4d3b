"""gavel's three benchmarks as inspect_ai tasks: ``inspect eval gavel/gavel -T data=FILE``.

inspect_ai finds this module through the ``inspect_ai`` entry point of the ``gavel-eval``
distribution. Each task asks what ``gavel generate`` asks (gavel's loader, prompt and message
content, videos as their sampled frames) and scores with gavel's own scorer, so any inspect
provider, its batch mode and its log viewer give the numbers ``gavel score`` gives on the same
answers. A finished log is also a predictions file: ``gavel score --predictions LOG.eval``.

The per-sample score is gavel's per-sample record (outcome, verdicts, ...); the metrics are the
whole run scored at once, every number of ``results.json`` under its dotted name. A run of part
of the data (inspect's ``--limit``, ``--sample-id``) is scored as ``gavel score --sample-id``
scores those samples: the metrics cover the samples the run asked, and say how many of how many.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import Generate, TaskState, generate, solver

from gavel.api import tasks as api
from gavel.integrations import inspect_epochs, inspect_judge
from gavel.io.formats.inspect_log import PREDICTION_KEY, finish_reason
from gavel.requests import Request

#: The sample ids each task has asked, by the task's key. A sample inspect could not answer
#: has no score, so its metrics alone would drop it; it was asked, and gavel counts it (as
#: missing, that is wrong), so a model that fails on the hard samples is not flattered.
_ASKED: dict[str, set[str]] = {}
#: The epochs each task has run, by the task's key (several: ``inspect eval --epochs N``).
_EPOCHS: dict[str, set[int]] = {}
#: The options that name a video's frame sampling (a preset's are some of them).
_SAMPLING = ("frames", "fps", "max_frames")


def _task_name(short: str) -> str:
    """The name to register so that the task is found as ``gavel/<short>``.

    inspect prefixes the package name itself when gavel is installed into site-packages (a
    wheel) and not when it runs from a source checkout (an editable install of
    ``gavel-eval``, whose import name differs), so ask inspect which it will do.
    """
    try:
        from inspect_ai._util.registry import registry_name

        qualified = registry_name(_task_name, short)
    except ImportError:  # a future inspect without this helper: the checkout case
        qualified = short
    return short if qualified == f"gavel/{short}" else f"gavel/{short}"


class BuilderOptions(TypedDict):
    """How a task builds a message's content (:class:`gavel.api.tasks.MessageBuilder`'s
    options); a plain dict, which inspect records among the solver's arguments."""

    max_image_side: int | None
    frames: int | None
    fps: float | None
    max_frames: int | None
    image_format: str


@solver
def gavel_message(builder_options: BuilderOptions, requests: dict[str, Request], asked: str):
    """Replace the sample's input by the message gavel sends: its images, then its prompt;
    the sample is noted as asked (under the task's key ``asked``)."""
    builder = api.MessageBuilder(**builder_options)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        _ASKED.setdefault(asked, set()).add(str(state.sample_id))
        _EPOCHS.setdefault(asked, set()).add(state.epoch)
        request = requests[str(state.sample_id)]
        if request.images:
            parts, sent = await asyncio.to_thread(builder.content, request)
            content: Any = [
                ContentImage(image=part["image_url"]["url"])
                if part["type"] == "image_url"
                else ContentText(text=part["text"])
                for part in parts
            ]
        else:
            content, sent = request.prompt, None
        state.messages = [ChatMessageUser(content=content)]
        state.metadata["sent_size"] = list(sent) if sent else None
        return state

    return solve


@metric
def gavel_metrics(benchmark: str, data: str, options: dict[str, Any], asked: str = "") -> Metric:
    """Every number ``gavel score`` reports for these answers (scored as one run), over the
    samples the run asked: those scored and those inspect could not answer (``asked``: the
    task's key; a log scored again by ``inspect score`` has its scored samples only)."""
    settings = api.TaskOptions(**options)
    per_sample = api.SampleScorer(benchmark, data, settings)

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        kept = [item.score.metadata for item in scores if item.score.metadata]
        grouped = inspect_epochs.by_epoch(kept)
        if grouped is not None and len(grouped) > 1:
            return inspect_epochs.mean_metrics(grouped, one_run)
        ran_epochs = len(_EPOCHS.get(asked, ()))
        if grouped is None and ran_epochs > 1:  # another reducer: its metadata is epoch 1's
            raise inspect_epochs.refuse(ran_epochs)
        return one_run(kept)

    def one_run(kept: Sequence[Mapping[str, Any]]) -> dict[str, float]:
        """gavel's metrics of one answer per sample (the scores' metadata)."""
        answers = [
            api.prediction_from_dict(entry[PREDICTION_KEY])
            for entry in kept
            if PREDICTION_KEY in entry
        ]
        ran = {answer.id for answer in answers} | _ASKED.get(asked, set())
        if not ran:
            return {}  # nothing asked yet: no numbers (inspect shows none)
        selection = per_sample.selection(ran)
        result, scored = api.evaluate(benchmark, data, answers, settings, selection)
        judged = inspect_judge.Recorded(kept)
        if judged:
            api.add_judged(data, settings, result, scored, judged)
        return api.flat_metrics(result)

    return compute


@scorer(metrics=[])
def gavel_scorer(benchmark: str, data: str, options: dict[str, Any], judge: str = "none"):
    """gavel's per-sample score, with the answer kept as a predictions line, and (GAVEL) the
    explanation judged under ``judge`` (:data:`inspect_judge.MODES`)."""
    settings = api.TaskOptions(**options)
    per_sample = api.SampleScorer(benchmark, data, settings)
    explanation = inspect_judge.SampleJudge(judge)

    async def score(state: TaskState, target: Target) -> Score:
        output = state.output
        usage = output.usage
        answer = api.prediction(
            str(state.sample_id),
            output.completion,
            model=output.model or None,
            box_format=settings.box_format,
            sent_size=state.metadata.get("sent_size"),
            finish_reason=finish_reason(output.stop_reason),
            prompt_tokens=usage.input_tokens if usage else None,
            completion_tokens=usage.output_tokens if usage else None,
        )
        scored = per_sample.score(answer)
        metadata = {
            PREDICTION_KEY: api.prediction_to_dict(answer),
            inspect_epochs.EPOCH_KEY: state.epoch,
        }
        done = await explanation.judge(per_sample.judge_item(scored)) if judge != "none" else None
        if done is not None:
            judged, described = done
            inspect_judge.attach_judged(scored, judged)
            metadata |= inspect_judge.to_metadata(judged, described)
        return Score(
            value=api.score_values(scored),
            answer=output.completion,
            explanation=scored.detail or str(scored.outcome),
            metadata=metadata,
        )

    return score


def _task(
    benchmark: str,
    data: str,
    options: api.TaskOptions,
    *,
    max_image_side: int | None = None,
    frames: int | None = None,
    fps: float | None = None,
    max_frames: int | None = None,
    image_format: str = "auto",
    judge: str = "none",
) -> Task:
    if not data:
        raise ValueError(f"gavel/{benchmark} needs its data: -T data=PATH")
    given, (path, options) = data, api.resolve_data(benchmark, data, options)
    data = str(path)
    builder_options: BuilderOptions = {
        "max_image_side": max_image_side,
        "frames": frames,
        "fps": fps,
        "max_frames": max_frames,
        "image_format": image_format,
    }
    sampling = api.MessageBuilder(**builder_options).frames
    requests = api.load_requests(benchmark, data, options, sampling)
    samples = [
        Sample(
            id=request.sample_id,
            input=request.prompt,
            metadata={"media": [str(path) for path in request.images], **request.fields},
        )
        for request in requests
    ]
    settings = options.as_dict()
    asked = uuid.uuid4().hex  # this task's key in _ASKED
    by_id = {r.sample_id: r for r in requests}
    return Task(
        dataset=MemoryDataset(samples, name=benchmark, location=given),
        solver=[gavel_message(builder_options, by_id, asked), generate()],
        scorer=gavel_scorer(benchmark, str(data), settings, judge),
        metrics=[gavel_metrics(benchmark, str(data), settings, asked)],
        epochs=Epochs(1, inspect_epochs.gavel_epochs()),  # --epochs N alone keeps this reducer
        metadata={"gavel_benchmark": benchmark, "gavel_options": settings, "frames": sampling},
        # gavel generate's max_tokens and temperature; inspect's --max-tokens/--temperature win.
        config=GenerateConfig(**api.generation_defaults()),
    )


@task(name=_task_name("gavel"))
def gavel(
    data: str = "",
    image_root: str | None = None,
    box_format: str | None = None,
    prompt: str | None = None,
    match: str = "union",
    max_image_side: int | None = None,
    image_format: str = "auto",
    preset: str | None = None,
    judge: str = "auto",
) -> Task:
    """GAVEL: is the caption hallucinated, why (judged by the grader role, else the offline
    judge; ``judge=none``: not judged), and where (boxes in ``box_format``; the preset's, else
    ``pixel``)."""
    family = api.family(preset)
    options = api.TaskOptions(
        image_root=image_root,
        box_format=box_format or family.box_format,
        prompt=prompt or family.prompt,
        match=match,
    )
    side = family.max_image_side if max_image_side is None else max_image_side
    judge = inspect_judge.check_mode(judge, "gavel")
    return _task(
        "gavel", data, options, max_image_side=side, image_format=image_format, judge=judge
    )


@task(name=_task_name("detailverify"))
def detailverify(
    data: str = "",
    image_root: str | None = None,
    thinking: bool = False,
    mode: str = "official",
    empty_groups: str = "null",
    max_image_side: int | None = None,
    image_format: str = "auto",
    preset: str | None = None,
) -> Task:
    """DetailVerifyBench: tag the hallucinated words of a long caption."""
    options = api.TaskOptions(
        image_root=image_root, thinking=thinking, mode=mode, empty_groups=empty_groups
    )
    side = api.family(preset).max_image_side if max_image_side is None else max_image_side
    return _task("detailverify", data, options, max_image_side=side, image_format=image_format)


@task(name=_task_name("videohallucer"))
def videohallucer(
    data: str = "",
    video_root: str | None = None,
    answer_rule: str = "official",
    frames: int | None = None,
    fps: float | None = None,
    max_frames: int | None = None,
    max_image_side: int | None = None,
    preset: str | None = None,
) -> Task:
    """VideoHallucer: paired yes/no questions; each video is sent as its sampled frames (the
    preset's sampling unless ``frames`` or ``fps`` is given)."""
    family = api.family(preset)
    options = api.TaskOptions(image_root=video_root, answer_rule=answer_rule)
    if frames is None and fps is None and max_frames is None and family.frames:
        frames, fps, max_frames = (family.frames.get(name) for name in _SAMPLING)
    side = family.max_image_side if max_image_side is None else max_image_side
    return _task(
        "videohallucer",
        data,
        options,
        max_image_side=side,
        frames=frames,
        fps=fps,
        max_frames=max_frames,
    )
