"""Items, versions and stages on a real SQLite file, without the web layer."""

from __future__ import annotations

import json
import sqlite3

import pytest
from PIL import Image

from gavel.annotate import db, store
from gavel.annotate.export import export, split_images
from gavel.annotate.payload import PayloadError
from gavel.annotate.stats import dashboard
from gavel.annotate.users import User, add_user, user_by_token
from gavel.benchmarks.gavel.data import validate_file
from gavel.errors import ConfigError, DataError


def users(conn: sqlite3.Connection, **roles: str) -> dict[str, User]:
    found = {}
    for name, role in roles.items():
        token = add_user(conn, name, role)
        found[name] = user_by_token(conn, token)
    return found


def test_three_stages_keep_every_version(project, hallucinated):
    conn = db.connect(project.db)
    people = users(conn, a2="annotator", r2="reviewer", c2="checker")
    item = store.next_item(conn, people["a2"])
    assert item == 1
    assert store.next_item(conn, people["a2"]) == 1  # the item held comes back first
    first = store.save(conn, item, people["a2"], "annotate", hallucinated, None)
    assert (first.stage, first.action) == ("review", "annotate")
    with pytest.raises(store.Forbidden):  # annotators do not see the item any more
        store.view_item(conn, item, people["a2"])
    view = store.view_item(conn, item, people["r2"])
    assert view.annotation["boxes"] == [[40.0, 150.0, 120.0, 80.0]]
    corrected = {**hallucinated, "boxes": [[38, 148, 124, 84]]}
    second = store.save(conn, item, people["r2"], "correct", corrected, first.version)
    assert second.stage == "reviewed"
    third = store.save(conn, item, people["c2"], "pass", {"note": "fine"}, second.version)
    assert third.stage == "checked"
    history = store.history(conn, item)
    assert [h["action"] for h in history] == ["annotate", "correct", "pass"]
    assert [h["base_version"] for h in history] == [None, first.version, second.version]
    assert history[2]["annotation"]["boxes"] == [[38.0, 148.0, 124.0, 84.0]]
    assert history[2]["annotation"]["note"] == "fine"
    assert store.check_consistency(conn) == []
    conn.close()


