"""The most pixels an image may have before gavel refuses to decode it.

Pillow guards against "decompression bombs" (a small file that decodes to gigabytes) with
``Image.MAX_IMAGE_PIXELS``: above it a ``DecompressionBombWarning`` is printed, above twice it
``DecompressionBombError`` is raised. Its default lets a 12000 x 12000 PNG through, with a
warning on every open, at a cost of seconds and gigabytes per sample. gavel makes the limit a
setting (``GAVEL_MAX_IMAGE_PIXELS``, default 100 million: a 10000 x 10000 photo) and applies it
as Pillow's error threshold, so beyond it opening fails at the header, before anything is
decoded, and the warning is never printed. The functions that open images for a model (and
the dry run's sizing) call :func:`apply_pixel_limit` first (it is cheap, and reads the setting
each time); :func:`refusal` and :func:`too_many_pixels` word the error.
"""

from __future__ import annotations

import re
import warnings

from gavel.errors import GavelError
from gavel.setting_checks import whole_number_env

#: The environment variable holding the limit, and its default.
MAX_PIXELS_VARIABLE = "GAVEL_MAX_IMAGE_PIXELS"
MAX_PIXELS = 100_000_000


def max_pixels() -> int:
    """The limit in force (``GAVEL_MAX_IMAGE_PIXELS``, a whole number)."""
    return whole_number_env(MAX_PIXELS_VARIABLE, MAX_PIXELS, "pixels")


def apply_pixel_limit() -> None:
    """Make Pillow refuse images above :func:`max_pixels` (``DecompressionBombError`` at
    ``Image.open``) and never print its warning below that."""
    from PIL import Image

    # Pillow raises above twice its setting and warns above it: half the limit, warnings off.
    # Pillow annotates the setting int | None; it compares pixels with twice the value, so a
    # float half keeps an odd limit exact.
    Image.MAX_IMAGE_PIXELS = max_pixels() / 2  # type: ignore[assignment]
    warnings.filterwarnings("ignore", category=Image.DecompressionBombWarning)


def too_many_pixels(error: Exception) -> str:
    """What to say of an image Pillow refused as too large (``error``: its
    ``DecompressionBombError``, which says how many pixels the image has)."""
    found = re.search(r"\((\d+) pixels\)", str(error))
    size = f"{int(found.group(1)):,} pixels" if found else "too many pixels"
    return (
        f"the image has {size}, more than the limit of {max_pixels():,} (set "
        f"{MAX_PIXELS_VARIABLE} to read larger images)"
    )


def refusal(path: object, error: Exception) -> GavelError:
    """The one message for an image Pillow refused as too large, naming its file."""
    return GavelError(f"{path}: {too_many_pixels(error)}")
