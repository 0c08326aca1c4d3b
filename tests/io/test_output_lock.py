"""One writer per output file: a lock another real process holds refuses this one, naming the
file and that process, and a holder killed with SIGKILL blocks nobody."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading

import pytest

from gavel.io.output_lock import OutputBusy, exclusive, lock_path


def test_a_second_process_is_refused_naming_the_file_and_the_holder(tmp_path, hold_output):
    out = tmp_path / "pred.jsonl"
    out.write_bytes(b'{"id": "a"}\n')
    child = hold_output(out)
    try:
        with pytest.raises(OutputBusy) as refused, exclusive(out):
            pytest.fail("the lock was taken twice")
        message = str(refused.value)
        assert message.startswith(f"{out} is being written by another gavel process")
        assert f"pid {child.pid} on {socket.gethostname()}" in message
        assert out.read_bytes() == b'{"id": "a"}\n'
        held = json.loads(lock_path(out).read_text())  # the holder's record, untouched
        assert held["pid"] == child.pid and held["host"] == socket.gethostname()
    finally:
        child.communicate("")
    assert child.returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pred.jsonl"]  # its lock file removed
    with exclusive(out):  # free again
        assert json.loads(lock_path(out).read_text())["pid"] == os.getpid()


def test_a_holder_killed_with_sigkill_blocks_no_one(tmp_path, hold_output):
    out = tmp_path / "pred.jsonl"
    child = hold_output(out)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert lock_path(out).exists()  # left behind, with the dead holder's pid in it
    with exclusive(out):  # the kernel released its lock: no cleanup needed
        assert json.loads(lock_path(out).read_text())["pid"] == os.getpid()
    assert not lock_path(out).exists()


def test_the_lock_is_reentrant_in_one_process_its_threads_included(tmp_path):
    out = tmp_path / "run" / "results.json"
    seen: list[BaseException | None] = []

    def other_thread() -> None:
        try:
            with exclusive(out):
                seen.append(None)
        except OutputBusy as error:
            seen.append(error)

    with exclusive(out):
        with exclusive(out):  # a run's judge writing under its scoring, a batch's merge
            assert lock_path(out).exists()
        assert lock_path(out).exists()  # still held by the outer block
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join(timeout=30)
    assert seen == [None]  # one process: its threads are one writer
    assert not (tmp_path / "run").exists()  # the folder it made, empty, is gone again


#: Takes the lock of argv[1] argv[2] times (trying again while another holds it), logging
#: its entry and exit into argv[3] each time.
CONTEND = (
    "import os, sys, time\n"
    "from gavel.io.output_lock import OutputBusy, exclusive\n"
    "taken = 0\n"
    "while taken < int(sys.argv[2]):\n"
    "    try:\n"
    "        with exclusive(sys.argv[1]):\n"
    "            with open(sys.argv[3], 'a') as log:\n"
    "                log.write(f'in {os.getpid()}\\n')\n"
    "            time.sleep(0.001)\n"
    "            with open(sys.argv[3], 'a') as log:\n"
    "                log.write(f'out {os.getpid()}\\n')\n"
    "        taken += 1\n"
    "    except OutputBusy:\n"
    "        pass\n"
)


def test_processes_taking_turns_never_hold_it_together(tmp_path):
    """The holder removes its lock file when done: a process that opened that file just
    before must not lock the removed file while another locks the new one."""
    out, log = tmp_path / "pred.jsonl", tmp_path / "log"
    turns = 60
    children = [subprocess.Popen([sys.executable, "-c", CONTEND, str(out), str(turns), str(log)])
                for _ in range(4)]  # fmt: skip
    for child in children:
        assert child.wait(timeout=120) == 0
    entries = log.read_text().splitlines()
    assert len(entries) == 2 * turns * len(children)
    for enter, leave in zip(entries[::2], entries[1::2], strict=True):  # never two inside
        assert enter.startswith("in ") and leave == "out " + enter[3:]
    assert not lock_path(out).exists()


def test_a_folder_that_cannot_be_written_is_named(tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    (folder / "sub").write_text("a file where a folder would go")
    with pytest.raises(OSError) as refused, exclusive(folder / "sub" / "pred.jsonl"):
        pass
    assert refused.value.filename == str(folder / "sub")
