"""What went wrong with a request, in words a user can act on, and whether the run should care.

The client's own exception often hides the cause: with the aiohttp transport a refused connection
arrives as ``APITimeoutError: Request timed out.``, the refusal three exceptions down its chain.
:func:`classify` walks the chain (``__cause__`` / ``__context__``) and names the real cause:

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

A refused answer says nothing about the endpoint: it arrived, and was paid for. It is a
per-sample outcome (``judge_error``), never a reason to stop a run, so it does not spend the
runner's failure budget. Everything else does.
"""

from __future__ import annotations

import asyncio
import errno
import socket
from dataclasses import dataclass

from gavel.runner.retry import InvalidResponseError, status_of

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

_RESET_ERRNOS = {errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED}
_UNREACHABLE_ERRNOS = {errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL}


@dataclass(frozen=True)
class Failure:
    kind: str
    #: The cause in words, e.g. ``connection refused ([Errno 111] Connect call failed ...)``.
    cause: str
    status: int | None = None

    @property
    def spends_budget(self) -> bool:
        return self.kind != INVALID_ANSWER


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
    from gavel.runner.validating import InvalidAnswerError

    if isinstance(error, InvalidAnswerError):
        return Failure(INVALID_ANSWER, str(error))
    status = status_of(error)
    if status is not None:
        return Failure(HTTP_STATUS, f"HTTP {status}: {error}", status)
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
    if type(error).__name__ in ("ServerDisconnectedError", "RemoteProtocolError"):
        return CONNECTION_RESET
    return None
