"""The gallery's thumbnails: a file that is no regular image gets none, at once."""

from __future__ import annotations

import os

import pytest
from PIL import Image

from gavel.report.gallery import write_thumbnail


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_gets_no_thumbnail_and_no_wait(tmp_path):
    # Pillow would wait forever for a writer of the FIFO; the report shows no thumbnail.
    pipe = tmp_path / "pipe.png"
    os.mkfifo(pipe)
    photo = tmp_path / "photo.png"
    Image.new("RGB", (80, 60), (10, 120, 200)).save(photo)
    out = tmp_path / "report"
    (out / "thumbs").mkdir(parents=True)
    assert write_thumbnail(pipe, out, 64) is None
    made = write_thumbnail(photo, out, 64)
    assert made is not None and Image.open(out / made).size == (64, 48)
