"""No traceback, ever: every command on every kind of malformed input ends in one message.

A table of generated malformed files (each kind of damage applied to every field of a real
file that the command reads) runs through the real entry point, ``gavel.cli.main.main``, in
this process, so it goes through the same error handling as a user's shell. Each case must
end with a non-zero exit and an ``error:`` line, never a traceback and never the one-line
report of an unexpected error (which means a bug). Damage that leaves a file valid (a wrong
type in a field a reader ignores) may succeed, but must still not crash.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gavel.cli.main import main

#: Stand-ins for the file itself: a link to /dev/null, a folder where the file should be.
DEV_NULL = b"@@dev-null@@"
FOLDER = b"@@folder@@"
PLACES = [("/dev/null", True, DEV_NULL), ("a folder", True, FOLDER)]

DEEP = "[" * 1000 + "]" * 1000
HUGE = "7" * 5000
SURROGATE = '"\\udfff"'


def assert_clean(ran: Any, *, must_fail: bool, case: str) -> None:
    text = ran.text
    assert "Traceback" not in text, f"{case}: {text[-2000:]}"
    assert "internal error" not in text, f"{case}: {text[-2000:]}"
    if must_fail:
        assert ran.code != 0, f"{case}: accepted\n{text[-1000:]}"
    if ran.code != 0:
        assert "error" in ran.err.lower(), f"{case}: {ran.err!r}"


# --- the valid files the damage is applied to ---------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """Small real data for the three benchmarks, predictions of the built-in model, scored
    runs, two raters' judge scores and an annotation pairs file."""
    root = tmp_path_factory.mktemp("world")
    for benchmark in ("gavel", "detailverify", "videohallucer"):
        _ok("synth", "--benchmark", benchmark, "--n", "3", "--out", root / benchmark)
    data = {
        "gavel": root / "gavel" / "gavel.jsonl",
        "detailverify": root / "detailverify" / "real_test.jsonl",
        "videohallucer": root / "videohallucer",
    }
    for benchmark, path in data.items():
        predictions = root / f"{benchmark}.pred.jsonl"
        _ok("generate", "--benchmark", benchmark, "--data", path, "--model", "scene",
            "--out", predictions)  # fmt: skip
        _ok("score", "--benchmark", benchmark, "--data", path, "--predictions", predictions,
            "--out", root / f"run-{benchmark}" / "results.json", "--bootstrap", "0")  # fmt: skip
    ids = [json.loads(line)["id"] for line in data["gavel"].read_text().splitlines()]
    for name, offset in (("judge-a", 0), ("judge-b", 1)):
        (root / f"{name}.jsonl").write_text(
            "".join(
                json.dumps({"id": i, "score": 1 + (n + offset) % 5, "column": "Obj"}) + "\n"
                for n, i in enumerate(ids)
            )
        )
    (root / "mapping.json").write_text(json.dumps({i: 3 for i in ids}))
    (root / "pairs.jsonl").write_text(
        "".join(
            json.dumps({"id": f"p{n}", "image": f"images/synth-{n:05d}.png", "caption": "A cat."})
            + "\n"
            for n in range(3)
        )
    )
    shutil.copytree(root / "gavel" / "images", root / "images")
    training = [
        {**json.loads(line), "split": "train"} for line in data["gavel"].read_text().splitlines()
    ]
    (root / "gavel" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in training))
    return root


def _ok(*args: Any) -> None:
    try:
        main([str(a) for a in args])
    except SystemExit as done:
        assert not done.code, f"setting up {args}: exit {done.code}"


# --- damage -------------------------------------------------------------------------------


def _placeholder(kind: str) -> str:
    return f"@@{kind}@@"


_RAW = {"deep": DEEP, "huge": HUGE, "surrogate": SURROGATE, "object": "{}"}


def _dumps(value: Any, indent: int | None = None) -> str:
    text = json.dumps(value, indent=indent)
    for kind, raw in _RAW.items():
        text = text.replace(json.dumps(_placeholder(kind)), raw)
    return text


#: Damage to one field of a record: (name, must the command fail?, applies to the value?).
FIELD_DAMAGE: list[tuple[str, bool, Callable[[Any], bool]]] = [
    ("surrogate", True, lambda v: isinstance(v, str)),
    ("deep", True, lambda v: True),
    ("huge", False, lambda v: True),
    ("object", False, lambda v: not isinstance(v, dict)),
]


