"""``replay:FILE``: answer with responses saved in a predictions file (re-score, re-judge)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gavel.errors import GavelError
from gavel.io.predictions import PredictionReader
from gavel.requests import Answer, Capabilities, Request


class ReplayModel:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        reader = PredictionReader(self.path)
        self._saved = {p.id: p for p in reader}
        self._sha256 = reader.sha256
        formats = {p.box_format for p in self._saved.values() if p.box_format}
        self.name = next(iter({p.model for p in self._saved.values() if p.model}), "replay")
        self.capabilities = Capabilities(box_format=formats.pop() if len(formats) == 1 else None)

    def settings(self) -> dict[str, Any]:
        return {"replayed_file": str(self.path), "replayed_sha256": self._sha256}

    def answer(self, request: Request) -> Answer:
        saved = self._saved.get(request.sample_id)
        if saved is None:
            raise GavelError(f"no saved answer for {request.sample_id!r} in {self.path}")
        if saved.error:
            raise GavelError(saved.error)
        return Answer(
            saved.response or "",
            sent_size=tuple(saved.sent_size) if saved.sent_size else None,  # type: ignore[arg-type]
            input_size=tuple(saved.input_size) if saved.input_size else None,  # type: ignore[arg-type]
        )
