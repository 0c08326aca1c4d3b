"""Loading DetailVerifyBench data: the ``real_test`` and ``synthetic_test`` JSONL layouts.

Each line is recognised on its own (a file may mix both), checked, and turned into the same
:class:`DetailVerifySample`, doing what the official converter ``alter_data_format.py`` does
(``offline`` mode for real data, ``advi`` mode for synthetic data):

real_test (``filename``, ``category``, ``GT_description``, ``Modify``, ``description_tag``,
``hallucination_labels`` as ``[{text, labels}]``)
    id = ``filename``; image = ``<category>/<filename>``; exactly ``<Hallucination>`` and
    ``</Hallucination>`` become upper case; the caption shown to the model is
    ``GT_description`` when ``Modify`` is not the string ``"Yes"`` (a JSON ``true`` included, as
    officially), else ``description_tag`` without tags.

synthetic_test (``image_path``, ``description_tag``, ``hallucination_labels`` as edits)
    id = base name of ``image_path``; image = that base name; tags used as they are; always
    modified. Labels come from the applied edits (``final_replacement`` → ``[attribute_type]``);
    the official converter reads the same edits from a ``model_reply`` string, which is used
    when present (the published data has no ``model_reply``, see docs/detailverify.md).

Malformed input raises a :class:`~gavel.errors.DataError` naming file, line and field.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from gavel.errors import DataError
from gavel.io.jsonl import HashingReader, decode_line, field_of
from gavel.parsing.tags import normalize_gold_tags, odd_case_tags, strip_tags, tag_structure_problem
from gavel.records import Sample

REAL = "real_test"
SYNTHETIC = "synthetic_test"
MAX_TEXT = 50_000

T = TypeVar("T")


class DetailVerifySample(Sample, kw_only=True, gc=False):
    """One caption to check. ``category`` is the image domain (Chart, GUI, Movie, ...)."""

    layout: str
    image: str
    #: The caption as shown to the model (no tags).
    caption: str
    #: The gold caption with upper-case ``<HALLUCINATION>`` tags (what the scorer tokenizes).
    tagged: str
    #: ``(text, categories)`` of each gold hallucination, in file order.
    labels: list[tuple[str, list[str]]] = msgspec.field(default_factory=list)
    modified: bool = True


class RealLabel(msgspec.Struct, gc=False):
    """A real_test label: the hallucinated text and its categories."""

    text: str = ""
    labels: list[str] = msgspec.field(default_factory=list)


class Edit(msgspec.Struct, gc=False):
    """A synthetic_test edit (only these three of its fields matter)."""

    applied: bool | None = False
    final_replacement: str | None = ""
    attribute_type: str | None = ""


class Line(msgspec.Struct, kw_only=True, gc=False):
    """The fields of either layout that loading reads; every other field is skipped unread."""

    filename: str | UnsetType = UNSET
    category: str | UnsetType | None = UNSET
    GT_description: str | UnsetType = UNSET
    Modify: str | bool = "Yes"
    image_path: str | UnsetType = UNSET
    description_tag: str | UnsetType = UNSET
    hallucination_labels: list[dict[str, Any]] | None = None
    model_reply: str | None = None


REQUIRED = {
    REAL: ("filename", "category", "GT_description", "description_tag"),
    SYNTHETIC: ("image_path", "description_tag"),
}

_DECODER = msgspec.json.Decoder(Line)
_REPLY_JSON = re.compile(r"```json\s*\n(.*?)\n```", re.DOTALL)


class DetailVerifyLoader:
    """Iterate a DetailVerifyBench JSONL file as validated samples, counting what it fixed."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._reader = HashingReader(self.path)
        self._seen: dict[str, int] = {}
        #: Samples per layout, and anything a result should warn about.
        self.report: Counter[str] = Counter()

    @property
    def sha256(self) -> str:
        return self._reader.sha256

    def __iter__(self) -> Iterator[DetailVerifySample]:
        for number, line in self._reader:
            yield self.parse(number, line)

    def fail(self, line: int, field_name: str | None, message: str) -> DataError:
        return DataError(self.path, line, field_name, message)

    def parse(self, number: int, line: bytes) -> DetailVerifySample:
        raw = decode_line(_DECODER, self.path, number, line, Line)
        if raw.filename is not UNSET or raw.GT_description is not UNSET:
            layout = REAL
        elif raw.image_path is not UNSET:
            layout = SYNTHETIC
        else:
            raise self.fail(
                number,
                None,
                "neither layout: real_test lines have 'filename' and 'GT_description', "
                "synthetic_test lines have 'image_path'",
            )
        for name in REQUIRED[layout]:
            if getattr(raw, name) in (UNSET, None):
                raise self.fail(number, name, f"missing required field for {layout} layout")
        sample = self._real(number, raw) if layout == REAL else self._synthetic(number, raw)
        self._check(number, sample)
        self.report[layout] += 1
        return sample

    def _labels(self, number: int, raw: Line, kind: type[list[T]]) -> list[T]:
        try:
            return msgspec.convert(raw.hallucination_labels or [], kind)
        except msgspec.ValidationError as error:
            message = str(error).split(" - at ")[0]
            where = "hallucination_labels" + (field_of(error) or "")
            raise self.fail(number, where, message) from None

    def _real(self, number: int, raw: Line) -> DetailVerifySample:
        filename, category = str(raw.filename), str(raw.category)
        if not _plain_name(filename):
            raise self.fail(number, "filename", f"{filename!r} is not a plain file name")
        if not _plain_name(category):
            raise self.fail(number, "category", f"{category!r} is not a plain folder name")
        tagged = normalize_gold_tags(str(raw.description_tag))
        self.report["odd_case_gold_tags"] += odd_case_tags(tagged)
        # Official: is_modified = (Modify == "Yes"); "yes", "No" and the JSON boolean true
        # (which never equals the string "Yes") all show GT_description.
        modified = raw.Modify == "Yes"
        if isinstance(raw.Modify, bool):
            self.report["boolean_modify"] += 1
        elif raw.Modify not in ("Yes", "No"):
            self.report["unusual_modify"] += 1
        labels = [(item.text, item.labels) for item in self._labels(number, raw, list[RealLabel])]
        return DetailVerifySample(
            id=filename,
            category=category,
            layout=REAL,
            image=f"{category}/{filename}",
            caption=strip_tags(tagged) if modified else str(raw.GT_description),
            tagged=tagged,
            labels=labels,
            modified=modified,
        )

    def _synthetic(self, number: int, raw: Line) -> DetailVerifySample:
        base = posixpath.basename(str(raw.image_path).replace("\\", "/"))
        if not _plain_name(base):
            raise self.fail(number, "image_path", f"no file name in {raw.image_path!r}")
        tagged = str(raw.description_tag)
        self.report["odd_case_gold_tags"] += odd_case_tags(tagged)
        if raw.model_reply is not None:
            labels = self._reply_labels(raw.model_reply)
            self.report["labels_from_model_reply"] += 1
        else:
            labels = _edit_labels(self._labels(number, raw, list[Edit]))
        return DetailVerifySample(
            id=base,
            category=raw.category if isinstance(raw.category, str) else None,
            layout=SYNTHETIC,
            image=base,
            caption=strip_tags(tagged),
            tagged=tagged,
            labels=labels,
            modified=True,
        )

    def _reply_labels(self, reply: str) -> list[tuple[str, list[str]]]:
        """The official ``advi`` converter: the edits of the first json code block."""
        match = _REPLY_JSON.search(reply)
        if not match:
            return []
        try:
            edits = json.loads(match.group(1)).get("edits", [])
            return _edit_labels(msgspec.convert(edits, list[Edit]))
        except (ValueError, AttributeError, RecursionError, msgspec.ValidationError):
            self.report["unreadable_model_reply"] += 1
            return []

    def _check(self, number: int, sample: DetailVerifySample) -> None:
        field_name = "filename" if sample.layout == REAL else "image_path"
        if sample.id in self._seen:
            raise self.fail(
                number,
                field_name,
                f"duplicate id {sample.id!r} (first on line {self._seen[sample.id]})",
            )
        self._seen[sample.id] = number
        if len(sample.tagged) > MAX_TEXT or len(sample.caption) > MAX_TEXT:
            raise self.fail(number, "description_tag", f"longer than {MAX_TEXT} characters")
        if not strip_tags(sample.tagged).strip():
            raise self.fail(number, "description_tag", "empty caption")
        if problem := tag_structure_problem(sample.tagged):
            raise self.fail(number, "description_tag", f"unbalanced gold tags: {problem.message}")
        if not sample.modified and sample.tagged != strip_tags(sample.tagged):
            self.report["unmodified_with_tags"] += 1


def _plain_name(name: str) -> bool:
    return bool(name.strip()) and name not in (".", "..") and not set(name) & {"/", "\\", "\x00"}


def _edit_labels(edits: list[Edit]) -> list[tuple[str, list[str]]]:
    """Applied edits with a replacement text become ``(text, [attribute_type])`` labels."""
    return [
        (edit.final_replacement, [edit.attribute_type] if edit.attribute_type else [])
        for edit in edits
        if edit.applied and edit.final_replacement
    ]


def read_samples(path: str | Path) -> tuple[list[DetailVerifySample], DetailVerifyLoader]:
    """All samples of a file, and the loader (for its SHA-256 and report)."""
    loader = DetailVerifyLoader(path)
    samples = list(loader)
    if not samples:
        raise DataError(path, None, None, "no samples in file")
    return samples, loader


def load_samples(path: str | Path) -> list[DetailVerifySample]:
    """All samples of a real_test or synthetic_test JSONL file (layout found per line)."""
    return read_samples(path)[0]