def test_versions_are_append_only_in_sqlite_itself(project, hallucinated):
    conn = db.connect(project.db)
    people = users(conn, a2="annotator")
    store.save(conn, 1, people["a2"], "annotate", hallucinated, None)
    for statement in ("UPDATE versions SET payload = '{}'", "DELETE FROM versions"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(statement)
    with pytest.raises(sqlite3.IntegrityError, match="never change"):
        conn.execute("UPDATE items SET caption = 'x'")
    conn.close()


def test_a_stale_save_is_refused_with_who_and_when(project, hallucinated):
    conn = db.connect(project.db)
    people = users(conn, a2="annotator", r1="reviewer", r2="reviewer")
    first = store.save(conn, 1, people["a2"], "annotate", hallucinated, None)
    store.save(conn, 1, people["r1"], "accept", {}, first.version)
    with pytest.raises(store.Conflict) as conflict:
        store.save(conn, 1, people["r2"], "correct", hallucinated, first.version)
    message = str(conflict.value)
    assert "r1 (reviewer) accepted this item" in message and "not saved" in message
    assert conflict.value.latest["version"] == first.version + 1
    assert len(store.history(conn, 1)) == 2  # nothing was written
    conn.close()


def test_invalid_annotations_are_refused_with_the_field(project, hallucinated):
    conn = db.connect(project.db)
    people = users(conn, a2="annotator")
    cases = {
        "category": {**hallucinated, "category": "Smell"},
        "explanation": {**hallucinated, "explanation": "  "},
        "boxes": {**hallucinated, "boxes": []},
        "boxes[0]": {**hallucinated, "boxes": [[500, 500, 10, 10]]},
        "verdict": {**hallucinated, "verdict": "maybe"},
        "annotation": {**hallucinated, "extra": 1},
    }
    for field, annotation in cases.items():
        with pytest.raises(PayloadError) as error:
            store.save(conn, 1, people["a2"], "annotate", annotation, None)
        assert error.value.field == field
    nan_box = {**hallucinated, "boxes": [[float("nan"), 1, 2, 3]]}
    with pytest.raises(PayloadError):
        store.save(conn, 1, people["a2"], "annotate", nan_box, None)
    clipped = store.save(
        conn, 1, people["a2"], "annotate", {**hallucinated, "boxes": [[-10, 250, 100, 100]]}, None
    )
    saved = json.loads(
        conn.execute("SELECT payload FROM versions WHERE id = ?", (clipped.version,)).fetchone()[0]
    )
    assert saved["boxes"] == [[0.0, 250.0, 90.0, 50.0]]  # clipped to the 400x300 image
    conn.close()


def test_double_annotation_and_agreement(tmp_path, make_project, hallucinated):
    project = make_project(tmp_path, double=1.0, users={})
    conn = db.connect(project.db)
    people = users(conn, a1="annotator", a2="annotator", a3="annotator", r="reviewer")
    assert store.next_item(conn, people["a1"]) == 1
    assert store.next_item(conn, people["a2"]) == 1  # two slots: both get the same item
    assert store.next_item(conn, people["a3"]) == 2  # but not a third person
    store.save(conn, 1, people["a1"], "annotate", hallucinated, None)
    assert store.item_row(conn, 1)["stage"] == "annotate"  # waits for the second annotation
    other = {**hallucinated, "category": "Obj", "boxes": [[40, 150, 60, 80]]}
    second = store.save(conn, 1, people["a2"], "annotate", other, None)
    assert (second.action, second.stage) == ("annotate-second", "review")
    with pytest.raises(store.Forbidden, match="has all the annotations it needs"):
        store.save(conn, 1, people["a3"], "annotate", hallucinated, None)
    head = store.item_row(conn, 1)["head"]
    store.save(conn, 1, people["r"], "accept", {}, head)
    agreement = dashboard(conn)["agreement"]
    assert agreement["two_annotators"] == {
        "items": 1,
        "unchanged": 0.0,
        "verdict_agreement": 1.0,
        "both_hallucinated": 1,
        "category_agreement": 0.0,
        "mean_box_iou": 0.5,
    }
    assert agreement["annotator_reviewer"]["unchanged"] == 1.0
    assert agreement["annotator_reviewer"]["mean_box_iou"] == 1.0
    assert store.check_consistency(conn) == []
    conn.close()


def test_dashboard_counts_stages_and_people(project, hallucinated):
    conn = db.connect(project.db)
    people = users(conn, a2="annotator")
    store.save(conn, 1, people["a2"], "annotate", hallucinated, None)
    store.save(conn, 2, people["a2"], "annotate", {"verdict": "correct"}, None)
    numbers = dashboard(conn)
    assert numbers["stages"] == {"annotate": 2, "review": 2, "reviewed": 0, "checked": 0}
    mine = next(p for p in numbers["people"] if p["name"] == "a2")
    assert mine["saves"] == 2 and mine["last_24h"] == 2 and mine["per_hour"] > 0
    conn.close()


def test_export_is_valid_gavel_data_split_by_image(project, hallucinated):
    conn = db.connect(project.db)
    people = users(conn, a2="annotator", r2="reviewer")
    verdicts = [hallucinated, {"verdict": "correct"}, {"verdict": "unusable"}, hallucinated]
    for item, annotation in zip((1, 2, 3, 4), verdicts, strict=True):
        done = store.save(conn, item, people["a2"], "annotate", annotation, None)
        if item != 4:  # item 4 stays unreviewed
            store.save(conn, item, people["r2"], "accept", {}, done.version)
    out = project.root / "gavel.jsonl"
    summary = export(conn, project.db, out, split_by_image=True, test_fraction=0.5, seed=1)
    assert (summary.samples, summary.unusable, summary.pending) == (2, 1, 1)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["id"] for line in lines] == ["street#0", "street#1"]
    assert (
        lines[0]["boxes"] == [[40.0, 150.0, 120.0, 80.0]]
        and lines[0]["image"] == "photos/street.png"
    )
    assert lines[1] == {
        "id": "street#1",
        "image": "photos/street.png",
        "caption": "Two people <b>walk</b> past the shop & smile.",
        "hallucinated": False,
        "category": None,
        "explanation": "The caption matches the image.",
        "boxes": [],
        "width": 400,
        "height": 300,
        "source": "vlm",
        "split": lines[1]["split"],
    }
    assert len({line["split"] for line in lines}) == 1  # one image, one split
    report, errors = validate_file(out)  # the images are found next to the file
    assert errors == [] and report.samples == 2
    for split in summary.splits:
        assert validate_file(out.with_name(f"gavel.{split}.jsonl"))[1] == []
    conn.close()


