"""The usage ledger of a run: the token counts each answer line already records.

Every line the runner writes (a predictions file, an LLM judge's replies file) carries the
``prompt_tokens`` and ``completion_tokens`` the server reported for it, and ``meta.cached``
when it came from the answer cache (nothing paid). Those lines are written and flushed before
they are counted, so they are the most exact record of what a run has spent, even after a
``kill -9``: cost = the server-reported usage of the lines not taken from the cache x price.
No second file is needed, and none can drift from the answers.

Error lines count too while they are there (a reply refused by its reader was paid for); a
rerun removes them before asking those samples again, so their usage leaves the ledger then.
A batch run's replies refused at the merge (a reply with no choices, an invalid judge reply)
are asked again in a next round and have no line: their tokens are kept with the batch's part
in the batch folder's state file, and counted from there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from gavel.cost.prices import Price
from gavel.io.reading import bounded_lines


class _Line(msgspec.Struct):
    id: str = ""
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    meta: dict[str, Any] | None = None


@dataclass
class Usage:
    """What an answer file holds: answered ids, the tokens paid for, earlier reply lengths."""

    answered: set[str] = field(default_factory=set)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: ``completion_tokens`` of every answer (cached ones too): a sample of reply lengths.
    reply_tokens: list[int] = field(default_factory=list)

    def cost(self, price: Price) -> float:
        return price.cost(self.prompt_tokens, self.completion_tokens)


def read_usage(path: Path | None) -> Usage:
    """The usage recorded in ``path`` (a missing file is an empty ledger). Lines that do not
    decode (one cut short by a crash) are passed over: the run itself reports or repairs them."""
    usage = Usage()
    if path is None:
        return usage
    _add_refused(usage, Path(path))
    if not Path(path).is_file():
        return usage
    decoder = msgspec.json.Decoder(_Line)
    with Path(path).open("rb") as handle:
        for raw in bounded_lines(handle, path):
            try:
                line = decoder.decode(raw)
            except msgspec.DecodeError:
                continue
            cached = bool(line.meta and line.meta.get("cached"))
            if not cached:
                usage.prompt_tokens += line.prompt_tokens or 0
                usage.completion_tokens += line.completion_tokens or 0
            if line.error is None:
                usage.answered.add(line.id)
                if line.completion_tokens is not None:
                    usage.reply_tokens.append(line.completion_tokens)
    return usage


def _add_refused(usage: Usage, path: Path) -> None:
    """The tokens of replies a batch run refused (kept in its state file, see above)."""
    from gavel.batch.state import batch_folder, load_state
    from gavel.errors import GavelError

    try:
        state = load_state(batch_folder(path))
    except (GavelError, OSError):  # the batch run itself reports a damaged state file
        return
    for part in state.parts if state is not None else ():
        usage.prompt_tokens += part.refused_prompt_tokens
        usage.completion_tokens += part.refused_completion_tokens
