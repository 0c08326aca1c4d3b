"""gavel's requests through Ray Data's LLM processors (``ray.data.llm``), and the answers back
as a predictions file that ``gavel score`` reads.

The processor's engine (vLLM) runs on the cluster; what gavel owns is both ends, so a run
through Ray Data is scored exactly as one through ``gavel generate``:

- :func:`request_rows` turns requests into Ray Data rows (the request as one JSON string, so
  no column collides with the columns Ray's stages read and write, such as ``prompt`` or
  ``model``);
- :func:`preprocess` (``build_processor(preprocess=...)``) builds the OpenAI-style chat
  messages with the images inlined as data URLs, the very content gavel sends to an
  OpenAI-compatible server, plus the sampling parameters;
- :func:`postprocess` (``build_processor(postprocess=...)``) turns the engine's reply into one
  predictions line;
- :func:`write_predictions` appends the lines on the driver, resumable like gavel's runners,
  including the rows whose generation failed (Ray sends those past ``postprocess``).

Nothing here imports Ray or vLLM: the functions take and return plain dicts, so they run (and
are tested) anywhere.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

from gavel.errors import GavelError
from gavel.io.files import AppendFile
from gavel.io.output_lock import writes_output
from gavel.media.image_cache import EncodedImages
from gavel.media.image_urls import EncodedImage, encode_file, encode_frame
from gavel.media.kinds import VIDEO_SUFFIXES
from gavel.media.sampling import FrameSampling, sampling_from_options
from gavel.records import Prediction
from gavel.requests import Request
from gavel.runner.local import completed_ids

#: Row columns of gavel's own; prefixed so Ray's stages never read or overwrite them.
ID_COLUMN, REQUEST_COLUMN = "gavel_id", "gavel_request"
MODEL_COLUMN, BOX_FORMAT_COLUMN, SENT_SIZE_COLUMN = "gavel_model", "gavel_box_format", "gavel_sent"
#: The column Ray Data LLM sets on a row whose generation failed (``should_continue_on_error``).
ERROR_COLUMN = "__inference_error__"


def _encode_path(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    raise NotImplementedError(f"cannot encode {type(value).__name__}")


def _decode_path(kind: type, value: Any) -> Any:
    if kind is Path:
        return Path(value)
    raise NotImplementedError(f"cannot decode {kind}")


_request_encoder = msgspec.json.Encoder(enc_hook=_encode_path)
_request_decoder = msgspec.json.Decoder(Request, dec_hook=_decode_path)


def request_rows(requests: Iterable[Request], done: Container[str] = ()) -> Iterator[dict]:
    """One row per request whose id is not in ``done`` (nor repeated), for
    ``ray.data.from_items``."""
    seen: set[str] = set()
    for request in requests:
        if request.sample_id in done or request.sample_id in seen:
            continue
        seen.add(request.sample_id)
        yield {
            ID_COLUMN: request.sample_id,
            REQUEST_COLUMN: _request_encoder.encode(request).decode("utf-8"),
        }


def preprocess(
    row: Mapping[str, Any],
    *,
    model: str,
    box_format: str | None,
    max_tokens: int = 1024,
    temperature: float = 0.0,
    max_image_side: int | None = None,
    frames: int | None = None,
    fps: float | None = None,
    max_frames: int | None = None,
) -> dict[str, Any]:
    """``messages`` (system message if any, then one user turn: images first, then the prompt)
    and ``sampling_params`` for the engine, plus what :func:`postprocess` needs to write the
    line: the model's name, its box convention and the first image's size as sent. Bind the
    keywords with ``functools.partial``. Images are sent byte for byte when PNG or JPEG and not
    resized; a resized one (``max_image_side``) is re-encoded (JPEG if it was one, else PNG);
    a video is sent as its sampled frames (``frames`` / ``fps``, ``max_frames``) in JPEG. A file
    is encoded once per process while it stays in :data:`ENCODED`'s budget."""
    request = _request_decoder.decode(row[REQUEST_COLUMN])
    sampling = sampling_from_options(frames, fps, max_frames)
    parts: list[dict[str, Any]] = []
    sent: list[int] | None = None
    for path in map(Path, request.images):
        for image in _encoded(path, max_image_side, sampling):
            parts.append({"type": "image_url", "image_url": {"url": image.url}})
            sent = sent or list(image.size)
    parts.append({"type": "text", "text": request.prompt})
    messages: list[dict[str, Any]] = (
        [{"role": "system", "content": request.system}] if request.system else []
    )
    messages.append({"role": "user", "content": parts})
    return {
        "messages": messages,
        "sampling_params": {"temperature": temperature, "max_tokens": max_tokens},
        MODEL_COLUMN: model,
        BOX_FORMAT_COLUMN: box_format,
        SENT_SIZE_COLUMN: sent,
    }