def test_split_by_image_is_seeded_and_stable_as_images_are_added():
    images = [f"img{i}.jpg" for i in range(2000)]
    first = split_images(images[:500], 0.2, seed=3)
    assert 0.15 < sum(v == "test" for v in first.values()) / 500 < 0.25
    assert first == split_images(list(reversed(images[:500])), 0.2, seed=3)
    assert first != split_images(images[:500], 0.2, seed=4)
    grown = split_images(images, 0.2, seed=3)  # four times as many images: none moves
    assert {image: grown[image] for image in first} == first
    assert 0.17 < sum(v == "test" for v in grown.values()) / 2000 < 0.23
    assert set(split_images(images, 0.0, seed=3).values()) == {"train"}
    assert set(split_images(images, 1.0, seed=3).values()) == {"test"}


def test_export_writes_no_empty_file(project, hallucinated):
    conn = db.connect(project.db)
    out = project.root / "gavel.jsonl"
    train, test = project.root / "gavel.train.jsonl", project.root / "gavel.test.jsonl"
    summary = export(conn, project.db, out, split_by_image=True)
    assert summary.samples == 0 and summary.files == []
    assert not out.exists() and not train.exists() and not test.exists()
    assert [w.split(":")[0] for w in summary.warnings] == [
        "no reviewed samples",
        "no train samples",
        "no test samples",
    ]
    people = users(conn, a2="annotator", r2="reviewer")
    done = store.save(conn, 1, people["a2"], "annotate", hallucinated, None)
    store.save(conn, 1, people["r2"], "accept", {}, done.version)
    test.write_text("a test split of an earlier export\n")
    # everything in the test split: no train file; then everything in train: the old test
    # file goes (it would mix an earlier split into this one)
    summary = export(conn, project.db, out, split_by_image=True, test_fraction=1.0)
    assert summary.files == [out, test] and not train.exists()
    assert summary.warnings == [f"no train samples: {train} not written"]
    summary = export(conn, project.db, out, split_by_image=True, test_fraction=0.0)
    assert summary.files == [out, train] and not test.exists()
    assert "earlier export was removed" in summary.warnings[0]
    assert validate_file(train)[1] == []
    conn.close()


