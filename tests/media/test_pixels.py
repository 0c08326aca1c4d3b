"""The pixel limit: an image above it is refused at its header, naming the file, and Pillow's
DecompressionBombWarning is never printed."""

from __future__ import annotations

import json
import struct
import warnings
import zlib
from pathlib import Path

import pytest
from PIL import Image


def huge_png(path: Path, width: int, height: int) -> Path:
    """A tiny PNG whose header says ``width`` x ``height`` (Pillow reads sizes from it)."""
    Image.new("L", (8, 8)).save(path)
    data = bytearray(path.read_bytes())
    data[16:24] = struct.pack(">II", width, height)  # IHDR's width and height
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))  # its CRC
    path.write_bytes(bytes(data))
    return path


@pytest.fixture
def synth_set(gavel_main, tmp_path) -> Path:
    done = gavel_main("synth", "--n", "3", "--out", tmp_path / "set")
    assert done.code == 0, done.text
    return tmp_path / "set" / "gavel.jsonl"


def answers(out: Path) -> list[dict]:
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_an_image_above_the_default_limit_is_refused_naming_it(gavel_main, synth_set, tmp_path):
    first = json.loads(synth_set.read_text().splitlines()[0])
    image = huge_png(synth_set.parent / first["image"], 12000, 12000)
    assert image.stat().st_size < 200
    out = tmp_path / "p.jsonl"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done = gavel_main("generate", "--data", synth_set, "--model", "scene", "--out", out,
                          "--no-progress")  # fmt: skip
    assert done.code == 2, done.text  # the other samples are answered; the exit says one failed
    assert "DecompressionBombWarning" not in done.text
    assert not [w for w in caught if issubclass(w.category, Image.DecompressionBombWarning)]
    refused = answers(out)[0]
    assert refused["id"] == first["id"]
    assert refused["error"] == (
        f"GavelError: {image}: the image has 144,000,000 pixels, more than the limit of "
        "100,000,000 (set GAVEL_MAX_IMAGE_PIXELS to read larger images)"
    )
    assert [a.get("error") for a in answers(out)[1:]] == [None, None]


def test_the_limit_is_a_setting_and_below_it_nothing_is_printed(
    gavel_main, synth_set, tmp_path, monkeypatch
):
    sizes = []
    for line in synth_set.read_text().splitlines():
        with Image.open(synth_set.parent / json.loads(line)["image"]) as image:
            sizes.append(image.width * image.height)
    low, high = min(sizes) - 1, max(sizes) + 1
    assert high / 2 < min(sizes)  # Pillow alone would warn about every one below ``high``
    monkeypatch.setenv("GAVEL_MAX_IMAGE_PIXELS", str(low))
    done = gavel_main("generate", "--data", synth_set, "--model", "scene", "--out",
                      tmp_path / "refused.jsonl", "--no-progress")  # fmt: skip
    errors = [a.get("error", "") for a in answers(tmp_path / "refused.jsonl")]
    assert [f"{n:,} pixels, more than the limit of {low:,}" in e for n, e in zip(sizes, errors,
            strict=True)] == [True] * 3  # fmt: skip
    monkeypatch.setenv("GAVEL_MAX_IMAGE_PIXELS", str(high))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done = gavel_main("generate", "--data", synth_set, "--model", "scene", "--out",
                          tmp_path / "kept.jsonl", "--no-progress")  # fmt: skip
    assert done.code == 0 and "DecompressionBomb" not in done.text
    assert not [w for w in caught if issubclass(w.category, Image.DecompressionBombWarning)]
    assert [a.get("error") for a in answers(tmp_path / "kept.jsonl")] == [None] * 3
    monkeypatch.setenv("GAVEL_MAX_IMAGE_PIXELS", "many")
    done = gavel_main("generate", "--data", synth_set, "--model", "scene", "--out",
                      tmp_path / "bad.jsonl", "--no-progress")  # fmt: skip
    errors = [a.get("error", "") for a in answers(tmp_path / "bad.jsonl")]
    assert all("GAVEL_MAX_IMAGE_PIXELS='many': expected a whole number of pixels" in e
               for e in errors) and len(errors) == 3  # fmt: skip


def test_the_dry_run_names_an_image_above_the_limit(synth_set, tmp_path):
    from gavel.cost.estimate import Sending, estimate
    from gavel.cost.image_tokens import RULES
    from gavel.cost.tokens import estimate_counter
    from gavel.media.sampling import FrameSampling
    from gavel.requests import Request

    image = huge_png(tmp_path / "huge.png", 12000, 12000)
    sending = Sending(counter=estimate_counter(), image_rule=RULES["openai"],
                      sampling=FrameSampling(count=4))  # fmt: skip
    request = Request(sample_id="s", task="t", prompt="What is it?", images=(str(image),))
    part = estimate("model", "m", [request], sending, None, None, "", None)
    assert part.images == 0
    assert any(
        n.startswith(f"not counted: {image}: {image}: the image has 144,000,000")
        for n in part.notes
    )


def test_data_without_sizes_names_the_line_of_a_huge_image(gavel_main, synth_set):
    lines = [json.loads(line) for line in synth_set.read_text().splitlines()]
    for line in lines:
        line.pop("width"), line.pop("height")  # the loader reads the sizes from the images
    synth_set.write_text("".join(json.dumps(line) + "\n" for line in lines))
    image = huge_png(synth_set.parent / lines[1]["image"], 12000, 12000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done = gavel_main("data", "validate", synth_set)
    assert done.code == 1, done.text  # data validate: the file has problems
    assert done.err.startswith(
        f"error: {synth_set}, line 2, field 'image': the image has 144,000,000 pixels, more "
        "than the limit of 100,000,000 (set GAVEL_MAX_IMAGE_PIXELS to read larger images)"
    )
    assert "DecompressionBombWarning" not in done.text
    assert not [w for w in caught if issubclass(w.category, Image.DecompressionBombWarning)]
    assert image.is_file()
