"""Finding the images of a folder safely.

Everything that builds a path from a pairs file or a folder listing goes through here, so that
no relative path can leave the images folder: not by ``..``, not by an absolute path and not by
a symlink that points outside it.
"""

from __future__ import annotations

import os
from pathlib import Path

from gavel.benchmarks.gavel.data import safe_relative_path
from gavel.errors import ConfigError

IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".webp", ".bmp", ".gif", ".tif", ".tiff"})


def list_images(root: str | Path) -> list[str]:
    """Image files under ``root`` (recursively, hidden ones skipped) as sorted relative paths.

    Symlinks are followed only when they stay inside ``root``.
    """
    root = Path(root)
    if not root.is_dir():
        raise ConfigError(f"images folder {root} not found")
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if name.startswith(".") or Path(name).suffix.lower() not in IMAGE_SUFFIXES:
                continue
            relative = Path(folder, name).relative_to(root).as_posix()
            if resolve_image(root, relative) is not None:
                found.append(relative)
    return sorted(found)


def resolve_image(root: str | Path, relative: str) -> Path | None:
    """The file ``relative`` names under ``root``, or None when it is not a regular file there.

    Returns None for paths that escape ``root`` (``..``, absolute, or a symlink leading out).
    """
    normal, error = safe_relative_path(relative)
    if error or normal is None:
        return None
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, normal))
    if os.path.commonpath([real_root, real]) != real_root or not os.path.isfile(real):
        return None
    return Path(real)


def image_size(path: str | Path) -> tuple[int, int]:
    """Width and height from the file's header (the pixels are not decoded)."""
    from PIL import Image

    from gavel.media.pixels import apply_pixel_limit, refusal

    apply_pixel_limit()
    try:
        with Image.open(path) as image:
            return image.size
    except Image.DecompressionBombError as error:
        raise refusal(path, error) from None
