"""What went wrong with a request, in words a user can act on, and whether the run should care.

A client's own exception often hides the cause: a refused connection arrives as
``APIConnectionError`` (or, from the official client's aiohttp transport, as ``APITimeoutError:
Request timed out.``), the refusal exceptions down its chain. :func:`classify` walks the chain
(``__cause__`` / ``__context__``) and names the real cause:

==================== =================================================== ================
kind                 what happened                                       spends budget
==================== =================================================== ================
connection_refused   nothing listens at the address (server not started,  yes
                     wrong port)
connection_reset     the server closed or reset the connection            yes
unreachable          the host name does not resolve, no route             yes
timeout              no answer within the per-attempt limit               yes
http_status          the server answered with an error status (4xx/5xx)   yes
invalid_response     a 200 reply that is not a usable completion          yes
invalid_answer       a completion arrived but its text is refused (a      no
                     judge reply without a valid score)
other                anything else                                        yes
==================== =================================================== ================

An error status comes with the server's own words (:func:`server_words`): OpenAI's
``{"error": {"message": ...}}``, FastAPI's ``{"detail": ...}`` (a string, or a list of
validation errors), vLLM's ``{"message": ...}`` or plain text, cut to :data:`MAX_SERVER_WORDS`
characters with anything that looks like a secret (API keys, bearer tokens, a URL's
``user:password@``) replaced by ``***``. The client's own message often drops them
(``Error code: 422``), and they are what names the cause: the field refused, the model unknown.

A refused answer says nothing about the endpoint: it arrived, and was paid for. It is a
per-sample outcome (``judge_error``), never a reason to stop a run, so it does not spend the
runner's failure budget. Everything else does.
"""

from __future__ import annotations

import asyncio
import errno
import json
import re
import socket
from dataclasses import dataclass
from typing import Any

from gavel.errors import GavelError
from gavel.transport.retry import InvalidResponseError, status_of

CONNECTION_REFUSED = "connection_refused"
CONNECTION_RESET = "connection_reset"
UNREACHABLE = "unreachable"
TIMEOUT = "timeout"
HTTP_STATUS = "http_status"
INVALID_RESPONSE = "invalid_response"
INVALID_ANSWER = "invalid_answer"
OTHER = "other"

#: Kinds after which no server ever answered: the endpoint itself is wrong or down.
NO_SERVER = frozenset({CONNECTION_REFUSED, UNREACHABLE})
#: Kinds that show a server is there: it answered (with an error, or a reply refused) or at
#: least accepted the connection before closing it.
ANSWERED = frozenset({HTTP_STATUS, INVALID_RESPONSE, INVALID_ANSWER, CONNECTION_RESET})

#: Statuses another try, or another sample, gets the same way: a wrong key (401, 403), an
#: unknown route or model (404, 400), a refused field (422, 400), a body too large (413). A run
#: stops when its first requests all get the same one with the same words and none has been
#: answered (:mod:`gavel.runner.async_runner`).
DETERMINISTIC_STATUS = frozenset({400, 401, 403, 404, 413, 422})
#: Of those, the ones a server gives one sample and not another (a content filter, an image
#: too large, a prompt over the context): once the run has answers they are that sample's
#: outcome, not a sign that the endpoint is failing, so they spend no failure budget.
PER_SAMPLE_STATUS = frozenset({400, 404, 413, 422})
#: Server errors that mean "not now" rather than "never": a gateway without its upstream
#: (502, 504) and a server not ready (503). They are waited out, never a reason to stop early.
OUTAGE_STATUS = frozenset({502, 503, 504})
#: The first requests of a run refused alike, none answered, that stop it (a model adapter may
#: ask fewer: its ``refusals_to_stop``; see :mod:`gavel.runner.async_runner`).
SAME_REFUSALS = 3
#: Words of a server still starting (llama-server's 503 "Loading model", a proxy's upstream
#: warming up): like :data:`OUTAGE_STATUS`, whatever the status.
_NOT_READY = re.compile(
    r"(?i)\b(loading|not (?:yet )?ready|starting|warming|initiali[sz]ing|unavailable|overloaded)\b"
)