def damaged_records(record: dict[str, Any]) -> list[tuple[str, bool, dict[str, Any]]]:
    """Every field damaged every way it can be, a field removed, and extra fields added."""
    cases = []
    for key, value in record.items():
        for kind, must_fail, applies in FIELD_DAMAGE:
            if applies(value):
                cases.append((f"{key}={kind}", must_fail, {**record, key: _placeholder(kind)}))
        cases.append((f"{key} removed", False, {k: v for k, v in record.items() if k != key}))
    for kind in ("deep", "surrogate"):
        cases.append((f"extra field {kind}", True, {**record, "zz_extra": _placeholder(kind)}))
    return cases


def jsonl_damage(good: bytes) -> list[tuple[str, bool, bytes]]:
    """Whole-file damage, then each damaged first record with the rest of the file kept."""
    lines = good.splitlines(keepends=True)
    cases: list[tuple[str, bool, bytes]] = [
        *PLACES,
        ("empty file", True, b""),
        ("blank lines only", True, b"\n  \n\t\n"),
        ("binary bytes", True, b"\xff\xfe\x00\x81garbage\n" + good),
        ("a list line", True, b"[1, 2]\n" + good),
        ("a number line", True, b"42\n" + good),
        ("a string line", True, b'"text"\n' + good),
        ("a cut-off line", True, lines[0][: len(lines[0]) // 2] + b"\n" + good),
        ("NaN", False, lines[0].replace(b":", b': NaN, "zz_nan":', 1)),
        ("duplicate line", True, good + lines[0]),
    ]
    record = json.loads(lines[0])
    for name, must_fail, damaged in damaged_records(record) + named_damage(record):
        cases.append((name, must_fail, (_dumps(damaged) + "\n").encode() + b"".join(lines[1:])))
    return cases


def named_damage(record: dict[str, Any]) -> list[tuple[str, bool, dict[str, Any]]]:
    """Values of the right type that no real file has, for the fields that have them."""
    cases = []
    for key in ("sent_size", "input_size"):
        if key in record:
            cases.append((f"{key} [0, 0]", True, {**record, key: [0, 0]}))
    if "box_format" in record:
        cases.append(("unknown box_format", True, {**record, "box_format": "furlongs"}))
    for key in ("width", "height"):
        if key in record:
            cases.append((f"{key} 10^30", True, {**record, key: 10**30}))
    if record.get("boxes"):
        huge = [[-1e308, -1e308, 1e308, 1e308]]
        cases.append(("boxes of +-1e308", False, {**record, "boxes": huge}))
    return cases


def document_damage(good: bytes) -> list[tuple[str, bool, bytes]]:
    """Damage to a whole-JSON file: its top object (or its first element) field by field."""
    document = json.loads(good)
    cases: list[tuple[str, bool, bytes]] = [
        *PLACES,
        ("empty file", True, b""),
        ("binary bytes", True, b"\xff\xfe\x00\x81"),
        ("a list", True, b"[1, 2]"),
        ("a cut-off document", True, good[: len(good) // 2]),
        ("deep", True, DEEP.encode()),
    ]
    if isinstance(document, list):
        for name, must_fail, damaged in damaged_records(document[0]):
            cases.append((name, must_fail, _dumps([damaged, *document[1:]]).encode()))
    else:
        for name, must_fail, damaged in damaged_records(document):
            cases.append((name, must_fail, _dumps(damaged, indent=2).encode()))
    return cases


# --- the commands -------------------------------------------------------------------------


@dataclass
class Target:
    """A command and the one file of its inputs that gets damaged."""

    name: str
    file: str  # relative to the world
    layout: str  # "jsonl" or "document"
    args: Callable[[Path, Path], list[Any]]  # (world copy, damaged file) -> arguments
    #: Damage a command may accept (fields it does not read), by case name.
    may_pass: tuple[str, ...] = ()


#: An empty predictions file is a run in which every sample is missing (counted, scored as
#: wrong), an empty scores file a run with no sample to show, an empty pairs file nothing to
#: import: honest results, not errors.
NO_ANSWERS = ("empty file", "blank lines only", "/dev/null")
#: VideoHallucer data is a folder of category files: one that is not a file is a category the
#: run does not have (its answers are counted as unknown ids). Likewise a run folder without
#: a per-sample file is a run without gallery cards (docs/report.md).
ONE_ABSENT = ("/dev/null", "a folder")
#: Per-sample score lines keep the prediction's box_format and boxes; compare and report do not
#: read them.
SCORE_FIELDS = ("unknown box_format", "boxes of +-1e308")


def _score(benchmark: str, data: str, predictions: str) -> Callable[[Path, Path], list[Any]]:
    return lambda w, _: ["score", "--benchmark", benchmark, "--data", w / data,
                         "--predictions", w / predictions, "--bootstrap", "0",
                         "--out", w / "out" / "results.json"]  # fmt: skip


TARGETS = [
    Target("data validate", "gavel/gavel.jsonl", "jsonl", lambda w, f: ["data", "validate", f]),
    Target("data stats", "gavel/gavel.jsonl", "jsonl", lambda w, f: ["data", "stats", f]),
    Target("score gavel (data)", "gavel/gavel.jsonl", "jsonl",
           _score("gavel", "gavel/gavel.jsonl", "gavel.pred.jsonl")),
    Target("score gavel (predictions)", "gavel.pred.jsonl", "jsonl",
           _score("gavel", "gavel/gavel.jsonl", "gavel.pred.jsonl"), NO_ANSWERS),
    Target("score detailverify (data)", "detailverify/real_test.jsonl", "jsonl",
           _score("detailverify", "detailverify/real_test.jsonl", "detailverify.pred.jsonl")),
    Target("score detailverify (predictions)", "detailverify.pred.jsonl", "jsonl",
           _score("detailverify", "detailverify/real_test.jsonl", "detailverify.pred.jsonl"),
           NO_ANSWERS),
    Target("score videohallucer (data)", "videohallucer/temporal/temporal.json", "document",
           _score("videohallucer", "videohallucer", "videohallucer.pred.jsonl"), ONE_ABSENT),
    Target("score videohallucer (predictions)", "videohallucer.pred.jsonl", "jsonl",
           _score("videohallucer", "videohallucer", "videohallucer.pred.jsonl"), NO_ANSWERS),
    Target("generate replay", "gavel.pred.jsonl", "jsonl",
           lambda w, f: ["generate", "--data", w / "gavel/gavel.jsonl", "--model", f"replay:{f}",
                         "--out", w / "replayed.jsonl"], NO_ANSWERS),
    Target("generate scene", "gavel/gavel.jsonl", "jsonl",
           lambda w, f: ["generate", "--data", f, "--model", "scene", "--out", w / "g.jsonl"]),
    Target("compare (results)", "run-gavel/results.json", "document",
           lambda w, f: ["compare", f, w / "run-gavel/results.json", "--bootstrap", "100"]),
    Target("compare (scores)", "run-gavel/results.scores.jsonl", "jsonl",
           lambda w, f: ["compare", w / "run-gavel/results.json", w / "run-gavel/results.json",
                         "--bootstrap", "100"], SCORE_FIELDS),
    Target("report (results)", "run-detailverify/results.json", "document",
           lambda w, f: ["report", f, "--out", w / "report"]),
    Target("report (scores)", "run-gavel/results.scores.jsonl", "jsonl",
           lambda w, f: ["report", w / "run-gavel", "--out", w / "report"],
           (*NO_ANSWERS, *SCORE_FIELDS, "a folder")),
    Target("judge-agreement (records)", "judge-a.jsonl", "jsonl",
           lambda w, f: ["judge-agreement", f, w / "judge-b.jsonl"]),
    Target("judge-agreement (mapping)", "mapping.json", "document",
           lambda w, f: ["judge-agreement", f, w / "judge-b.jsonl"]),
    Target("annotate init", "pairs.jsonl", "jsonl",
           lambda w, f: ["annotate", "init", "--db", w / "project.sqlite", "--import", f,
                         "--images", w / "images"], NO_ANSWERS),
]  # fmt: skip


def _cases():
    return [pytest.param(t, id=t.name) for t in TARGETS]


def _match_companions(world: Path, damaged: Path) -> None:
    """A damaged per-sample file gets its results.json's SHA-256 updated, so the reader's own
    checks are what is tested (the mismatch refusal has tests of its own)."""
    if not damaged.name.endswith(".scores.jsonl"):
        return
    import hashlib

    results = damaged.with_name(damaged.name[: -len(".scores.jsonl")] + ".json")
    document = json.loads(results.read_text())
    document["files"][damaged.name] = hashlib.sha256(damaged.read_bytes()).hexdigest()
    results.write_text(json.dumps(document))


def _companion(damaged: Path) -> Path | None:
    if not damaged.name.endswith(".scores.jsonl"):
        return None
    return damaged.with_name(damaged.name[: -len(".scores.jsonl")] + ".json")


def _match_companions(damaged: Path) -> None:
    """A damaged per-sample file gets its results.json's SHA-256 updated, so the reader's own
    checks are what is tested (the mismatch refusal has tests of its own)."""
    import hashlib

    results = _companion(damaged)
    if results is None or not damaged.is_file():
        return
    document = json.loads(results.read_text())
    document["files"][damaged.name] = hashlib.sha256(damaged.read_bytes()).hexdigest()
    results.write_text(json.dumps(document))


def _put(path: Path, payload: bytes) -> None:
    """The file's content, or in its place a link to /dev/null or a folder."""
    if path.is_symlink() or path.is_dir():
        _remove(path)
    if payload == DEV_NULL:
        path.unlink(missing_ok=True)
        path.symlink_to(os.devnull)
    elif payload == FOLDER:
        path.unlink(missing_ok=True)
        path.mkdir()
    else:
        path.write_bytes(payload)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


@pytest.mark.parametrize("target", _cases())
def test_every_malformed_input_ends_in_one_clean_message(target, world, gavel_main):
    """The damage is applied in place and undone after each case, and whatever the command
    wrote is removed, so every case starts from the same files."""
    damaged = world / target.file
    originals = {damaged: damaged.read_bytes()}
    if (results := _companion(damaged)) is not None:
        originals[results] = results.read_bytes()
    present = set(world.iterdir())
    damage = (jsonl_damage if target.layout == "jsonl" else document_damage)(originals[damaged])
    failures = []
    try:
        for case, must_fail, payload in damage:
            _put(damaged, payload)
            _match_companions(damaged)
            ran = gavel_main(*target.args(world, damaged))
            try:
                assert_clean(ran, must_fail=must_fail and case not in target.may_pass, case=case)
            except AssertionError as error:
                failures.append(str(error).splitlines()[0][:300])
            for path, content in originals.items():
                _put(path, content)
            for path in set(world.iterdir()) - present:
                _remove(path)
    finally:
        for path, content in originals.items():
            _put(path, content)
    assert not failures, f"{target.name}:\n" + "\n".join(failures)


#: Every command that writes, with the option naming what it writes.
WRITERS: list[tuple[str, Callable[[Path, Path], list[Any]]]] = [
    ("synth", lambda w, o: ["synth", "--n", "1", "--out", o]),
    ("generate", lambda w, o: ["generate", "--data", w / "gavel/gavel.jsonl", "--model",
                               "scene", "--out", o]),
    ("score", lambda w, o: [*_score("gavel", "gavel/gavel.jsonl", "gavel.pred.jsonl")(w, o)[:-1],
                            o]),
    ("report", lambda w, o: ["report", w / "run-gavel", "--out", o]),
    ("judge-agreement --out", lambda w, o: ["judge-agreement", w / "judge-a.jsonl",
                                            w / "judge-b.jsonl", "--out", o]),
    ("judge-agreement --plot", lambda w, o: ["judge-agreement", w / "judge-a.jsonl",
                                             w / "judge-b.jsonl", "--plot", o]),
    ("data split", lambda w, o: ["data", "split", w / "gavel/train.jsonl", "--out-dir", o]),
    ("annotate init", lambda w, o: ["annotate", "init", "--db", o, "--import",
                                    w / "pairs.jsonl", "--images", w / "images"]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "args"), WRITERS, ids=[n for n, _ in WRITERS])
def test_every_output_that_cannot_be_written_is_named(name, args, world, tmp_path, gavel_main):
    """--out that is a folder (where a file goes), a file (where a folder goes), or lies
    under a file."""
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "keep").write_text("x")
    (tmp_path / "file").write_text("x")
    folder_outputs = ("synth", "report", "data split")
    wrong = tmp_path / ("file" if name in folder_outputs else "folder")
    for out in (wrong, tmp_path / "file" / "below" / "x.json"):
        ran = gavel_main(*args(world, out))
        assert_clean(ran, must_fail=True, case=f"{name} {out}")
        assert "error:" in ran.err.lower() and (str(out) in ran.err or str(out.parent) in ran.err
                                        or str(tmp_path / "file") in ran.err), ran.err  # fmt: skip
    assert (tmp_path / "file").read_text() == "x"
    assert [p.name for p in (tmp_path / "folder").iterdir()] == ["keep"]
