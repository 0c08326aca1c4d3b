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

#: Stand-ins for the file itself: a link to /dev/null, a folder where the file should be, a
#: link to /dev/zero (endless) and a FIFO nobody writes to (reading either never ends), for
#: the readers that must refuse anything but a regular file.
DEV_NULL = b"@@dev-null@@"
FOLDER = b"@@folder@@"
DEV_ZERO = b"@@dev-zero@@"
FIFO = b"@@fifo@@"
PLACES = [("/dev/null", True, DEV_NULL), ("a folder", True, FOLDER)]
ENDLESS = [("/dev/zero", True, DEV_ZERO), ("a FIFO", True, FIFO)]

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
    _newer_inputs(root, data["gavel"])
    training = [
        {**json.loads(line), "split": "train"} for line in data["gavel"].read_text().splitlines()
    ]
    (root / "gavel" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in training))
    return root


def _newer_inputs(root: Path, gavel_data: Path) -> None:
    """A Parquet dataset (with an ``extra`` column), a batch state, and config files."""
    records = [json.loads(line) for line in gavel_data.read_text().splitlines()]
    records[0]["note"] = "kept in the extra column"
    with_extra = gavel_data.with_name("with-extra.jsonl")
    with_extra.write_text("".join(json.dumps(r) + "\n" for r in records))
    _ok("data", "convert", with_extra, root / "pq")
    state = {
        "kind": "generate", "model": "m", "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "GAVEL_TEST_NO_SUCH_KEY", "output": str(root / "pred.jsonl"),
        "parts": [{"name": "part-0001", "round": 1, "count": 3, "sha256": "0" * 64,
                   "file_id": "file-1", "batch_id": "batch-1", "status": "in_progress"}],
    }  # fmt: skip
    (root / "pred.batch").mkdir()
    (root / "pred.batch" / "state.json").write_text(json.dumps(state, indent=2))
    out = root / "configured.jsonl"
    (root / "run.yaml").write_text(
        f"data: {gavel_data}\nmodel: scene\nout: {out}\nno-progress: true\nlimit: 2\n"
        "seed: 3\nsample-id: [synth-00000, synth-00001]\n"
    )
    (root / "run.toml").write_text(
        f'data = "{gavel_data}"\nmodel = "scene"\nout = "{out}"\nno-progress = true\n'
        'limit = 2\nseed = 3\nsample-id = ["synth-00000", "synth-00001"]\n'
    )


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


