"""The assistant response the baseline is trained to write: verdict, explanation, ``<BBX>`` boxes.

As in the paper (appendix A.2), the response is first written with one ``<BBX>`` placeholder per
gold box, and each placeholder is then replaced by that box's four coordinate tokens. The
template decides everything else about the text, so it must be something gavel's parsers read
back: the built-in ``json`` template is the JSON object the ``gavel_v1`` prompt asks for (boxes
as strings of tokens), and ``plain`` is a short free-text answer that opens with Yes or No.
Training and evaluation then use the same prompt, and the scorer reads the verdict, the
explanation and the boxes of a trained model's answers with no special case.

A template file (``--template FILE.json``) has the keys of :class:`ResponseTemplate`; ``text``
holds the fields ``{verdict}``, ``{explanation}`` and ``{boxes}``, substituted literally (no
other braces are interpreted, so JSON needs no escaping), for example::

    {"text": "Verdict: {verdict}. {explanation} Regions: {boxes}",
     "verdict_true": "wrong", "verdict_false": "correct", "separator": " "}

Pure Python: nothing here needs torch.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from gavel.errors import ConfigError

PLACEHOLDER = "<BBX>"
_FIELDS = ("{verdict}", "{explanation}", "{boxes}")


@dataclass(frozen=True)
class ResponseTemplate:
    """How one GAVEL annotation becomes the assistant's answer.

    ``text`` is the whole answer with ``{verdict}``, ``{explanation}`` and ``{boxes}``;
    ``{boxes}`` becomes one ``box`` per gold box joined by ``separator`` (``no_boxes`` when there
    are none), and each ``box`` holds the ``<BBX>`` placeholder once. ``json_strings`` writes the
    explanation as a quoted JSON string, for templates whose text is JSON.
    """

    name: str
    text: str
    verdict_true: str = "true"
    verdict_false: str = "false"
    box: str = PLACEHOLDER
    separator: str = ", "
    no_boxes: str = ""
    json_strings: bool = False

    def __post_init__(self) -> None:
        if "{verdict}" not in self.text:
            raise ConfigError(f"response template {self.name!r}: text has no {{verdict}}")
        if "{boxes}" not in self.text:
            raise ConfigError(f"response template {self.name!r}: text has no {{boxes}}")
        if self.box.count(PLACEHOLDER) != 1:
            raise ConfigError(
                f"response template {self.name!r}: box must hold {PLACEHOLDER} exactly once"
            )
        if PLACEHOLDER in self.text or PLACEHOLDER in self.separator + self.no_boxes:
            raise ConfigError(
                f"response template {self.name!r}: {PLACEHOLDER} belongs in box only, "
                "once per gold box"
            )

    def with_placeholders(self, hallucinated: bool, explanation: str, n_boxes: int) -> str:
        """The answer with one ``<BBX>`` per box, before coordinates are filled in."""
        if PLACEHOLDER in explanation:
            raise ValueError(f"the explanation contains the placeholder {PLACEHOLDER}")
        boxes = self.separator.join([self.box] * n_boxes) if n_boxes else self.no_boxes
        values = {
            "{verdict}": self.verdict_true if hallucinated else self.verdict_false,
            "{explanation}": json.dumps(explanation, ensure_ascii=False)
            if self.json_strings
            else explanation,
            "{boxes}": boxes,
        }
        # One pass over the text, so a value that happens to contain "{boxes}" stays as is.
        out, rest = [], self.text
        while rest:
            positions = [(rest.find(f), f) for f in _FIELDS if f in rest]
            if not positions:
                out.append(rest)
                break
            start, name = min(positions)
            out.append(rest[:start] + values[name])
            rest = rest[start + len(name) :]
        return "".join(out).strip()

    def render(self, hallucinated: bool, explanation: str, boxes: Sequence[str]) -> str:
        """The final answer: each ``<BBX>``, in order, replaced by one box's token string."""
        text = self.with_placeholders(hallucinated, explanation, len(boxes))
        parts = text.split(PLACEHOLDER)
        if len(parts) != len(boxes) + 1:  # guarded in __post_init__; kept as a hard check
            raise ValueError(f"{len(parts) - 1} placeholders for {len(boxes)} boxes")
        out = [parts[0]]
        for tokens, tail in zip(boxes, parts[1:], strict=True):
            out.append(tokens + tail)
        return "".join(out)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


BUILTIN: dict[str, ResponseTemplate] = {
    "json": ResponseTemplate(
        name="json",
        text='{"hallucination": {verdict}, "explanation": {explanation}, "boxes": [{boxes}]}',
        box=f'"{PLACEHOLDER}"',
        json_strings=True,
    ),
    "plain": ResponseTemplate(
        name="plain",
        text="{verdict}. {explanation} {boxes}",
        verdict_true="Yes",
        verdict_false="No",
        separator=" ",
    ),
}


def load_response_template(name_or_path: str) -> ResponseTemplate:
    """A built-in template by name (``json``, ``plain``) or a JSON file of the fields."""
    if name_or_path in BUILTIN:
        return BUILTIN[name_or_path]
    path = Path(name_or_path)
    if not path.is_file():
        raise ConfigError(
            f"unknown response template {name_or_path!r}: give one of "
            f"{', '.join(BUILTIN)} or a JSON file"
        )
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigError(f"cannot read response template {path}: {error}") from None
    known = {f.name for f in fields(ResponseTemplate)}
    if not isinstance(values, dict) or not isinstance(values.get("text"), str):
        raise ConfigError(f"{path}: a response template is a JSON object with a 'text' string")
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) {', '.join(unknown)}; known: {sorted(known)}")
    values.setdefault("name", path.stem)
    return ResponseTemplate(**values)
