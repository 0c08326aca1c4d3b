"""The built-in ``scene`` model as an adapter: it looks at the pixels and reads the text.

It never reads file names, image metadata or the generator's sidecar files: only the decoded
pixels (or video frames) it is sent and the text fields of the request.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image

from gavel.errors import DataError, GavelError
from gavel.media.pixels import apply_pixel_limit, refusal
from gavel.models.scene.detailverify_answer import answer_detailverify
from gavel.models.scene.gavel_answer import answer_gavel
from gavel.models.scene.video_answer import answer_question
from gavel.regular_files import require_regular
from gavel.requests import Answer, Capabilities, Request


def _pixels(request: Request) -> np.ndarray:
    apply_pixel_limit()
    try:
        require_regular(request.images[0])  # Pillow would block on a FIFO
        with Image.open(request.images[0]) as image:
            return np.asarray(image.convert("RGB"))
    except Image.DecompressionBombError as error:
        raise refusal(request.images[0], error) from None
    except DataError as error:
        raise GavelError(f"cannot read image {request.images[0]}: {error.message}") from None


class SceneModel:
    name = "scene"
    capabilities = Capabilities(images=True, multi_image=True, video=True, box_format="pixel")

    def settings(self) -> dict[str, Any]:
        return {"kind": "built-in rule-based perception of gavel's synthetic scenes"}

    def answer(self, request: Request) -> Answer:
        if request.task == "gavel":
            pixels = _pixels(request)
            height, width = pixels.shape[:2]
            return Answer(
                answer_gavel(pixels, request.fields["caption"]), sent_size=(width, height)
            )
        if request.task == "detailverify":
            return Answer(answer_detailverify(_pixels(request), request.fields["caption"]))
        if request.task == "videohallucer":
            return Answer(answer_question(request.images[0], request.fields["question"]))
        raise ValueError(f"the scene model does not answer {request.task!r}")
