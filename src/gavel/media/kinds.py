"""Which files are videos: told by their suffix, the one rule every part of gavel shares (the
clients that send them, the local models that read them, the cost estimate, the loaders that
name a file from its first bytes), so no two of them disagree about one file."""

from __future__ import annotations

#: Suffixes (lower-cased) of the files sent as sampled frames; any other file is an image.
VIDEO_SUFFIXES = frozenset({".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg"})
