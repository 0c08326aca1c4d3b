"""DetailVerifyBench prompting: the official prompt (with or without thinking), one request per
sample."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from pathlib import Path

from gavel.benchmarks.detailverify.data import DetailVerifySample
from gavel.errors import ConfigError
from gavel.prompts import PromptTexts, Template, load_template
from gavel.requests import Request

NAME = "detailverify"


_NO_THINK_STEP = (
    "You need to output the final verification result in <result> </result> tags "
    "following these strict rules:"
)
_THINK_STEPS = (
    "Let's think step by step and output the final answer in the required format.\n"
    "First, you need to output your detailed reasoning in <think> tags. In this reasoning, "
    "please break down the caption into its key components (objects, attributes, "
    "relationships) and verify each one against the image. If a component is a hallucination, "
    "clearly state *why*.\n"
    "Second, you need to output the final verification result in <result> </result> tags "
    "following these strict rules:"
)
_THINK_FORMAT = "<think> [Your step-by-step analysis] </think> "


def load_prompt(thinking: bool = False) -> Template:
    """The official prompt (``prompt.py``): ``no_think``, or ``think`` when ``thinking``.

    The ``think`` text is the ``no_think`` text with the reasoning instructions in place of the
    single output instruction and ``<think> … </think>`` before the format line.
    """
    base = load_template("detailverify_v1")
    if not thinking:
        return base
    if base.text.count(_NO_THINK_STEP) != 1:
        raise ConfigError("detailverify_v1 prompt no longer has its output instruction line")
    text = base.text.replace(_NO_THINK_STEP, _THINK_STEPS)
    head, _, format_line = text.rpartition("\n")
    return Template("detailverify_think_v1", f"{head}\n{_THINK_FORMAT}{format_line}")


def build_requests(
    samples: Iterable[DetailVerifySample], image_root: Path, template: Template
) -> Iterator[Request]:
    """One request per sample: the caption without tags, and the image.

    Images are looked up as the official ``inference.py`` does: ``<root>/<image>`` (real data:
    ``<category>/<filename>``), else a file of the same name in a folder directly under root.
    """
    root = Path(image_root)
    folders: list[Path] | None = None
    for sample in samples:
        path = root / sample.image
        if not path.is_file():
            if folders is None:
                folders = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
            name = Path(sample.image).name
            path = next((f / name for f in folders if (f / name).is_file()), path)
        yield Request(
            sample_id=sample.id,
            task=NAME,
            prompt=template.render(caption=sample.caption),
            images=(path,),
            fields={"caption": sample.caption},
        )


@functools.cache
def declared_prompts() -> PromptTexts:
    """The official prompt, without and with thinking. (what the benchmark declares it sends, for the echo filter)."""
    return PromptTexts((load_prompt(thinking=False).text, load_prompt(thinking=True).text))
