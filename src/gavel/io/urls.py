"""A URL given where gavel reads a local path: refused at once, its password hidden.

gavel reads data and images from local files and folders (and from the Hub through
``hf:OWNER/NAME``), never from the web. A URL given as ``--data``, ``--image-root`` or a data
argument would otherwise be taken as a path that does not exist: every sample failing with
"file not found", or a message printing the URL with its password. The command line's path
types and the library's data sources ask this one function, so both refuse in the same words.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from gavel.errors import ConfigError

#: A URL (``https://...``), also as a path made of it shows it (``https:/...``): two letters at
#: least before the colon, so a Windows drive (``C:/``) is a path.
_URL = re.compile(r"(?i)([a-z][a-z0-9+.-]+):/+")

#: What to give instead, for data (``--data`` and the data arguments) and for a folder.
DATA_INSTEAD = (
    "give a local file or folder, a Parquet folder, or hf:OWNER/NAME for a Hugging Face dataset"
)
FOLDER_INSTEAD = "give a local folder"


def url_refusal(value: str | PurePath, instead: str) -> str | None:
    """Why ``value`` is refused when it is a URL (the URL shown with its password hidden, then
    what to give ``instead``); None when it is no URL."""
    text = str(value)
    url = _URL.match(text)
    if url is None:
        return None
    from gavel.manifest import redact_userinfo

    if url.end() - len(url[1]) - 1 < 2:  # a Path made of it keeps one slash: give it back two
        text = f"{url[1]}://{text[url.end() :]}"
    shown = redact_userinfo(text)
    return f"{shown!r}: a URL is not read; {instead}"


def refuse_url(value: str | PurePath | None, named: str, instead: str) -> None:
    """A :class:`ConfigError` naming ``named`` (the flag) when ``value`` is a URL."""
    refusal = None if value is None else url_refusal(value, instead)
    if refusal is not None:
        raise ConfigError(f"{named} {refusal}")
