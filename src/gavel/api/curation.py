"""Candidate pairs as functions: what ``gavel curate captions|import|score`` do.

A curation run is a model call over a folder of images (or a file of prompts), so the
functions take the model as ``gavel curate`` does -- a spec and the few settings of
``gavel generate`` it shares -- and write the same files: the pairs, and the raw replies a
rerun resumes from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gavel.models.registry import describe_specs
from gavel.setting_checks import as_path

if TYPE_CHECKING:
    from gavel.curate.alignment import ScoreResult
    from gavel.curate.captions import CaptionResult
    from gavel.curate.importer import ImportResult
    from gavel.prompts import Template

__all__ = ["ModelSettings", "captions", "describe_specs", "import_prompts", "score_pairs"]


@dataclass(frozen=True)
class ModelSettings:
    """The model a curate command asks, and how: ``spec`` as ``--model`` takes it; ``None``
    keeps the command's default (16 requests in flight for remote models, 1 for local ones;
    the user's answer cache for remote ones; replies beside the output file)."""

    spec: str
    base_urls: tuple[str, ...] = ()
    api_key_env: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    concurrency: int | None = None
    cache: Path | None = None
    no_cache: bool = False
    replies: Path | None = None
    prompt_file: Path | None = None
    progress: bool = True

    def load(self) -> Any:
        """The model adapter, loaded as ``gavel generate --model`` loads it."""
        from gavel.models.registry import load_model

        return load_model(
            self.spec,
            base_urls=self.base_urls,
            api_key_env=self.api_key_env,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        )

    def template(self) -> Template | None:
        """The user's template file (its SHA-256 is recorded like a shipped one's), or None
        for the shipped one."""
        if self.prompt_file is None:
            return None
        from gavel.prompts import Template

        return Template(self.prompt_file.name, self.prompt_file.read_text(encoding="utf-8"))

    def run_options(self) -> dict[str, Any]:
        """What the runner takes: concurrency, the answer cache (its folder made), progress."""
        from gavel.runner.defaults import answer_cache_for, concurrency_for

        cache = answer_cache_for(self.spec, self.cache, self.no_cache)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
        return {
            "concurrency": concurrency_for(self.spec, self.concurrency),
            "cache": cache,
            "progress": self.progress,
        }


def captions(
    images: str | Path, out: str | Path, model: ModelSettings, *, min_words: int = 3
) -> CaptionResult:
    """Have the model describe every image under ``images``; each sentence of at least
    ``min_words`` words becomes a candidate pair in ``out`` (``gavel curate captions``)."""
    from gavel.curate.captions import caption_images

    return caption_images(
        images,
        model.load(),
        out,
        template=model.template(),
        replies=model.replies,
        min_words=min_words,
        **model.run_options(),
    )


def import_prompts(
    images: str | Path,
    prompts: str | Path,
    out: str | Path,
    *,
    source: str | None = None,
    whole: bool = False,
    min_words: int = 3,
) -> ImportResult:
    """Generated images with the prompts that made them, as candidate pairs in ``out``
    (``gavel curate import``)."""
    from gavel.curate.importer import import_prompts as read_prompts

    return read_prompts(images, prompts, out, source=source, whole=whole, min_words=min_words)


def score_pairs(
    pairs: str | Path,
    out: str | Path,
    model: ModelSettings,
    *,
    images: str | Path | None = None,
    below: float | None = None,
    invalid_retries: int = 2,
) -> ScoreResult:
    """Rate each pair's image–text alignment 1–5 with the model; ``below`` keeps only the
    pairs rated lower (``gavel curate score``). ``images``: the folder the pairs' image paths
    are relative to (default: the pairs file's)."""
    from gavel.curate.alignment import score_pairs as rate_pairs

    return rate_pairs(
        pairs,
        as_path("--pairs", pairs).parent if images is None else images,
        model.load(),
        out,
        below=below,
        template=model.template(),
        replies=model.replies,
        invalid_retries=invalid_retries,
        **model.run_options(),
    )
