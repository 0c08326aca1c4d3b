"""``gavel report`` from the command line (a report of the demo's runs: tests/cli/test_demo.py)."""

from __future__ import annotations

import json


def _main(*args) -> int:
    from gavel.cli.main import main

    try:
        main([str(a) for a in args])
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 1
    return 0


def _gallery_images(page) -> list:
    import re

    text = page.read_text()
    match = re.search(r'<script type="application/json" id="gallery-gavel-data">(.*?)</script>',
                      text, re.S)  # fmt: skip
    return [s["img"] for s in json.loads(match.group(1))["samples"]]


def test_a_recorded_image_root_outside_the_data_folder_needs_report_image_root(tmp_path, capsys):
    import shutil

    assert _main("synth", "--n", "2", "--out", tmp_path / "set") == 0
    data = tmp_path / "set" / "gavel.jsonl"
    assert _main("generate", "--data", data, "--model", "scene", "--out", tmp_path / "p.jsonl") == 0
    outside = tmp_path / "outside"
    shutil.move(tmp_path / "set" / "images", outside / "images")
    run = tmp_path / "run" / "results.json"
    assert _main("score", "--data", data, "--predictions", tmp_path / "p.jsonl",
                 "--image-root", outside, "--out", run, "--bootstrap", "0") == 0  # fmt: skip
    assert _main("report", run.parent, "--out", tmp_path / "page") == 0
    page = tmp_path / "page" / "index.html"
    assert _gallery_images(page) == [None, None]
    assert "outside the data file&#x27;s folder" in page.read_text()
    assert _main("report", run.parent, "--out", tmp_path / "page", "--image-root", outside) == 0
    assert all(img and img.startswith("thumbs/") for img in _gallery_images(page))
    # a recorded folder inside the data folder is followed
    shutil.move(outside, tmp_path / "set" / "inside")
    assert _main("score", "--data", data, "--predictions", tmp_path / "p.jsonl", "--image-root",
                 tmp_path / "set" / "inside", "--out", run, "--bootstrap", "0") == 0  # fmt: skip
    assert _main("report", run.parent, "--out", tmp_path / "page") == 0
    assert all(img and img.startswith("thumbs/") for img in _gallery_images(page))


def test_a_run_folder_whose_name_is_not_utf8(gavel, gavel_main, tmp_path):
    """The score and the report in a subprocess: the real standard streams, as a shell gives
    them."""
    import os
    import shutil

    assert gavel_main("synth", "--n", "2", "--out", tmp_path / "set").code == 0
    data = tmp_path / "set" / "gavel.jsonl"
    pred = tmp_path / "p.jsonl"
    assert gavel_main("generate", "--data", data, "--model", "scene", "--out", pred).code == 0
    odd = tmp_path / os.fsdecode(b"run-\xff")
    done = gavel("score", "--data", data, "--predictions", pred, "--out", odd / "results.json",
                 "--bootstrap", "0")  # fmt: skip
    assert done.returncode == 0, done.stderr
    shutil.copytree(odd, tmp_path / "plain")
    done = gavel("report", odd, tmp_path / "plain", "--out", tmp_path / "page")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    page = (tmp_path / "page" / "index.html").read_bytes().decode("utf-8")  # valid UTF-8
    assert "run-\\udcff" in page


def test_an_image_root_that_does_not_exist_is_refused(tmp_path, gavel_main):
    missing = tmp_path / "no-such-folder"
    ran = gavel_main("report", tmp_path, "--image-root", missing, "--out", tmp_path / "page")
    assert ran.code == 2 and "does not exist" in ran.err and "Traceback" not in ran.text
    assert not (tmp_path / "page").exists()