#: Longest part of a server's error body kept (in error lines and on the console).
MAX_SERVER_WORDS = 500

_SECRETS = (
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}"), r"\1 ***"),
    (re.compile(r"\b(?:sk|pk|rk|hf|gsk|xai)[-_][A-Za-z0-9_-]{8,}"), "***"),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"), "***"),
    (re.compile(r"(?i)\b(api[-_]?key|token|secret|password)([\"']?\s*[:=]\s*[\"']?)[^\s\"',}&]+"),
     r"\1\2***"),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+(?::[^/\s@]*)?@"), r"\1***@"),
)  # fmt: skip

_RESET_ERRNOS = {errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED}
_UNREACHABLE_ERRNOS = {errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL}


class InvalidAnswerError(GavelError):
    """The model answered, but never acceptably (not retried by the runner). ``usage`` holds
    the tokens of all the rejected replies, which were paid for all the same."""

    def __init__(self, message: str, usage: dict[str, int] | None = None):
        super().__init__(message)
        self.usage = dict(usage or {})


@dataclass(frozen=True)
class Failure:
    kind: str
    #: The cause in words, e.g. ``connection refused ([Errno 111] Connect call failed ...)``.
    cause: str
    status: int | None = None
    #: What the server said with an error status (redacted, cut short), when it said anything.
    server: str | None = None

    @property
    def spends_budget(self) -> bool:
        return self.kind != INVALID_ANSWER

    @property
    def deterministic(self) -> bool:
        """A client error every sample gets alike (a wrong key, model or field)."""
        return self.kind == HTTP_STATUS and self.status in DETERMINISTIC_STATUS

    @property
    def server_fault(self) -> bool:
        """A server error that is no outage (not 502/503/504, no "loading" in its words):
        a server that cannot do what is asked (llama-server without its image projector
        answers every image request 500 "image input is not supported")."""
        return (
            self.kind == HTTP_STATUS
            and self.status is not None
            and self.status >= 500
            and self.status not in OUTAGE_STATUS
            and not _NOT_READY.search(self.server or "")
        )

    @property
    def alike_for_all(self) -> bool:
        """A reply that, when the first requests of a run all get it with the same words and
        none is answered, every later request will get too: stop instead of sending them."""
        return self.deterministic or self.server_fault

    @property
    def per_sample(self) -> bool:
        """A refusal of this sample's request (see :data:`PER_SAMPLE_STATUS`)."""
        return self.kind == HTTP_STATUS and self.status in PER_SAMPLE_STATUS


@dataclass(frozen=True)
class Refusal:
    """A request refused alike for all (:attr:`Failure.alike_for_all`), as a run counts it: the
    first requests of a run all refused alike (same status, same words) with none answered stop
    the run once there are ``limit`` of them. Built where the request was asked (the runner, or
    a Ray replica) and picklable, so a driver that only sees the lines counts them as the
    runner does."""

    status: int | None
    #: The server's words (with ``status``, what makes two refusals alike).
    server: str | None
    #: Alike refusals in a row that stop the run (the model's ``refusals_to_stop``).
    limit: int
    #: The servers asked (for the message).
    endpoint: str
    #: The server's words as the message quotes them (the error message when it sent none).
    said: str
    #: What to check (the model's ``advice``).
    hint: str

    @property
    def key(self) -> tuple[int | None, str | None]:
        return self.status, self.server

    def stop_message(self, count: int, sent: int | None = None) -> str:
        """Why the run stops after its first ``count`` replies were this refusal, of ``sent``
        requests sent (None: not known, as on Ray), and what to check."""
        if sent is None:
            what = "the first request" if count == 1 else f"the first {count} requests"
        elif sent <= count:
            what = "the one request sent" if count == 1 else f"all {count} requests sent"
        else:
            what = f"the first {count} of the {sent} requests sent"
        verb = "answered" if (self.status or 0) >= 500 else "refused"
        tail = " with the same error" if verb == "answered" else ", alike"
        return f"{self.endpoint} {verb} {what}{tail}: HTTP {self.status}: {self.said}. {self.hint}."


