"""The server's Files and Batches API through the official ``openai`` client.

Two steps can succeed on the server while their reply is lost (the process killed while
waiting, a dropped connection): an upload, and a batch creation. Repeating them blindly would
upload twice (harmless, but untidy) or, worse, create a second batch and pay for every request
twice. So both are looked for first: a file by its name (``gavel-<sha256 of the
content>-<part>.jsonl``) and size, a batch by the id of its input file, which is unique to the
upload. Only when the server has neither is the step done (again).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gavel.batch.requests_file import ENDPOINT
from gavel.errors import GavelError

#: Batches looked through when searching for one created by a lost reply (newest first).
SEARCH_BATCHES = 1000
WINDOW = "24h"


class BatchClient:
    """``client`` is an ``openai.OpenAI`` (``OpenAIChatModel.batch_client()``)."""

    def __init__(self, client: Any, redact=None):
        self.client = client
        self.redact = redact or (lambda text: text)

    def _fail(self, what: str, error: Exception) -> GavelError:
        from gavel.runner.failures import classify

        cause = classify(error).cause
        return GavelError(self.redact(f"{what} at {self.client.base_url}: {cause}"))

    def upload(self, path: Path, name: str, tried: bool) -> str:
        """The id of ``path`` uploaded as ``name`` (purpose ``batch``). When an upload was
        ``tried`` before (its reply may have been lost), an uploaded file of the same name and
        size is taken if the server has one."""
        size = path.stat().st_size
        try:
            for entry in self.client.files.list(purpose="batch") if tried else ():
                if entry.filename == name and entry.bytes == size:
                    return entry.id
        except Exception as error:  # a server without the listing: upload (only costs bytes)
            if getattr(error, "status_code", None) not in (404, 405):
                raise self._fail("listing the uploaded files failed", error) from None
        try:
            with path.open("rb") as handle:
                return self.client.files.create(file=(name, handle), purpose="batch").id
        except Exception as error:
            raise self._fail(f"uploading {path} failed", error) from None

    def find_batch(self, file_id: str) -> Any | None:
        """A batch created from the file ``file_id`` (a creation whose reply was lost)."""
        try:
            for seen, batch in enumerate(self.client.batches.list(limit=100)):
                if batch.input_file_id == file_id:
                    return batch
                if seen >= SEARCH_BATCHES:
                    return None
        except Exception as error:
            raise self._fail("listing the batches failed", error) from None
        return None

    def create(self, file_id: str, metadata: dict[str, str]) -> Any:
        try:
            return self.client.batches.create(
                input_file_id=file_id,
                endpoint=ENDPOINT,
                completion_window=WINDOW,
                metadata=metadata,
            )
        except Exception as error:
            raise self._fail("creating the batch failed", error) from None

    def retrieve(self, batch_id: str) -> Any:
        try:
            return self.client.batches.retrieve(batch_id)
        except Exception as error:
            raise self._fail(f"asking for batch {batch_id} failed", error) from None

    def cancel(self, batch_id: str) -> Any:
        try:
            return self.client.batches.cancel(batch_id)
        except Exception as error:
            raise self._fail(f"cancelling batch {batch_id} failed", error) from None

    def download(self, file_id: str) -> bytes:
        try:
            return self.client.files.content(file_id).read()
        except Exception as error:
            raise self._fail(f"downloading file {file_id} failed", error) from None
