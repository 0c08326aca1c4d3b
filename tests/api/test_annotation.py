"""gavel.api.annotation called directly: a project on a real SQLite file, set up, staffed,
counted, checked and exported as `gavel annotate` does it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from gavel.api import annotation
from gavel.errors import ConfigError


@pytest.mark.parametrize("path", [Path, str], ids=["Path", "str"])
def test_a_project_from_pairs_to_export(tmp_path, path):
    """Every path is taken as a ``Path`` or as text, as the command line's flags are."""
    images = tmp_path / "photos"
    images.mkdir()
    Image.new("RGB", (400, 300), "gray").save(images / "street.png")
    pairs = tmp_path / "scored.jsonl"
    lines = [{"id": f"s#{i}", "image": "street.png", "caption": f"Sentence {i} is here."}
             for i in range(4)]  # fmt: skip
    pairs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    project = tmp_path / "project" / "p.sqlite"

    heard = []
    total = annotation.init_project(
        path(project), [path(pairs)], images=path(images), double=0.5,
        imported=lambda f, s: heard.append((f, s)),
    )  # fmt: skip
    assert total == 4 and heard[0][0] == pairs and heard[0][1].added == 4
    # One pairs file given alone; its ids are already there.
    assert annotation.init_project(path(project), path(pairs), images=path(images)) == 4
    project = path(project)

    token = annotation.add_user(project, "ana", "annotator")
    assert token.startswith("gvl_")
    with pytest.raises(ConfigError, match="exists already"):
        annotation.add_user(project, "ana", "checker")
    annotation.set_active(project, "ana", False)
    [ana] = annotation.list_users(project)
    assert (ana["name"], ana["role"], ana["active"]) == ("ana", "annotator", 0)

    numbers = annotation.stats(project)
    assert numbers["items"] == 4
    assert annotation.check(project) == []

    out = tmp_path / "gavel.jsonl"
    summary = annotation.export(project, path(out))
    assert (summary.samples, summary.pending) == (0, 4)
    assert summary.warnings and not out.exists()  # nothing reviewed: no empty file


def test_a_value_that_is_not_a_path_is_refused_naming_its_flag(tmp_path):
    with pytest.raises(ConfigError, match="'--db': 5 is not a path"):
        annotation.init_project(5)
    with pytest.raises(ConfigError, match="'--import': 7 is not a text"):
        annotation.init_project(tmp_path / "p.sqlite", [7])


def test_a_missing_project_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"p\.sqlite"):
        annotation.stats(tmp_path / "p.sqlite")
