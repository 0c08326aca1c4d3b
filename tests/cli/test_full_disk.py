"""A disk that fills up mid-run and a folder that cannot be written, for real: a small tmpfs of
the test's own (filled to the byte with a filler file, freed by removing it), a folder
mode 0555 written by a process without the right to override file permissions, and a
read-only remount. Each ends in one message naming a file (or its folder), exit status 2,
everything written before kept and readable, and a rerun once there is room again that asks
only what is missing."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gavel.examples import example_dir
from gavel.io.predictions import PredictionReader
from gavel.runner.local import repair_tail

PHOTOS = example_dir("photos")
LEAKS = ("Traceback", "Unclosed", "ResourceWarning", "database:")
#: Bytes left free when a run starts: none (the first write fails), a page, a few pages.
LEFT = (0, 4096, 12288)


class Disk:
    """A tmpfs mounted at ``root`` (``size`` bytes)."""

    def __init__(self, root: Path):
        self.root = root
        self.filler = root / "filler"

    def free_bytes(self) -> int:
        stat = os.statvfs(self.root)
        return stat.f_bavail * stat.f_frsize

    def fill(self, leave: int) -> None:
        """Take all the free space but ``leave`` bytes."""
        self.free()
        with self.filler.open("wb") as handle:
            handle.write(bytes(max(self.free_bytes() - leave, 0)))
        assert self.free_bytes() <= leave

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)

    def remount(self, option: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{option}", str(self.root)], check=True)

    def files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(self.root.iterdir())
                if p.is_file() and p != self.filler}  # fmt: skip


@pytest.fixture
def disk(tmp_path):
    """A 2 MiB file system of the test's own; skips where none can be mounted (not root, or
    a sandbox that forbids it): the file-size limit tests in test_failures.py run anywhere."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    root = tmp_path / "disk"
    root.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", str(root)],
                             capture_output=True, text=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    yield Disk(root)
    subprocess.run(["umount", "-l", str(root)], check=False)


def no_permission_override() -> None:
    """In the child, before it runs gavel: give up the capabilities that let root write into
    a folder it may not write (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH). They leave at exec, so
    the folder's mode is what the kernel checks, as for any user."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


@pytest.fixture
def unprivileged() -> None:
    """Skips where root cannot give up its permission override (a sandbox without
    CAP_SETPCAP): the folder's mode would then not be what refuses the write."""
    if os.geteuid() != 0:
        return
    try:
        subprocess.run(
            [sys.executable, "-c", "pass"], check=True, preexec_fn=no_permission_override
        )
    except (subprocess.SubprocessError, OSError) as error:
        pytest.skip(f"cannot drop CAP_DAC_OVERRIDE here: {error}")


