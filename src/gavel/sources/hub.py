"""A Hub dataset repository as a folder on disk, through huggingface_hub and its cache.

``snapshot_download`` does the work and keeps the files in the Hugging Face cache
(``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``), so a dataset is
fetched once and shared with every other tool that uses the Hub. The environment is read at
each call, not when huggingface_hub was imported, so ``HF_HUB_OFFLINE=1`` set for one command
applies to it.

Offline, nothing is sent: a cached revision loads, an uncached one is one message saying how
to fetch it. Online, the revision is resolved with a bounded wait (``GAVEL_HUB_TIMEOUT``
seconds, default 20) before any download starts, so an unreachable Hub costs seconds, never a
hang: the cached copy of the revision is then used, and without one the message says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gavel.errors import ConfigError, GavelError
from gavel.sources.extras import need
from gavel.sources.spec import HubSpec

DEFAULT_TIMEOUT_S = 20.0
_TRUE = {"1", "on", "yes", "true"}


@dataclass(frozen=True)
class Snapshot:
    """A repository's files at one commit."""

    folder: Path
    commit: str

    @property
    def store(self) -> Path:
        """The repository's folder in the cache: its snapshots are links into its ``blobs/``,
        so a file of the dataset is one really inside this folder."""
        return self.folder.parent.parent


def offline() -> bool:
    """``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) as huggingface_hub reads it."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().lower() in _TRUE


def cache_dir() -> Path:
    """Where huggingface_hub keeps repositories, from the environment as it is now."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def timeout_s() -> float:
    text = os.environ.get("GAVEL_HUB_TIMEOUT")
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ConfigError(f"GAVEL_HUB_TIMEOUT={text!r}: expected a positive number of seconds")
    return value


def _network_failure(error: BaseException) -> bool:
    """A timeout or a refused or dropped connection (httpx and requests alike)."""
    from huggingface_hub import errors

    if isinstance(error, errors.OfflineModeIsEnabled | ConnectionError | TimeoutError):
        return True
    # httpx's errors share no base class with the standard library's
    return type(error).__module__.startswith(("httpx", "httpcore", "requests", "urllib3"))


def _resolve(hub, spec: HubSpec, revision: str) -> tuple[str | None, str | None]:
    """``(commit, None)`` from the Hub within the timeout, or ``(None, why not)``."""
    try:
        info = hub.HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None).dataset_info(
            spec.repo, revision=revision, timeout=timeout_s()
        )
    except Exception as error:
        if not _network_failure(error):
            raise
        return None, f"the Hub did not answer within {timeout_s():g} s ({type(error).__name__})"
    return info.sha or revision, None


def fetch(spec: HubSpec) -> Snapshot:
    """The files of ``spec``'s repository at its revision (downloading only what is missing).

    When the Hub cannot be reached, the revision is looked up in the cache instead, as
    huggingface_hub itself does, so a cached dataset loads without a network either way.
    """
    need("huggingface_hub")
    from huggingface_hub import constants

    # huggingface_hub read HF_HUB_OFFLINE once, when imported, and its requests obey that
    # copy: it says what the environment says now, for this call only.
    before, constants.HF_HUB_OFFLINE = constants.HF_HUB_OFFLINE, offline()
    try:
        return _fetch(spec, constants.HF_HUB_OFFLINE)
    finally:
        constants.HF_HUB_OFFLINE = before


def _fetch(spec: HubSpec, local_only: bool) -> Snapshot:
    import huggingface_hub as hub
    from huggingface_hub import errors

    cache = cache_dir()
    revision = spec.revision or "main"
    commit: str | None
    unreachable: str | None
    commit, unreachable = (None, "HF_HUB_OFFLINE is set") if local_only else (None, None)
    try:
        if not local_only:
            commit, unreachable = _resolve(hub, spec, revision)
        folder = hub.snapshot_download(
            spec.repo,
            repo_type="dataset",
            revision=commit or revision,
            cache_dir=cache,
            local_files_only=commit is None,
            etag_timeout=timeout_s(),
            endpoint=os.environ.get("HF_ENDPOINT") or None,
        )
    except errors.GatedRepoError:
        raise GavelError(
            f"{spec}: the dataset is gated; accept its terms on the Hub and log in (hf auth login)"
        ) from None
    except errors.RepositoryNotFoundError:
        raise GavelError(
            f"{spec}: no dataset repository {spec.repo!r} on the Hub (or it is private and no "
            "token was given)"
        ) from None
    except errors.RevisionNotFoundError:
        raise GavelError(f"{spec}: the repository has no revision {revision!r}") from None
    except errors.LocalEntryNotFoundError:
        fetch_it = (
            f"fetch it once with network access (hf download {spec.repo} --repo-type dataset"
            f"{f' --revision {revision}' if spec.revision else ''})"
        )
        if local_only:
            raise GavelError(
                f"{spec}: not in the Hugging Face cache ({cache}) and HF_HUB_OFFLINE is set; "
                f"{fetch_it}, or unset HF_HUB_OFFLINE"
            ) from None
        raise GavelError(
            f"{spec}: {unreachable or 'the download did not complete'}, and it is not in the "
            f"Hugging Face cache ({cache}); check the network or HF_ENDPOINT, or {fetch_it}"
        ) from None
    except errors.HfHubHTTPError as error:
        status = getattr(getattr(error, "response", None), "status_code", None)
        raise GavelError(f"{spec}: the Hub answered HTTP {status}: {error}") from None
    except Exception as error:
        if not _network_failure(error):
            raise  # a full disk or a read-only cache: the command line names the path
        raise GavelError(
            f"{spec}: the download failed ({type(error).__name__}: {error}); rerun to resume it"
        ) from None
    snapshot = Path(folder)
    return Snapshot(snapshot, commit or snapshot.name)