def config_damage(good: bytes, yaml: bool) -> list[tuple[str, bool, bytes]]:
    """Damage to a config file (YAML or TOML): the file, its syntax and size, each key's value
    of every wrong type, and values no flag takes."""
    text = good.decode()
    lines = text.splitlines(keepends=True)
    assign = ": " if yaml else " = "

    def line(key: str, raw: str) -> bytes:
        return (f"{key}{assign}{raw}\n").encode()

    deep = "[" * 100_000 + "]" * 100_000
    cases: list[tuple[str, bool, bytes]] = [
        *PLACES,
        ("binary bytes", True, b"\xff\xfe\x00\x81garbage\n"),
        ("a cut-off file", True, good[: len(good) // 3]),
        ("deep", True, line("a", deep)),
        ("huge integer", True, line("seed", "7" * 5000)),
        ("NUL in a path", True, line("out", '"a\\u0000b"' if not yaml else '"a\\0b"')),
        ("larger than a config file", True, b"# padding\n" * 200_000),
        ("unknown key", True, good + line("no-such-flag", "1")),
        ("seed -1", True, good.replace(b"seed" + assign.encode() + b"3", b"seed" + assign.encode() + b"-1")),
    ]  # fmt: skip
    if yaml:
        cases += [
            ("lone surrogate", True, line("out", '"\\udfff"')),
            ("a list", True, b"- scene\n"),
            ("alias bomb", True, _alias_bomb()),
        ]
    if yaml:
        import yaml as pyyaml

        values = pyyaml.safe_load(text)
    else:
        import tomllib

        values = tomllib.loads(text)
    for number, original in enumerate(lines):
        key = original.split(assign, 1)[0].strip()
        rest = lines[:number] + lines[number + 1 :]
        cases.append((f"{key} removed", False, "".join(rest).encode()))
        for kind, raw in (("text", '"x"'), ("number", "12.5"), ("list", "[1, 2]"),
                          ("true", "true")):  # fmt: skip
            if kind == "text" and isinstance(values[key], str):
                continue  # other text is no damage (and a relative --out would write here)
            damaged = "".join(rest).encode() + line(key, raw)
            cases.append((f"{key}={kind}", False, damaged))
    return cases


def _alias_bomb() -> bytes:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        name, below = chr(ord("a") + level), chr(ord("a") + level - 1)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{below}"] * 9) + "]")
    return ("\n".join(lines) + "\n").encode()


def parquet_damage(good: bytes) -> list[tuple[str, bool, bytes]]:
    """Damage to a Parquet shard: the file as a whole, then each column of the first row (a
    null, a value of another type, the column removed) and the ``extra`` column's JSON."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(good))

    def written(changed) -> bytes:
        sink = io.BytesIO()
        pq.write_table(changed, sink)
        return sink.getvalue()

    def with_first(name: str, value: Any, kind) -> bytes:
        column = table.column(name).to_pylist()
        column[0] = value
        index = table.schema.get_field_index(name)
        return written(table.set_column(index, name, pa.array(column, kind)))

    cases: list[tuple[str, bool, bytes]] = [
        *PLACES,
        ("empty file", True, b""),
        ("binary bytes", True, b"\xff\xfe\x00\x81garbage"),
        ("a cut-off file", True, good[: len(good) // 2]),
        ("no rows", True, written(table.slice(0, 0))),
    ]
    for name in table.schema.names:
        kind = table.schema.field(name).type
        index = table.schema.get_field_index(name)
        cases.append((f"{name} removed", False, written(table.remove_column(index))))
        if name != "image":
            cases.append((f"{name}=null", False, with_first(name, None, kind)))
        if not pa.types.is_string(kind):
            text = [str(v) for v in table.column(name).to_pylist()]
            cases.append(
                (f"{name}=text", False, written(table.set_column(index, name, pa.array(text))))
            )
    for kind, raw in (("deep", DEEP), ("surrogate", '{"a": "\\udfff"}'), ("huge", HUGE),
                      ("list", "[1]"), ("cut off", '{"a": ')):  # fmt: skip
        cases.append((f"extra {kind}", True, with_first("extra", raw, pa.string())))
    return cases


# --- the commands -------------------------------------------------------------------------


@dataclass
class Target:
    """A command and the one file of its inputs that gets damaged."""

    name: str
    file: str  # relative to the world
    layout: str  # "jsonl", "document", "config-yaml", "config-toml" or "parquet"
    args: Callable[[Path, Path], list[Any]]  # (world copy, damaged file) -> arguments
    #: Damage a command may accept (fields it does not read), by case name.
    may_pass: tuple[str, ...] = ()
    #: Its reader refuses anything but a regular file: /dev/zero and a FIFO are tried too.
    endless: bool = False


#: An empty predictions file is a run in which every sample is missing (counted, scored as
#: wrong), an empty scores file a run with no sample to show, an empty pairs file nothing to
#: import: honest results, not errors.
NO_ANSWERS = ("empty file", "blank lines only", "/dev/null")
#: VideoHallucer data is a folder of category files: one that is not a file is a category the
#: run does not have (its answers are counted as unknown ids). Likewise a run folder without
#: a per-sample file is a run without gallery cards (docs/report.md).
ONE_ABSENT = ("/dev/null", "a folder", "/dev/zero", "a FIFO")
#: The Parquet shard of the converted dataset (with an ``extra`` column).
PARQUET = "pq/data/test-00000-of-00001.parquet"
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
           _score("videohallucer", "videohallucer", "videohallucer.pred.jsonl"), ONE_ABSENT,
           endless=True),
    Target("score videohallucer (predictions)", "videohallucer.pred.jsonl", "jsonl",
           _score("videohallucer", "videohallucer", "videohallucer.pred.jsonl"), NO_ANSWERS),
    Target("generate replay", "gavel.pred.jsonl", "jsonl",
           lambda w, f: ["generate", "--data", w / "gavel/gavel.jsonl", "--model", f"replay:{f}",
                         "--out", w / "replayed.jsonl"], NO_ANSWERS),
    Target("generate scene", "gavel/gavel.jsonl", "jsonl",
           lambda w, f: ["generate", "--data", f, "--model", "scene", "--out", w / "g.jsonl"]),
    Target("compare (results)", "run-gavel/results.json", "document",
           lambda w, f: ["compare", f, w / "run-gavel/results.json", "--bootstrap", "100"],
           endless=True),
    Target("compare (scores)", "run-gavel/results.scores.jsonl", "jsonl",
           lambda w, f: ["compare", w / "run-gavel/results.json", w / "run-gavel/results.json",
                         "--bootstrap", "100"], SCORE_FIELDS),
    Target("report (results)", "run-detailverify/results.json", "document",
           lambda w, f: ["report", f, "--out", w / "report"], endless=True),
    Target("report (scores)", "run-gavel/results.scores.jsonl", "jsonl",
           lambda w, f: ["report", w / "run-gavel", "--out", w / "report"],
           (*NO_ANSWERS, *SCORE_FIELDS, "a folder")),
    Target("judge-agreement (records)", "judge-a.jsonl", "jsonl",
           lambda w, f: ["judge-agreement", f, w / "judge-b.jsonl"], endless=True),
    Target("judge-agreement (mapping)", "mapping.json", "document",
           lambda w, f: ["judge-agreement", f, w / "judge-b.jsonl"], endless=True),
    Target("annotate init", "pairs.jsonl", "jsonl",
           lambda w, f: ["annotate", "init", "--db", w / "project.sqlite", "--import", f,
                         "--images", w / "images"], NO_ANSWERS),
    Target("data validate (endless inputs)", "gavel/gavel.jsonl", "jsonl",
           lambda w, f: ["data", "validate", f], endless=True),
    Target("data convert (JSONL)", "gavel/with-extra.jsonl", "jsonl",
           lambda w, f: ["data", "convert", f, w / "converted"]),
    Target("data convert (Parquet)", PARQUET, "parquet",
           lambda w, f: ["data", "convert", w / "pq", w / "back.jsonl"], ("no rows",)),
    Target("data validate (Parquet)", PARQUET, "parquet",
           lambda w, f: ["data", "validate", w / "pq"]),
    Target("generate (Parquet)", PARQUET, "parquet",
           lambda w, f: ["generate", "--data", w / "pq", "--model", "scene", "--out",
                         w / "pq.pred.jsonl", "--no-progress"]),
    Target("batch status", "pred.batch/state.json", "document",
           lambda w, f: ["batch", "status", w / "pred.jsonl"], ("/dev/null", "a folder"),
           endless=True),
    Target("export lmms-eval", "gavel/gavel.jsonl", "jsonl",
           lambda w, f: ["export", "lmms-eval", "--data", f, w / "lmms"]),
    Target("generate --config (YAML)", "run.yaml", "config-yaml",
           lambda w, f: ["generate", "--config", f], endless=True),
    Target("generate --config (TOML)", "run.toml", "config-toml",
           lambda w, f: ["generate", "--config", f], endless=True),
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
    """The file's content, or in its place a link to /dev/null or /dev/zero, a FIFO or a
    folder."""
    if path.is_symlink() or path.is_dir():
        _remove(path)
    elif path.exists() and not path.is_file():  # a FIFO: writing to it would wait for a reader
        path.unlink()
    if payload in (DEV_NULL, DEV_ZERO):
        path.unlink(missing_ok=True)
        path.symlink_to(os.devnull if payload == DEV_NULL else "/dev/zero")
    elif payload == FIFO:
        path.unlink(missing_ok=True)
        os.mkfifo(path)
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
def test_every_malformed_input_ends_in_one_clean_message(target, world, gavel_main,
                                                         monkeypatch):  # fmt: skip
    """The damage is applied in place and undone after each case, and whatever the command
    wrote is removed, so every case starts from the same files (relative paths are in the
    world too)."""
    monkeypatch.chdir(world)
    damaged = world / target.file
    originals = {damaged: damaged.read_bytes()}
    if (results := _companion(damaged)) is not None:
        originals[results] = results.read_bytes()
    present = set(world.iterdir())
    damage = {
        "jsonl": jsonl_damage,
        "document": document_damage,
        "config-yaml": lambda good: config_damage(good, yaml=True),
        "config-toml": lambda good: config_damage(good, yaml=False),
        "parquet": parquet_damage,
    }[target.layout](originals[damaged])
    if target.endless:
        damage = [*ENDLESS, *damage]
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