def gavel_process(*args, unprivileged: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m gavel ARGS``; ``unprivileged``: without root's permission override."""
    command = [sys.executable, "-W", "always::ResourceWarning", "-m", "gavel", *map(str, args)]
    drop = no_permission_override if unprivileged and os.geteuid() == 0 else None
    return subprocess.run(command, capture_output=True, text=True, timeout=120, preexec_fn=drop)


def one_message(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a failed command prints; it must name no temporary file."""
    assert done.returncode == 2, done.stderr
    assert not any(word in done.stderr for word in LEAKS), done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and ".tmp" not in lines[0], done.stderr
    return lines[0]


def answered_ids(path: Path) -> list[str]:
    """The ids of a predictions file as the next run reads it (a torn last line repaired);
    every complete line must read."""
    repair_tail(path)
    return [prediction.id for prediction in PredictionReader(path)]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> Path:
    """40 samples: their answers take about 35 KB, several pages of the small disk."""
    folder = tmp_path_factory.mktemp("set")
    done = subprocess.run([sys.executable, "-m", "gavel", "synth", "--n", "40", "--out", folder],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return folder / "gavel.jsonl"


def generating(url: str, data: Path, out: Path, *extra) -> list:
    return ["generate", "--data", data, "--model", "openai:m", "--base-url", url,
            "--api-key-env", "GAVEL_TEST_KEY", "--no-cache", "--no-progress", "--out", out,
            *extra]  # fmt: skip


@pytest.mark.parametrize("leave", LEFT)
def test_a_disk_full_mid_generation_keeps_every_line_and_the_rerun_asks_the_rest(
    disk, server, api_key, synthetic, leave
):
    samples = len(synthetic.read_text().splitlines())
    out = disk.root / "pred.jsonl"
    disk.fill(leave)
    full = gavel_process(*generating(server.url, synthetic, out, "--concurrency", "4"))
    assert one_message(full) == f"error: {out}: the disk is full (No space left on device)"
    kept = answered_ids(out)
    assert len(kept) == len(set(kept)) < samples
    disk.free()
    hits = server.hits
    again = gavel_process(*generating(server.url, synthetic, out))
    assert again.returncode == 0, again.stderr
    assert server.hits - hits == samples - len(kept)  # only the missing samples were asked
    final = answered_ids(out)
    assert set(kept) <= set(final) and len(final) == len(set(final)) == samples


def refuse_every_fourth(fake):
    return lambda body, number: (
        fake.Fault(status=400, message="rejected") if number % 4 == 0 else None
    )


def test_a_disk_full_while_failed_samples_are_taken_out_changes_nothing(
    disk, server, fake, api_key, synthetic
):
    """A rerun first rewrites the file without its error lines (a copy, renamed over it): on a
    full disk the copy fails, and the file stays as it was."""
    out = disk.root / "pred.jsonl"
    server.plan = refuse_every_fourth(fake)
    first = gavel_process(*generating(server.url, synthetic, out, "--concurrency", "1"))
    assert first.returncode == 2 and "samples failed" in first.stderr, first.stderr
    failed = sum('"error":' in line for line in out.read_text().splitlines())
    assert failed > 0
    server.plan = None
    before = disk.files()
    disk.fill(0)
    hits = server.hits
    full = gavel_process(*generating(server.url, synthetic, out))
    assert one_message(full).startswith(f"error: {out}: the disk is full")
    assert disk.files() == before and server.hits == hits
    disk.free()
    again = gavel_process(*generating(server.url, synthetic, out))
    assert again.returncode == 0, again.stderr
    assert server.hits - hits == failed
    assert '"error":' not in out.read_text()


def test_a_full_disk_under_the_answer_cache_loses_no_answer(
    disk, server, api_key, synthetic, tmp_path
):
    """The cache only saves requests: one that cannot be opened stops the run before anything
    is sent; one whose disk fills up during the run is said once and left, and every answer
    still reaches the predictions file (on another disk)."""
    samples = len(synthetic.read_text().splitlines())
    out, cache = tmp_path / "pred.jsonl", disk.root / "answers.sqlite"
    command = ["generate", "--data", synthetic, "--model", "openai:m", "--base-url", server.url,
               "--api-key-env", "GAVEL_TEST_KEY", "--cache", cache, "--no-progress",
               "--out", out]  # fmt: skip
    disk.fill(0)
    refused = gavel_process(*command)
    assert one_message(refused).startswith(
        f"error: {cache}: the answer cache cannot be opened: the disk is full"
    )
    assert server.hits == 0 and not out.exists()
    disk.fill(65536)  # room to open it (its WAL index takes 32 KiB), not for 40 answers
    done = gavel_process(*command)
    assert done.returncode == 0, done.stderr
    assert (
        f"{cache}: the answer cache failed while storing answers: the disk is full" in done.stderr
    )
    assert done.stderr.count("the answer cache failed") == 1 and "Traceback" not in done.stderr
    assert server.hits == samples and len(set(answered_ids(out))) == samples


def scoring(predictions: Path, out: Path, *extra) -> list:
    return ["score", "--data", PHOTOS / "gavel.jsonl", "--predictions", predictions,
            "--out", out, "--bootstrap", "0", *extra]  # fmt: skip


@pytest.mark.parametrize("leave", LEFT)
def test_a_disk_full_while_scoring_leaves_the_old_results_pair(disk, leave):
    out = disk.root / "results.json"
    first = gavel_process(*scoring(PHOTOS / "predictions" / "gpt.jsonl", out))
    assert first.returncode == 0, first.stderr
    before = disk.files()
    assert set(before) == {"results.json", "results.scores.jsonl"}
    disk.fill(leave)
    full = gavel_process(*scoring(PHOTOS / "predictions" / "qwen3-vl.jsonl", out))
    assert "the disk is full" in one_message(full)
    assert disk.files() == before  # both old files, byte for byte, and nothing beside them
    disk.free()
    again = gavel_process(*scoring(PHOTOS / "predictions" / "qwen3-vl.jsonl", out))
    assert again.returncode == 0, again.stderr
    assert json.loads(out.read_text())["manifest"]["predictions_sha256"] != json.loads(
        before["results.json"])["manifest"]["predictions_sha256"]  # fmt: skip


def judging(url: str, out: Path, cache: Path) -> list:
    return [*scoring(PHOTOS / "predictions" / "gpt.jsonl", out), "--judge", "openai:m",
            "--judge-base-url", url, "--judge-api-key-env", "GAVEL_TEST_KEY",
            "--judge-cache", cache, "--judge-concurrency", "1"]  # fmt: skip


def consistent(folder: Path) -> bool:
    """Whether results.json names the SHA-256 of the per-sample scores beside it."""
    import hashlib

    recorded = json.loads((folder / "results.json").read_text())["files"]["results.scores.jsonl"]
    return recorded == hashlib.sha256((folder / "results.scores.jsonl").read_bytes()).hexdigest()


#: Room left for the judge's run: none; enough for the results but not for opening the
#: judge's cache (SQLite's WAL index takes 32 KiB); for the cache, not for its replies; for its
#: replies, not for the results (measured on a tmpfs: other file systems move the edges).
JUDGE_LEFT = (0, 49152, 65536, 81920)


@pytest.mark.parametrize("leave", JUDGE_LEFT)
def test_a_disk_full_under_the_judge_names_its_file_and_the_rerun_finishes(
    disk, server, api_key, tmp_path, leave
):
    server.reply = lambda body, number: '{"score": 4, "reason": "right object"}'
    reference = gavel_process(*judging(server.url, tmp_path / "ref" / "results.json",
                                       tmp_path / "ref.sqlite"))  # fmt: skip
    assert reference.returncode == 0, reference.stderr
    asked = server.hits
    out, cache = disk.root / "results.json", disk.root / "judge.sqlite"
    scored = gavel_process(*scoring(PHOTOS / "predictions" / "gpt.jsonl", out))
    assert scored.returncode == 0, scored.stderr
    pair = {name: data for name, data in disk.files().items() if name.startswith("results")}
    disk.fill(leave)
    hits = server.hits
    full = gavel_process(*judging(server.url, out, cache))
    message = one_message(full)
    assert "the disk is full" in message, message
    named = {str(disk.root / name) for name in ("results.json", "results.scores.jsonl",
                                                "results.judge.jsonl", "judge.sqlite")}  # fmt: skip
    assert any(f" {path}: " in message for path in named), message  # the file, by its name
    if "the judge did not finish" in message:  # its cache could not be opened; results written
        assert consistent(disk.root) and "judge.sqlite" in message
    else:  # the run's files could not be written: the old pair stays
        assert {name: data for name, data in disk.files().items() if name in pair} == pair
    replies = disk.root / "results.judge.jsonl"
    judged = answered_ids(replies) if replies.exists() else []
    disk.free()
    again = gavel_process(*judging(server.url, out, cache))
    assert again.returncode == 0, again.stderr
    assert asked <= server.hits - hits <= asked + 1  # at most the reply in flight asked twice
    assert len(answered_ids(replies)) == asked and set(judged) <= set(answered_ids(replies))
    assert json.loads(out.read_text())["metrics"]["explanation"]["counts"]["ok"] > 0
    assert consistent(disk.root)


@pytest.mark.usefixtures("unprivileged")
def test_a_folder_that_cannot_be_written_is_named_and_left_alone(server, api_key, tmp_path):
    folder = tmp_path / "run"
    out = folder / "pred.jsonl"
    data = PHOTOS / "gavel.jsonl"
    first = gavel_process(*generating(server.url, data, out, "--limit", "6"))
    assert first.returncode == 0, first.stderr
    assert gavel_process(*scoring(out, folder / "results.json")).returncode == 0
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    folder.chmod(0o555)
    try:
        hits = server.hits
        for args in (generating(server.url, data, out),  # asks the 6 not answered yet
                     scoring(PHOTOS / "predictions" / "gpt.jsonl", folder / "results.json")):  # fmt: skip
            refused = gavel_process(*args, unprivileged=True)
            assert one_message(refused) == f"error: {folder}: Permission denied"
        assert server.hits == hits  # nothing was asked that could not be kept
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    finally:
        folder.chmod(0o755)
    again = gavel_process(*generating(server.url, data, out))
    assert again.returncode == 0 and server.hits - hits == 6, again.stderr


def test_a_file_system_mounted_read_only_is_named_and_left_alone(disk, server, api_key):
    out = disk.root / "pred.jsonl"
    data = PHOTOS / "gavel.jsonl"
    assert gavel_process(*generating(server.url, data, out, "--limit", "6")).returncode == 0
    assert gavel_process(*scoring(out, disk.root / "results.json")).returncode == 0
    before = disk.files()
    disk.remount("ro")
    try:
        hits = server.hits
        for args in (generating(server.url, data, out),
                     scoring(PHOTOS / "predictions" / "gpt.jsonl", disk.root / "results.json")):  # fmt: skip
            refused = gavel_process(*args)
            assert one_message(refused) == (
                f"error: {disk.root}: the file system is read-only (Read-only file system)"
            )
        assert server.hits == hits and disk.files() == before
    finally:
        disk.remount("rw")
    again = gavel_process(*generating(server.url, data, out))
    assert again.returncode == 0 and server.hits - hits == 6, again.stderr


def test_a_disk_full_under_the_ray_executor_names_its_file_and_keeps_every_line(disk, synthetic):
    pytest.importorskip("ray", reason="Ray is not installed (pip install ray)")
    out = disk.root / "pred.jsonl"
    disk.fill(4096)
    full = gavel_process("generate", "--data", synthetic, "--model", "scene", "--executor",
                         "ray", "--workers", "1", "--no-progress", "--out", out)  # fmt: skip
    assert one_message(full) == f"error: {out}: the disk is full (No space left on device)"
    kept = answered_ids(out)
    assert len(kept) == len(set(kept)) < len(synthetic.read_text().splitlines())
