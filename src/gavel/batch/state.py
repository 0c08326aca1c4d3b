"""What a batch run has sent, recorded beside its output so a killed run resumes it.

The folder is the output's name with ``.batch`` for its suffix (``pred.jsonl`` ->
``pred.batch/``, a run folder's ``predictions.batch/`` and, for the judge,
``results.judge.batch/``). ``state.json`` lists the parts (one part: one requests file, one
uploaded file, one batch) and is rewritten atomically after every step that the server
remembers (a file uploaded, a batch created, a batch finished, its output downloaded, its
answers merged), so after a crash the file says either the step before or the step after.
The steps between (an upload or a creation whose reply never came back) are found on the
server again by :mod:`gavel.batch.client`, never repeated blindly.

No key is ever written here: only the name of the variable that holds it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import msgspec

from gavel.errors import GavelError
from gavel.io.files import atomic_write_bytes
from gavel.io.reading import read_regular
from gavel.io.safe_paths import UnsafePath, safe_component

STATE_FILE = "state.json"
#: Batch statuses after which nothing changes on the server.
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
#: What a part's name may be: one plain file name component (it names files in the folder).
PART_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class Part(msgspec.Struct, omit_defaults=True):
    """One requests file and the batch that answers it."""

    name: str
    round: int
    #: Requests in the file.
    count: int
    #: SHA-256 of the requests file (its uploaded name carries the first 16 digits).
    sha256: str
    #: Written by earlier versions before an upload (a file is now always looked for first).
    uploading: bool = False
    file_id: str | None = None
    #: Set just before the batch is created: a rerun then looks for it before creating one.
    creating: bool = False
    batch_id: str | None = None
    status: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    #: Requests the server said it finished (completed and failed) when the batch ended: the
    #: lines its output and error files must hold together.
    reported: int = 0
    #: The batch's own errors when it failed as a whole (an invalid input file).
    errors: list[str] = msgspec.field(default_factory=list)
    #: The batch reached a terminal status and its file ids above are recorded with it.
    finished: bool = False
    downloaded: bool = False
    merged: bool = False
    #: After the merge: answers taken, requests to ask again.
    answered: int = 0
    failed: int = 0
    #: Tokens of the replies refused at the merge (no line holds them; they were paid for).
    refused_prompt_tokens: int = 0
    refused_completion_tokens: int = 0

    def requests_path(self, folder: Path) -> Path:
        return folder / f"{self.name}.requests.jsonl"

    def output_path(self, folder: Path) -> Path:
        return folder / f"{self.name}.output.jsonl"

    def errors_path(self, folder: Path) -> Path:
        return folder / f"{self.name}.errors.jsonl"


class BatchState(msgspec.Struct, omit_defaults=True):
    """Every part of a batch run, and whom it was sent to."""

    #: ``generate`` or ``judge``.
    kind: str
    model: str
    base_url: str
    api_key_env: str
    output: str
    endpoint: str = "/v1/chat/completions"
    parts: list[Part] = msgspec.field(default_factory=list)
    version: int = 1
    #: The run's tag in its batches' ``metadata`` (:func:`run_tag`), kept so a moved folder
    #: still finds the batches it made.
    run: str = ""
    #: No batch of the run on the server is older than this (seconds since the epoch, this
    #: machine's clock): when its first search of the server's batches began, or the oldest
    #: batch of the run that search found. A later search reads the newest-first listing back
    #: to here only (:meth:`gavel.batch.client.BatchClient.search`). 0: not searched yet (a
    #: new run, a lost state file, an older version's file): the next search reads it all.
    since: float = 0.0

    def unfinished(self) -> list[Part]:
        return [part for part in self.parts if not part.merged]

    def rounds(self) -> int:
        return max((part.round for part in self.parts), default=0)


def batch_folder(out: Path) -> Path:
    """Where the batch files of output ``out`` live: ``pred.jsonl`` -> ``pred.batch``."""
    return out.with_suffix(".batch") if out.suffix else out.with_name(out.name + ".batch")


def run_tag(kind: str, out: Path) -> str:
    """A run's tag: the same output file (and kind) always gets the same one, so a run whose
    state file was lost finds its batches on the server again."""
    return hashlib.sha256(f"{kind}\0{out.resolve()}".encode()).hexdigest()[:16]


def plain_name(name: str, where: str) -> str:
    """``name`` when it is one plain file name (no folder, no ``..``), else an error naming
    ``where`` (the file and field it came from): nothing read from a state file may make a
    path outside the batch folder."""
    try:  # the package's one check of names from data, then gavel's own part-name alphabet
        plain = PART_NAME.fullmatch(safe_component(name, "part name")) is not None
    except UnsafePath:
        plain = False
    if not plain:
        raise GavelError(
            f"{where}: {name!r} is not a plain file name (letters, digits, '.', '_', '-'); "
            "refused, as it would name a file outside the batch folder"
        )
    return name


def load_state(folder: Path) -> BatchState | None:
    """The recorded state, or None when nothing was sent yet."""
    path = folder / STATE_FILE
    try:
        data = read_regular(path)
    except FileNotFoundError:
        return None
    try:
        state = msgspec.json.decode(data, type=BatchState)
    except msgspec.DecodeError as error:  # never guessed: it names batches that cost money
        raise GavelError(f"{path}: not a gavel batch state file ({error})") from None
    except RecursionError:
        raise GavelError(f"{path}: not a gavel batch state file (nested too deeply)") from None
    for index, part in enumerate(state.parts):
        plain_name(part.name, f"{path}: parts[{index}].name")
    return state


def save_state(folder: Path, state: BatchState) -> None:
    """Rewrite ``state.json`` atomically (a crash leaves the old one or the new one)."""
    atomic_write_bytes(folder / STATE_FILE, msgspec.json.format(msgspec.json.encode(state)))