def test_insert_or_replace_cannot_rewrite_history(project, hallucinated):
    conn = db.connect(project.db)
    people = users(conn, a2="annotator")
    saved = store.save(conn, 1, people["a2"], "annotate", hallucinated, None)
    forged = (
        "INSERT OR REPLACE INTO versions(id, item_id, stage, action, author_id, created, "
        "payload) VALUES (?, 1, 'annotate', 'annotate', ?, 0, '{\"verdict\": \"correct\"}')"
    )
    replace_item = (
        "INSERT OR REPLACE INTO items(id, key, image, caption, width, height, created) "
        "VALUES (?, ?, 'street.png', 'Something else entirely.', 400, 300, 0)"
    )
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute(forged, (saved.version, people["a2"].id))
    for item_id, key in ((1, "new-key"), (999, "street#1")):  # by id, and by the unique key
        with pytest.raises(sqlite3.IntegrityError, match="never"):
            conn.execute(replace_item, (item_id, key))
    with pytest.raises(sqlite3.IntegrityError, match="never"):
        conn.execute("REPLACE INTO items SELECT * FROM items WHERE id = 2")
    # a file made before the insert triggers: recursive triggers still fire the delete ones
    conn.execute("DROP TRIGGER versions_no_replace")
    conn.execute("DROP TRIGGER items_no_replace")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute(forged, (saved.version, people["a2"].id))
    with pytest.raises(sqlite3.IntegrityError, match="never deleted"):
        conn.execute(replace_item, (1, "new-key"))
    conn.close()
    db.connect(project.db, create=True).close()  # `init` on the file adds them back
    conn = db.connect(project.db)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute(forged, (saved.version, people["a2"].id))
    assert store.history(conn, 1)[0]["annotation"]["verdict"] == "hallucinated"
    assert store.item_row(conn, 1)["caption"] == "A red car is parked next to the tree."
    assert store.check_consistency(conn) == []
    conn.close()


def test_a_failed_first_import_records_no_images_folder(tmp_path, make_project, monkeypatch):
    source = make_project(tmp_path / "source")
    path = tmp_path / "fresh.sqlite"
    conn = db.connect(path, create=True)
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    with pytest.raises(DataError, match="not an image file inside"):
        store.import_pairs(conn, path, source.root / "scored.jsonl", wrong)
    assert db.get_meta(conn, "images_root") is None
    assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 0

    # image headers are read before the write transaction, which would block every save
    read_sizes = []

    def image_size(image):
        assert not conn.in_transaction
        read_sizes.append(image)
        return Image.open(image).size

    monkeypatch.setattr(store, "image_size", image_size)
    summary = store.import_pairs(conn, path, source.root / "scored.jsonl", source.images)
    assert summary.added == 4 and len(read_sizes) == 4
    assert db.images_root(conn, path) == source.images.resolve()
    again = store.import_pairs(conn, path, source.root / "scored.jsonl", source.images)
    assert (again.added, again.existing, len(read_sizes)) == (0, 4, 4)  # not read again
    conn.close()


def test_import_refuses_images_browsers_cannot_show(tmp_path, make_project):
    project = make_project(tmp_path)
    Image.new("RGB", (20, 10), "red").save(project.images / "scan.tif")
    pairs = tmp_path / "tiff.jsonl"
    pairs.write_text(json.dumps({"id": "t", "image": "scan.tif", "caption": "A red scan."}) + "\n")
    conn = db.connect(project.db)
    with pytest.raises(DataError, match=r"browsers cannot show TIFF.*convert it to PNG or JPEG"):
        store.import_pairs(conn, project.db, pairs, project.images)
    assert store.item_row(conn, 5) is None
    conn.close()


def test_import_refuses_paths_outside_the_images_folder(tmp_path, make_project):
    project = make_project(tmp_path)
    outside = tmp_path / "secret.png"
    outside.write_bytes((project.images / "street.png").read_bytes())
    (project.images / "link.png").symlink_to(outside)
    for image in ("../secret.png", "/etc/passwd", "link.png"):
        pairs = tmp_path / "bad.jsonl"
        pairs.write_text(
            json.dumps({"id": "x", "image": image, "caption": "A cat sits here."}) + "\n"
        )
        conn = db.connect(project.db)
        with pytest.raises(DataError):
            store.import_pairs(conn, project.db, pairs, project.images)
        conn.close()
    conn = db.connect(project.db)
    with pytest.raises(ConfigError, match="images are in"):
        store.import_pairs(conn, project.db, tmp_path / "scored.jsonl", tmp_path)
    conn.close()


def test_a_foreign_file_is_refused(tmp_path):
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(ConfigError, match="schema version"):
        db.connect(other)
    with pytest.raises(ConfigError, match="not found"):
        db.connect(tmp_path / "missing.sqlite")
