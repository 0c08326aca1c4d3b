"""Where a run keeps its state, and how a rerun finds it.

``OUT/checkpoints/step-00000100/`` holds what accelerate saves (model, optimizer, RNG states of
every process, the LR schedule) plus ``trainer_state.json``, written last: a checkpoint without
it was interrupted while saving and is ignored. ``OUT/train_config.json`` holds the settings that
define the run; resuming under different ones would silently mix two experiments, so it is
refused with the differing fields named.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from gavel.errors import ConfigError
from gavel.io.files import atomic_write_bytes

STATE_FILE = "trainer_state.json"
CONFIG_FILE = "train_config.json"
_STEP_DIR = re.compile(r"step-(\d+)")


def checkpoint_dir(out: Path, step: int) -> Path:
    return out / "checkpoints" / f"step-{step:08d}"


def complete_checkpoints(out: Path) -> list[tuple[int, Path]]:
    """(step, folder) of every finished checkpoint, oldest first."""
    root = out / "checkpoints"
    if not root.is_dir():
        return []
    found = []
    for child in root.iterdir():
        match = _STEP_DIR.fullmatch(child.name)
        if match and (child / STATE_FILE).is_file():
            found.append((int(match.group(1)), child))
    return sorted(found)


def latest_checkpoint(out: Path) -> Path | None:
    found = complete_checkpoints(out)
    return found[-1][1] if found else None


def write_json(path: Path, value: Any) -> None:
    atomic_write_bytes(path, (json.dumps(value, indent=2, sort_keys=True) + "\n").encode())


def read_state(checkpoint: Path) -> dict[str, Any]:
    return json.loads((checkpoint / STATE_FILE).read_text(encoding="utf-8"))


def prune(out: Path, keep: int) -> None:
    """Delete all but the ``keep`` newest complete checkpoints (and any unfinished ones older
    than the newest complete one, left by an interrupted save)."""
    found = complete_checkpoints(out)
    for _, folder in found[: max(0, len(found) - keep)]:
        shutil.rmtree(folder, ignore_errors=True)
    if found:
        newest = found[-1][0]
        for child in (out / "checkpoints").iterdir():
            match = _STEP_DIR.fullmatch(child.name)
            if match and int(match.group(1)) < newest and not (child / STATE_FILE).is_file():
                shutil.rmtree(child, ignore_errors=True)


def check_same_run(out: Path, identity: dict[str, Any]) -> None:
    """Refuse to continue a run in ``out`` that was started with other defining settings."""
    path = out / CONFIG_FILE
    if not path.is_file():
        return
    saved = json.loads(path.read_text(encoding="utf-8")).get("identity", {})
    differing = sorted(k for k in set(saved) | set(identity) if saved.get(k) != identity.get(k))
    if differing:
        details = "; ".join(
            f"{k}: {saved.get(k)!r} there, {identity.get(k)!r} now" for k in differing
        )
        raise ConfigError(
            f"{out} holds a run started with other settings ({details}); use another --out, "
            "or --no-resume to start over in it"
        )
