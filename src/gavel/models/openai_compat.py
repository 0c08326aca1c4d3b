"""``openai:MODEL``: any OpenAI-compatible Chat Completions server (vLLM, SGLang, the OpenAI API).

One request is one single-turn chat: the images (or a video's sampled frames) as base64 data
URLs, then the prompt. Images larger than ``max_image_side`` are downscaled (aspect kept) before
sending, and the size actually sent is returned as ``Answer.sent_size``, which is what the
``pixel`` box convention scales back from. Requests are spread over several base URLs (one
server per node), each new request going to the server with the fewest requests in flight.

Each file is read and encoded once per run: what was sent for an image (or a video's frames) is
kept for the next request that sends it (:mod:`gavel.media.image_cache`, ``image_cache_mb``,
256 MiB unless told), and goes into the body as the JSON it already is. The body is encoded
once, by msgspec, and sent as bytes by aiohttp (:mod:`gavel.transport.http_client`, which says
why not through the official client).

The API key is read from one environment variable (``api_key_env``) and goes only into the
``Authorization`` header: never into :meth:`OpenAIChatModel.settings`, manifests, predictions,
error messages or logs. For a server started without a key (vLLM's default) a missing variable
falls back to the placeholder ``EMPTY``, with a note; for api.openai.com it is an error.

One call makes one attempt: retries, backoff and the failure budget belong to the runner
(:func:`gavel.runner.async_runner.run_async`). Each server's requests pass its gate
(:attr:`OpenAIChatModel.rate_control`, :mod:`gavel.transport.gate`): the ``rpm`` / ``tpm``
budgets, an in-flight limit that adapts to 429s, and the pause a ``Retry-After`` asks for.

What is sent is the standard subset every server takes: ``model``, ``messages``, ``max_tokens``
(1024 unless told, so a server's own default, sometimes unbounded, never applies) and
``temperature`` (0 unless told). Anything else (``response_format``, reasoning options, a
server's own fields) is sent only when asked for, through ``extra_body``. When a server refuses
a request, :meth:`OpenAIChatModel.advice` says what to check in the user's own flags, naming
the optional field the server named.

Before a run, :meth:`OpenAIChatModel.preflight` asks ``GET /models`` (a few seconds at most;
a server without the route is not asked again) and stops at once, listing what the server
serves, when the model is not among them. llama.cpp's server and ``transformers serve`` answer
names they do not list (the one model they hold, a model loaded on demand), so for them the
list is only remembered: the first refusal then stops the run, with the list. A reply that
cannot settle the question (an error status such as 404 or 405, a body of another shape, entries
without names) never stops a run: it is one warning, and the run goes on unchecked.
``model_check=False`` (``--no-model-check``) skips the question, for providers whose list is
known to be wrong.

The model that answered is not always the one asked: a single-model ``llama-server`` answers any
name with the one it holds. Every reply's ``model`` field and the ``GET /models`` list are kept
(:meth:`OpenAIChatModel.served`, recorded in the manifest and the results), and a reply naming
another model than the one asked is said once (a dated snapshot of it, ``gpt-4o-2024-08-06``
for ``gpt-4o``, is the same model).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from gavel.errors import ConfigError
from gavel.manifest import redact_userinfo
from gavel.media.frames import Frames, sample_frames
from gavel.media.image_cache import EncodedImages
from gavel.media.image_urls import IMAGE_FORMATS, EncodedImage, encode_file, encode_frame
from gavel.media.kinds import VIDEO_SUFFIXES
from gavel.media.pool import in_pool, sample_frames_async
from gavel.media.sampling import sampling_from_options
from gavel.parsing.conventions import qwen_smart_resize
from gavel.requests import Answer, Capabilities, Request
from gavel.transport.failures import SAME_REFUSALS
from gavel.transport.gate import RateControl
from gavel.transport.http_client import JSONClient
from gavel.transport.retry import InvalidResponseError

log = logging.getLogger(__name__)

ADAPTER = "openai-chat"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Sent when the key variable is unset and the servers are not OpenAI's (vLLM accepts any key).
PLACEHOLDER_KEY = "EMPTY"
#: Seconds one attempt may take (``--timeout``): connecting, sending, and the whole reply.
DEFAULT_TIMEOUT = 300.0
#: Tokens one answer may take unless told (``--max-tokens``); always sent.
DEFAULT_MAX_TOKENS = 1024
#: Seconds ``GET /models`` may take before a run; a slower or missing route is skipped.
PREFLIGHT_TIMEOUT = 5.0
#: Served models listed in a message at most.
MAX_LISTED = 20
#: MiB of encoded images a run keeps for the requests that send them again (``image_cache_mb``).
DEFAULT_IMAGE_CACHE_MB = 256
#: Request bodies as JSON bytes; the images in them are already JSON (``msgspec.Raw``).
encode_body = msgspec.json.Encoder().encode
#: Key variables whose absence was already said in this process.
_NOTED_KEYS: set[str] = set()
#: The command line's names for the settings, in what the advice after a refusal says.
GENERATE_FLAGS = {
    "model": "--model openai:NAME",
    "base_url": "--base-url",
    "api_key_env": "--api-key-env",
    "max_tokens": "--max-tokens",
    "temperature": "--temperature",
    "extra_body": "--extra-body",
    "model_check": "--no-model-check",
    "image_cache_mb": "--image-cache-mb",
}


class OpenAIChatModel:
    """Chat Completions over HTTP (:class:`gavel.transport.http_client.JSONClient`).

    ``image_format``: ``auto`` sends an unchanged PNG or JPEG file byte for byte and re-encodes
    anything else (resized images, other formats, video frames) as JPEG when it came from a
    JPEG or a video and PNG otherwise; ``png`` or ``jpeg`` re-encode every image in that format.

    A video is sent as its sampled frames: ``frames`` spread evenly (8 by default), or one
    every ``1 / fps`` seconds, at most ``max_frames`` (:mod:`gavel.media.sampling`).
    """

    def __init__(
        self,
        model: str,
        *,
        base_urls: Sequence[str] | str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        temperature: float | None = 0.0,
        max_image_side: int | None = None,
        frames: int | None = None,
        fps: float | None = None,
        max_frames: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        box_format: str | None = "pixel",
        extra_body: dict[str, Any] | None = None,
        image_format: str = "auto",
        model_check: bool = True,
        rpm: float | None = None,
        tpm: float | None = None,
        image_cache_mb: float = DEFAULT_IMAGE_CACHE_MB,
    ):
        if not model:
            raise ConfigError("openai needs a model name: openai:MODEL (as the server names it)")
        if isinstance(base_urls, str):
            base_urls = [base_urls]
        urls = [url.rstrip("/") for url in (base_urls or [])]
        if not urls:
            urls = [(os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")]
        for url in urls:
            if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
                raise ConfigError(
                    f"base URL {url!r} is not an http(s) URL like http://host:8000/v1"
                )
        if max_image_side is not None and max_image_side < 1:
            raise ConfigError("max_image_side must be a positive number of pixels")
        sampling = sampling_from_options(frames, fps, max_frames)
        if not timeout > 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout}")
        if image_format not in IMAGE_FORMATS:
            raise ConfigError(f"image_format must be one of {', '.join(IMAGE_FORMATS)}")
        if not image_cache_mb >= 0:
            raise ConfigError(f"image_cache_mb must be 0 or more MiB, got {image_cache_mb}")
        self.name = model
        self.model = model
        self.base_urls = urls
        self.api_key_env = api_key_env
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.max_image_side = max_image_side
        #: How a video's frames are chosen (``frames=N``, or ``fps=F`` with ``max_frames=M``).
        self.sampling = sampling
        self.timeout = timeout
        self.box_format = box_format
        self.extra_body = dict(extra_body or {})
        self.image_format = image_format
        self.capabilities = Capabilities(
            images=True,
            multi_image=True,
            video=True,
            max_image_side=max_image_side,
            box_format=box_format,
        )
        #: Things the user should know (printed by the CLI); never contains the key.
        self.notes: list[str] = []
        self.__key = self._read_key()
        self._busy = [0] * len(urls)
        #: Each server's rate budgets and adaptive in-flight limit (``gavel.transport.gate``).
        self.rate_control = RateControl(urls, rpm=rpm, tpm=tpm)
        self._next = 0
        self._clients: dict[asyncio.AbstractEventLoop, list[JSONClient]] = {}
        #: What was sent for each file lately (an image, or a video's frames), for the next
        #: request that sends it: read and encoded once per run, within the budget.
        self.encoded = EncodedImages(int(image_cache_mb * 1024 * 1024))
        self._bridge: _LoopThread | None = None
        #: The flag names the advice after a refusal speaks of (the judge has its own).
        self.flags = dict(GENERATE_FLAGS)
        #: What ``GET /models`` listed when the model was not among it (else None).
        self.listed: list[str] | None = None
        #: Whether :meth:`preflight` asks ``GET /models`` at all (not part of the settings:
        #: it changes no answer).
        self.model_check = model_check
        self._checked = False
        #: The ``model`` field of the replies, with how many said it.
        self.replied_as: dict[str, int] = {}
        #: Every name ``GET /models`` listed (None: not asked, or no list).
        self.server_lists: list[str] | None = None

    def __repr__(self) -> str:  # the default would be harmless, but be explicit: no key
        return f"OpenAIChatModel({self.model!r}, base_urls={self.base_urls!r})"

    def _read_key(self) -> str:
        key = os.environ.get(self.api_key_env, "")
        if key:
            return key
        if any(
            urlsplit(url).hostname == urlsplit(DEFAULT_BASE_URL).hostname for url in self.base_urls
        ):
            raise ConfigError(
                f"no API key: set the environment variable {self.api_key_env} "
                "(or name another one with --api-key-env)"
            )
        note = (
            f"{self.api_key_env} is not set: sending the placeholder key {PLACEHOLDER_KEY!r}, "
            "which servers started without an API key (vLLM's default) accept"
        )
        self.notes.append(note)
        if self.api_key_env not in _NOTED_KEYS:  # once per variable (gavel run builds a judge
            _NOTED_KEYS.add(self.api_key_env)  # to check its flags, then again to score)
            log.warning(note)
        return PLACEHOLDER_KEY

    # --- the adapter protocol ----------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        """The servers this model is asked through (part of the cache key)."""
        return " ".join(self.base_urls)

    def settings(self) -> dict[str, Any]:
        """Everything that changes answers; never the key (only the variable's name)."""
        return {
            "adapter": ADAPTER,
            "model": self.model,
            "base_urls": redact_userinfo(list(self.base_urls)),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "max_image_side": self.max_image_side,
            "image_format": self.image_format,
            "frames": self.sampling.describe(),
            "box_format": self.box_format,
            "extra_body": self.extra_body,
        }

    def redact(self, text: str) -> str:
        """``text`` with the key and every URL's userinfo replaced, for anything that may echo
        them (error messages, a sample's error detail)."""
        key = self.__key
        text = text.replace(key, "***") if key and key != PLACEHOLDER_KEY else text
        return redact_userinfo(text)

    def answer(self, request: Request) -> Answer:
        """Blocking form of :meth:`answer_async` (for the in-process runner)."""
        if self._bridge is None:
            self._bridge = _LoopThread()
        return self._bridge.run(self.answer_async(request))

    async def answer_async(self, request: Request) -> Answer:
        """One attempt; raises the transport's errors (the runner decides what to retry)."""
        body, sent = await self.request_body(request)
        payload = encode_body(body)
        index = self._pick()
        post = partial(self._client(index).post, "/chat/completions", payload)
        self._busy[index] += 1
        try:
            # The gate reads the body (its text and images) for the token budgets; the reply's
            # headers come back with it (the rate limits left).
            completion = await self.rate_control.gates[index].send(body, post)
        finally:
            self._busy[index] -= 1
        return self.answer_of(completion, sent)

    async def request_body(self, request: Request) -> tuple[dict[str, Any], tuple[int, int] | None]:
        """The Chat Completions body sent for ``request`` and the first image's sent size.

        One function for every way a request leaves: online, and the lines of a batch
        requests file (:mod:`gavel.batch`), so a batch asks exactly what a run would. The image
        parts hold their URLs as JSON already (``msgspec.Raw``): encode the body with
        :data:`encode_body`."""
        content: list[dict[str, Any]] = []
        sent: tuple[int, int] | None = None
        for path in map(Path, request.images):
            for image in await self._encoded(path):
                content.append({"type": "image_url", "image_url": {"url": image.raw}})
                sent = sent or image.size
        content.append({"type": "text", "text": request.prompt})
        # A request without images is sent as plain text (what text-only servers expect).
        user: Any = content if request.images else request.prompt
        messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
        if request.system is not None:
            messages.insert(0, {"role": "system", "content": request.system})
        messages.extend(dict(message) for message in request.followup)
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        body.update(self.extra_body)
        return body, sent

    def answer_of(self, completion: Any, sent: tuple[int, int] | None) -> Answer:
        """The answer a completion body holds (online or from a batch output line), or
        :class:`InvalidResponseError` for a broken one."""
        try:
            text, usage, finish_reason = _read_completion(completion)
        except InvalidResponseError as error:  # a reply without choices is paid for all the same
            error.usage = _usage_of(completion)  # type: ignore[attr-defined]
            raise
        self._note_served(completion.get("model"))
        input_size = None
        if sent is not None and self.box_format == "resized-pixel":
            input_size = qwen_smart_resize(*sent)
        return Answer(
            text, sent_size=sent, input_size=input_size, usage=usage, finish_reason=finish_reason
        )

    def batch_client(self) -> Any:
        """A blocking ``openai.OpenAI`` client of the first server, for its Files and Batches
        API (:mod:`gavel.batch.client`); the key stays inside it."""
        import openai

        return openai.OpenAI(
            api_key=self.__key, base_url=self.base_urls[0], timeout=self.timeout, max_retries=5
        )

    def close(self) -> None:
        """Close the connections of the blocking :meth:`answer` and stop its thread."""
        if self._bridge is not None:
            self._bridge.run(self.aclose())
            self._bridge.stop()
            self._bridge = None

    async def aclose(self) -> None:
        """Close the connections opened from the running event loop."""
        for client in self._clients.pop(asyncio.get_running_loop(), []):
            await client.close()

    # --- the model that answered -------------------------------------------------------------

    def served(self) -> dict[str, Any]:
        """What the servers said they are: the replies' ``model`` names and the names
        ``GET /models`` listed (each only when known); for the manifest and the results."""
        found: dict[str, Any] = {}
        if self.replied_as:
            found["replies"] = sorted(self.replied_as, key=lambda n: -self.replied_as[n])
        if self.server_lists is not None:
            found["listed"] = self.server_lists[:MAX_LISTED]
        return found

    def _note_served(self, name: Any) -> None:
        """Count a reply's ``model``; say once when it is another model than the one asked."""
        if not isinstance(name, str) or not name:
            return
        first = not self.replied_as
        self.replied_as[name] = self.replied_as.get(name, 0) + 1
        if first and not _same_model(self.model, name):
            log.warning(
                "%s answered as %r, not the %r asked (a server holding one model answers any "
                "name with it): the predictions keep the name asked; the manifest records the "
                "one that answered", redact_userinfo(self.endpoint), name, self.model,
            )  # fmt: skip

    # --- before and after a run's failures ---------------------------------------------------

    async def preflight(self) -> None:
        """Ask each server which models it serves; raise :class:`ConfigError` naming them when
        this model is not among them. Anything else (no such route, a slow or failing server,
        a reply of another shape) is left to the run itself, which reports it."""
        if self._checked or not self.model_check:
            return
        self._checked = True
        for index, url in enumerate(redact_userinfo(list(self.base_urls))):
            entries = await self._served(index)
            if not entries:
                continue
            names = [entry["id"] for entry in entries]
            self.server_lists = [*(self.server_lists or []), *names]
            if _listed(self.model, names):
                continue
            self.listed = names
            shown = ", ".join(names[:MAX_LISTED]) + (" …" if len(names) > MAX_LISTED else "")
            if _answers_unlisted(entries):
                log.info("%s lists %s, not %r", url, shown, self.model)
                continue
            raise ConfigError(
                f"{url} does not serve the model {self.model!r}; it serves: {shown}. Check "
                f"{self.flags['model']} (a name as GET {url}/models lists it) and "
                f"{self.flags['base_url']}"
            )

    async def _served(self, index: int) -> list[dict[str, Any]] | None:
        """The entries ``GET /models`` lists, or None when its reply cannot say whether the
        model is served (then the run goes on unchecked)."""
        from gavel.transport.failures import classify

        url = redact_userinfo(self.base_urls[index])  # named in messages only
        try:
            reply = await self._client(index).get("/models", PREFLIGHT_TIMEOUT)
        except InvalidResponseError:
            self._unchecked(url, "its reply is not JSON")
            return None
        except Exception as error:  # no such route (404, 405), auth, down: not ours to judge
            failure = classify(error)
            if failure.status is not None:  # the server answered, but not with a list
                self._unchecked(url, self.redact(failure.cause))
            else:  # no answer at all: the run's first request says why, better than we could
                log.debug("GET %s/models: %s", url, self.redact(str(error)))
            return None
        data = reply.get("data") if isinstance(reply, dict) else None
        if isinstance(data, list) and not data:
            self._unchecked(url, "it lists no models")
            return None
        if not isinstance(data, list):
            self._unchecked(url, f"its reply has no list of models: {str(reply)[:200]!r}")
            return None
        entries = [e for e in data if isinstance(e, dict) and isinstance(e.get("id"), str)]
        if len(entries) < len(data):  # some entries unnamed: the model may be one of them
            unnamed = len(data) - len(entries)
            self._unchecked(url, f"{unnamed} of its {len(data)} entries have no id")
            return None
        return entries

    def _unchecked(self, url: str, why: str) -> None:
        """Say once per server that the model name goes unchecked, and why."""
        log.warning(
            "GET %s/models cannot tell whether %r is served (%s); going on without checking "
            "the name (%s skips asking)", url, self.model, why, self.flags["model_check"],
        )  # fmt: skip

    def refusals_to_stop(self, status: int | None) -> int:
        """Requests refused alike before the run stops: one when the model is not listed and
        the refusal may be about it, else the runner's default."""
        return 1 if self.listed and status in (400, 404) else SAME_REFUSALS

    def optional_fields(self) -> dict[str, str]:
        """The fields sent beyond ``model`` and ``messages``, each with the setting that
        sends it."""
        fields = {}
        if self.max_tokens is not None:
            fields["max_tokens"] = self.flags["max_tokens"]
        if self.temperature is not None:
            fields["temperature"] = self.flags["temperature"]
        for name in self.extra_body:
            fields[name] = self.flags["extra_body"]
        return fields

    def advice(self, status: int | None, words: str | None) -> str:
        """What to check after the server refused every request with ``status``."""
        said = (words or "").lower()
        flags = self.flags
        if status is not None and status >= 500:
            if any(word in said for word in ("image", "vision", "multimodal", "mmproj")):
                return (
                    f"The server at {redact_userinfo(self.endpoint)} cannot take image input: serve a vision "
                    "model with its image projector (llama-server: --mmproj), or a text "
                    "benchmark"
                )
            return (
                f"The server at {redact_userinfo(self.endpoint)} fails every request alike: see its log; the "
                f"options sent may be ones it cannot handle{self._extra_note()}"
            )
        if status in (401, 403):
            return (
                f"The server refused the API key: check that {self.api_key_env} "
                f"({flags['api_key_env']} names another variable) holds a key for "
                f"{self.endpoint}, and {flags['base_url']}"
            )
        named = [name for name in self.optional_fields() if name.lower() in said]
        if named and status in (400, 422):
            field = max(named, key=len)
            return (
                f"The server refuses the field {field!r}, sent because of "
                f"{self.optional_fields()[field]}: leave it out or use a value this server "
                "takes (docs/running.md lists what each server takes)"
            )
        listed = ""
        if self.listed:
            listed = f"; the server lists: {', '.join(self.listed[:MAX_LISTED])}"
        if status == 404 and "model" not in said:
            return (
                f"No such route at {self.endpoint}: check {flags['base_url']} (it usually "
                f"ends in /v1, as http://host:8000/v1){listed}"
            )
        return (
            f"Check {flags['model']} (the name as GET /v1/models lists it), "
            f"{flags['base_url']} and the options sent{self._extra_note()}{listed}"
        )

    def _extra_note(self) -> str:
        """The extra fields sent, which the server's words may be about without naming them."""
        if not self.extra_body:
            return ""
        return f" ({', '.join(self.extra_body)}, sent because of {self.flags['extra_body']})"

    # --- request building --------------------------------------------------------------------

    def build_content(
        self, request: Request, decoded: Mapping[Path, Frames] | None = None
    ) -> tuple[list[dict[str, Any]], tuple[int, int] | None]:
        """The message content (images first, then the prompt, URLs as text) and the first
        image's sent size, for callers that build their own messages (the integrations); a
        video's frames are taken from ``decoded`` when there, else sampled here."""
        parts: list[dict[str, Any]] = []
        sent: tuple[int, int] | None = None
        for path in map(Path, request.images):
            if path.suffix.lower() in VIDEO_SUFFIXES:
                frames = (decoded or {}).get(path) or sample_frames(path, self.sampling)
                encoded = self._encode_frames(frames)
            else:
                encoded = (encode_file(path, self.max_image_side, self.image_format),)
            for image in encoded:
                parts.append({"type": "image_url", "image_url": {"url": image.url}})
                sent = sent or image.size
        parts.append({"type": "text", "text": request.prompt})
        return parts, sent

    async def _encoded(self, path: Path) -> tuple[EncodedImage, ...]:
        """What is sent for the file at ``path``: from :attr:`encoded` when it was sent
        lately, else read and encoded off the event loop (a video decoded on the pool sized to
        the cores, where its frames are encoded too)."""
        video = path.suffix.lower() in VIDEO_SUFFIXES

        async def make() -> tuple[EncodedImage, ...]:
            if video:
                frames = await sample_frames_async(path, self.sampling)
                return await in_pool(self._encode_frames, frames)
            image = await asyncio.to_thread(
                encode_file, path, self.max_image_side, self.image_format
            )
            return (image,)

        return await self.encoded.fetch(EncodedImages.key(path), make)

    def _encode_frames(self, frames: Frames) -> tuple[EncodedImage, ...]:
        return tuple(
            encode_frame(frame, self.max_image_side, self.image_format) for frame in frames.images
        )

    # --- servers -----------------------------------------------------------------------------

    def _pick(self) -> int:
        """The server with the fewest requests in flight; ties go round-robin."""
        count = len(self.base_urls)
        start = self._next
        self._next = (start + 1) % count
        return min(((start + k) % count for k in range(count)), key=lambda i: self._busy[i])

    def _client(self, index: int) -> JSONClient:
        """The client of server ``index`` for the running event loop (opened on first use)."""
        loop = asyncio.get_running_loop()
        clients = self._clients.get(loop)
        if clients is None:
            self._clients = {k: v for k, v in self._clients.items() if not k.is_closed()}
            clients = self._clients[loop] = [
                JSONClient(url, self.__key, self.timeout) for url in self.base_urls
            ]
        return clients[index]


def _same_model(asked: str, answered: str) -> bool:
    """Whether a reply's ``model`` names the model asked: the same name, a dated snapshot of
    it (``gpt-4o-2024-08-06``), or it with a provider's prefix (``models/``, ``org/``)."""
    asked, answered = asked.lower(), answered.lower()
    return (
        answered == asked
        or answered.startswith(asked + "-")
        or answered.endswith("/" + asked)
        or asked.endswith("/" + answered)
    )


def _listed(model: str, names: list[str]) -> bool:
    """Whether ``model`` is among ``names`` as servers spell them: as is, with Ollama's
    default tag (``llava:latest``) or Gemini's ``models/`` prefix."""
    return any(name in names for name in (model, f"{model}:latest", f"models/{model}"))


def _answers_unlisted(entries: list[dict[str, Any]]) -> bool:
    """Servers that answer a model name they do not list: llama.cpp's (any name, its one
    model) and ``transformers serve`` (its entries carry a load ``status``; it loads a model
    path on request)."""
    return any(
        entry.get("owned_by") == "llamacpp" or isinstance(entry.get("status"), dict)
        for entry in entries
    )


def _usage_of(completion: Any) -> dict[str, int]:
    """The token counts a reply reports (none for a reply of another shape)."""
    usage: dict[str, int] = {}
    given = completion.get("usage") if isinstance(completion, dict) else None
    if isinstance(given, dict):
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = given.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                usage[name] = value
    return usage


def _read_completion(completion: Any) -> tuple[str, dict[str, int], str | None]:
    """The answer text, token usage and finish reason (``length``: cut off by ``max_tokens``),
    or :class:`InvalidResponseError` for a broken reply."""
    if not isinstance(completion, dict):
        raise InvalidResponseError(f"the server's reply is not a JSON object: {completion!r:.200}")
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise InvalidResponseError("the server's reply has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise InvalidResponseError("the server's reply has no message")
    text = message.get("content")
    if text is None:
        if not choice.get("finish_reason"):
            raise InvalidResponseError("the server's reply has no content and no finish reason")
        text = ""  # e.g. a refusal, or only reasoning before max_tokens: an empty answer
    if isinstance(text, list):  # content given as parts
        text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
    if not isinstance(text, str):
        raise InvalidResponseError("the server's reply content is not text")
    usage = _usage_of(completion)
    finish_reason = choice.get("finish_reason")
    return text, usage, finish_reason if isinstance(finish_reason, str) else None


class _LoopThread:
    """A private event loop in a daemon thread, so the blocking ``answer`` can await."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, daemon=True, name="gavel-openai"
        )
        self.thread.start()

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


#: Options ``from_spec`` accepts (the constructor's keyword arguments).
SPEC_OPTIONS = (
    "base_urls", "api_key_env", "max_tokens", "temperature", "max_image_side", "frames",
    "fps", "max_frames", "timeout", "box_format", "extra_body", "image_format", "model_check",
    "rpm", "tpm", "image_cache_mb",
)  # fmt: skip


def from_spec(argument: str, **options: Any) -> OpenAIChatModel:
    """The factory behind ``openai:MODEL``: ``argument`` is the model name the server uses.

    Options left as ``None`` keep their defaults, so a command line can pass every flag.
    ``base_url`` (one URL or several) is accepted as another name for ``base_urls``.
    """
    if "base_url" in options:
        single = options.pop("base_url")
        if options.get("base_urls") is None:
            options["base_urls"] = single
    if options.get("batch_size") is not None:
        raise ConfigError(
            "batch_size is for models run in this process (hf:); a served model batches "
            "requests on its server, so send more at once with --concurrency instead"
        )
    unknown = sorted(set(options) - set(SPEC_OPTIONS))
    if unknown:
        raise ConfigError(
            f"unknown option(s) for openai: {', '.join(unknown)}; known: {', '.join(SPEC_OPTIONS)}"
        )
    given = {name: value for name, value in options.items() if value is not None}
    if "base_urls" in given and not given["base_urls"]:
        del given["base_urls"]  # an empty --base-url list: the default
    return OpenAIChatModel(argument, **given)