#: What this process encoded (a Ray worker runs many rows): a file that several rows send, the
#: image of several captions or the video of a question pair, is read and encoded once while
#: it stays within the budget (:mod:`gavel.media.image_cache`).
ENCODED = EncodedImages()


def _encoded(
    path: Path, max_image_side: int | None, sampling: FrameSampling
) -> tuple[EncodedImage, ...]:
    """What is sent for ``path``: the image, or the video's sampled frames."""
    video = path.suffix.lower() in VIDEO_SUFFIXES

    def make() -> tuple[EncodedImage, ...]:
        if not video:
            return (encode_file(path, max_image_side),)
        from gavel.media.frames import sample_frames

        frames = sample_frames(path, sampling).images
        return tuple(encode_frame(frame, max_image_side) for frame in frames)

    key = EncodedImages.key(path, max_image_side, sampling if video else None)
    return ENCODED.get_or_make(key, make)


def postprocess(row: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's reply as one predictions line (``prediction``, a JSON string) with its
    ``id``. The text is kept verbatim; token counts and the engine's time come along."""
    prediction = Prediction(
        id=row[ID_COLUMN],
        response=row["generated_text"],
        box_format=row.get(BOX_FORMAT_COLUMN),
        model=row.get(MODEL_COLUMN),
        sent_size=_size(row.get(SENT_SIZE_COLUMN)),
        latency_s=_seconds(row.get("time_taken_llm")),
        prompt_tokens=_count(row.get("num_input_tokens")),
        completion_tokens=_count(row.get("num_generated_tokens")),
        finish_reason=finish_reason(row),
    )
    return {"id": prediction.id, "prediction": msgspec.json.encode(prediction).decode("utf-8")}


def finish_reason(row: Mapping[str, Any]) -> str | None:
    """Why generation ended: the engine's own word when the row carries one, else ``length``
    when it generated as many tokens as ``max_tokens`` allowed (vLLM's stage returns the count,
    not the reason) and ``stop`` when fewer; ``None`` when either number is unknown. Scoring
    needs it to tell an answer cut off from one that ended."""
    given = row.get("finish_reason")
    if isinstance(given, str) and given:
        return given
    generated = _count(row.get("num_generated_tokens"))
    limit = (row.get("sampling_params") or {}).get("max_tokens")
    if generated is None or limit is None:
        return None
    return "length" if generated >= int(limit) else "stop"


def prediction_line(row: Mapping[str, Any]) -> bytes:
    """The line to write for a row out of the processor: :func:`postprocess`'s, or for a row
    whose generation failed (which Ray sends past ``postprocess``) a line with ``error``, so
    the sample is scored as a model error instead of missing."""
    error = row.get(ERROR_COLUMN)
    if error:
        failed = Prediction(id=row[ID_COLUMN], model=row.get(MODEL_COLUMN), error=str(error))
        return msgspec.json.encode(failed)
    if "prediction" not in row:
        raise GavelError(f"row {row.get('id', row.get(ID_COLUMN))!r}: no 'prediction' column "
                         "(build the processor with postprocess=gavel.runner.ray_data.postprocess)")  # fmt: skip
    return str(row["prediction"]).encode("utf-8")


@writes_output("out")
def write_predictions(rows: Iterable[Mapping[str, Any]], out: str | Path) -> int:
    """Append the rows' lines to ``out`` (only the driver writes), each flushed as it comes;
    ids already in the file are skipped, a line a crash cut short is dropped first. Returns
    the number of lines written."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = completed_ids(out)
    written = 0
    with AppendFile(out) as handle:  # its OS errors (a full disk) name the file
        for row in rows:
            line = prediction_line(row)
            sample_id = msgspec.json.decode(line)["id"]
            if sample_id in done:
                continue
            handle.write(line + b"\n")
            handle.flush()
            done.add(sample_id)
            written += 1
        handle.sync()
    return written


def _size(value: Any) -> list[int] | None:
    return [int(v) for v in value] if value is not None and len(value) else None


def _count(value: Any) -> int | None:
    return int(value) if value is not None and int(value) >= 0 else None


def _seconds(value: Any) -> float | None:
    return round(float(value), 4) if value is not None and float(value) >= 0 else None