def chain(error: BaseException) -> list[BaseException]:
    """``error`` and every exception it was raised from or during, outermost first."""
    found: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def classify(error: BaseException) -> Failure:
    """The kind of failure ``error`` is, from the deepest cause that says."""
    if isinstance(error, InvalidAnswerError):
        return Failure(INVALID_ANSWER, str(error))
    status = status_of(error)
    if status is not None:
        words = server_words(error)
        return Failure(HTTP_STATUS, f"HTTP {status}: {words or error}", status, words)
    if isinstance(error, InvalidResponseError):
        return Failure(INVALID_RESPONSE, str(error))
    for cause in reversed(chain(error)):  # the deepest cause first
        kind = _os_kind(cause)
        if kind is not None:
            return Failure(kind, f"{kind.replace('_', ' ')} ({cause})")
    for cause in chain(error):
        if (
            isinstance(cause, TimeoutError | asyncio.TimeoutError)
            or "Timeout" in type(cause).__name__
        ):
            return Failure(TIMEOUT, str(cause) or type(cause).__name__)
    return Failure(OTHER, str(error) or type(error).__name__)


def _os_kind(error: BaseException) -> str | None:
    if isinstance(error, ConnectionRefusedError):
        return CONNECTION_REFUSED
    if isinstance(error, ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
        return CONNECTION_RESET
    if isinstance(error, socket.gaierror):
        return UNREACHABLE
    if isinstance(error, OSError) and not isinstance(error, TimeoutError):
        if error.errno == errno.ECONNREFUSED:
            return CONNECTION_REFUSED
        if error.errno in _RESET_ERRNOS:
            return CONNECTION_RESET
        if error.errno in _UNREACHABLE_ERRNOS:
            return UNREACHABLE
    # aiohttp's "server disconnected" carries no errno; name it by what it is.
    if type(error).__name__ in (
        "ServerDisconnectedError",
        "RemoteProtocolError",
        "ClientPayloadError",
    ):
        return CONNECTION_RESET
    return None


def redact_secrets(text: str) -> str:
    """``text`` with API keys, bearer tokens and URL credentials replaced by ``***``."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


def server_words(error: BaseException) -> str | None:
    """The server's own message in an error reply, redacted and cut short; None when it sent
    none. Taken from the body the client parsed, else the reply's raw text."""
    body: Any = getattr(error, "body", None)
    if body is None:
        try:
            text = getattr(getattr(error, "response", None), "text", None)
        except Exception:  # a streamed reply never read, a closed one
            text = None
        if not isinstance(text, str) or not text.strip():
            return None
        try:
            body = json.loads(text)
        except ValueError:
            body = text
    words = _words(body)
    if not words or not words.strip():
        return None
    words = redact_secrets(" ".join(words.split()))
    if len(words) > MAX_SERVER_WORDS:
        words = words[: MAX_SERVER_WORDS - 1] + "…"
    return words


def _words(body: Any) -> str:
    """The message of an error body, in the shapes servers use."""
    if isinstance(body, str):
        return body
    if isinstance(body, list):  # FastAPI's validation errors: [{"loc": [...], "msg": ...}]
        return "; ".join(_words(item) for item in body)
    if isinstance(body, dict):
        if "msg" in body and isinstance(body.get("loc"), list):
            where = ".".join(str(part) for part in body["loc"])
            return f"{where}: {body['msg']}"
        for name in ("error", "detail", "message", "msg"):
            value = body.get(name)
            if isinstance(value, str | list | dict) and value:
                return _words(value)
    return json.dumps(body, ensure_ascii=False)
