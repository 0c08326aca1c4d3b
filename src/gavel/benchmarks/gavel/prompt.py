"""GAVEL prompting: one request per sample, the caption and the box convention filled in."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from pathlib import Path

from gavel.prompts import PromptTexts, Template
from gavel.records import GavelSample
from gavel.requests import Request

NAME = "gavel"


#: How the default prompt asks for boxes in each convention a model may declare.
BOX_INSTRUCTIONS = {
    "pixel": " as [x1, y1, x2, y2] in pixels of the image",
    "resized-pixel": " as [x1, y1, x2, y2] in pixels of the image",
    "rel1": " as [x1, y1, x2, y2] relative to the image size, from 0 to 1",
    "rel1000": " as [x1, y1, x2, y2] relative to the image size, from 0 to 1000",
    "rel999": " as [x1, y1, x2, y2] relative to the image size, from 0 to 999",
    "yx1000": " as [ymin, xmin, ymax, xmax] relative to the image size, from 0 to 1000",
    "loc1000": " as four <loc_N> tokens each (x1, y1, x2, y2; N from 0 to 999)",
    "loc1024-yx": " as four <locNNNN> tokens each (y1, x1, y2, x2; NNNN from 0000 to 1023)",
    "coord-tokens": " as four coordinate tokens <p-512> to <p512> each (x1, y1, x2, y2)",
    "qwen-vl": " as <box>(x1,y1),(x2,y2)</box> relative to the image size, from 0 to 1000",
    "rel100": " as [x1, y1, x2, y2] in percent of the image size, from 0 to 100",
    "rel1-square": " as [x1, y1, x2, y2] relative to the image size, from 0 to 1",
    "loc1000-quad": " as eight <loc_N> tokens each (four corners x y; N from 0 to 999)",
    "patch32": " as <object><patch_index_N><patch_index_M></object> (upper-left and "
    "lower-right cells of a 32 x 32 grid)",
    "kosmos-2.5": " as <bbox><x_N><y_N><x_N><y_N></bbox> each (x1, y1, x2, y2 in pixels of "
    "the image)",
}


def build_requests(
    samples: Iterable[GavelSample],
    image_root: Path,
    template: Template,
    box_format: str | None,
) -> Iterator[Request]:
    """One request per sample: the template filled with the caption and the box convention."""
    instruction = BOX_INSTRUCTIONS.get(box_format or "pixel", "")
    for sample in samples:
        yield Request(
            sample_id=sample.id,
            task=NAME,
            prompt=template.render(caption=sample.caption, box_instruction=instruction),
            images=(image_root / sample.image,),
            fields={"caption": sample.caption},
        )


@functools.cache
def declared_prompts() -> PromptTexts:
    """The default prompt and the box instruction it is sent with (``--prompt`` chooses among
    the template files, which every echo filter holds anyway). (what the benchmark declares it sends, for the echo filter)."""
    from gavel.prompts import load_template

    return PromptTexts((load_template("gavel_v1").text,), tuple(BOX_INSTRUCTIONS.values()))
