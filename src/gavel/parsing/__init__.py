"""Turning untrusted model text into structured answers without ever raising on it."""

from gavel.parsing.boxes import BoxParse, BoxStatus, parse_boxes
from gavel.parsing.conventions import ImageGeometry, convention_names, get_convention
from gavel.parsing.verdict import parse_explanation, parse_verdict

__all__ = [
    "BoxParse",
    "BoxStatus",
    "ImageGeometry",
    "convention_names",
    "get_convention",
    "parse_boxes",
    "parse_explanation",
    "parse_verdict",
]
