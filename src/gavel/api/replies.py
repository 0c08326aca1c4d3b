"""One model reply read as gavel reads it: the boxes in pixels, under a preset or a convention.

What ``gavel parse`` prints, so a user can check in a second how a new model's reply is read
(and the examples ``gavel list presets`` shows are read by the same function).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gavel.errors import ConfigError
from gavel.geometry import MAX_SIDE
from gavel.setting_checks import Bound

__all__ = ["IMAGE_SIDE", "ReplyBoxes", "convention_names", "parse_reply", "split_labels"]

#: An image side in pixels, as the data files take it.
IMAGE_SIDE = Bound(int, 1, MAX_SIDE)

#: The counts a reading may report besides its boxes, in the order shown.
FIX_COUNTS = ("swapped", "clipped", "degenerate", "malformed", "out_of_range", "repeated",
              "repaired", "label_dropped")  # fmt: skip


@dataclass(frozen=True)
class ReplyBoxes:
    """How one reply is read: its boxes in pixels of the original image and what was fixed."""

    #: ``(x1, y1, x2, y2)`` in pixels of a ``width`` x ``height`` image.
    boxes: list[tuple[float, float, float, float]]
    #: ``ok``, ``lenient``, ``none`` or ``invalid`` (docs/data-format.md).
    status: str
    #: The syntax the boxes were found in (``json``, ``qwen2-vl``, ``labelled``, ...).
    syntax: str | None
    convention: str
    preset: str | None
    width: int
    height: int
    #: The non-zero counts among :data:`FIX_COUNTS` (a corner swap, a clip, a dropped box).
    fixes: dict[str, int] = field(default_factory=dict)
    #: Every number lies in [0, 1] under a convention much wider (most likely 0-1 written).
    unit_interval: bool = False


def convention_names() -> list[str]:
    """The box conventions a reply may be read under (``--convention``, ``--box-format``)."""
    from gavel.parsing import convention_names as names

    return names()


def split_labels(text: str | None) -> list[str] | None:
    """The labels of ``"a ; b ; c"`` (PaliGemma's ``detect`` list), or None for none given."""
    if text is None:
        return None
    return [label.strip() for label in text.split(";") if label.strip()]


def _size(name: str, value: Sequence[int] | None) -> tuple[int, int] | None:
    if value is None:
        return None
    if len(value) != 2:
        raise ConfigError(f"{name} must be [width, height], got {list(value)!r}")
    width, height = (int(IMAGE_SIDE.check(name, side)) for side in value)
    return width, height


def parse_reply(
    reply: str,
    *,
    preset: str | None = None,
    convention: str | None = None,
    width: int = 1000,
    height: int = 1000,
    sent_size: Sequence[int] | None = None,
    input_size: Sequence[int] | None = None,
    labels: Sequence[str] | None = None,
) -> ReplyBoxes:
    """``reply`` read under ``preset``'s convention (or ``convention``'s; one of the two), as
    ``gavel score`` reads a response: boxes in pixels of a ``width`` x ``height`` image.

    ``sent_size`` and ``input_size`` are ``[width, height]`` of the image as sent and of the
    model's resized input (the ``pixel`` and ``resized-pixel``/``kosmos-2.5`` conventions
    scale back from them). ``labels``: keep only boxes labelled one of these (PaliGemma's
    label filter). A bad name or size is a :class:`~gavel.errors.ConfigError`; the reply
    itself is never one.
    """
    from gavel.parsing import ImageGeometry, get_convention, parse_boxes
    from gavel.parsing.conventions import ConventionError

    if (preset is None) == (convention is None):
        raise ConfigError("give a preset or a convention (one of the two)")
    if preset is not None:
        from gavel.models.presets import get_preset

        convention = get_preset(preset).box_format
    assert convention is not None
    try:
        get_convention(convention)
    except ConventionError as error:
        raise ConfigError(str(error)) from None
    geometry = ImageGeometry(
        int(IMAGE_SIDE.check("width", width)),
        int(IMAGE_SIDE.check("height", height)),
        sent_size=_size("sent_size", sent_size),
        input_size=_size("input_size", input_size),
    )
    parsed = parse_boxes(reply, convention, geometry, labels=labels)
    fixes = {name: count for name in FIX_COUNTS if (count := getattr(parsed, name))}
    return ReplyBoxes(
        boxes=list(parsed.boxes),
        status=str(parsed.status),
        syntax=parsed.syntax,
        convention=convention,
        preset=preset,
        width=geometry.width,
        height=geometry.height,
        fixes=fixes,
        unit_interval=parsed.unit_interval,
    )
