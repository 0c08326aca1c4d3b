"""Multi-process training with the shipped accelerate configs.

DDP is exercised for real: ``accelerate launch`` with examples/train/ddp.yaml starts two CPU
processes (gloo) on the tiny model, which train, checkpoint, stop, and resume as two processes.
FSDP needs GPUs (accelerate turns FSDP off on CPUs), so for examples/train/fsdp.yaml the check is
the closest one possible here: accelerate's launcher reads the file into the FSDP2 settings it
hands to every process.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="training needs torch (gavel-eval[train])")
pytest.importorskip("accelerate", reason="multi-process training needs accelerate")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "train"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _launch(config: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(config),
        "--num_processes", "2", "--mixed_precision", "no",
        "--main_process_ip", "127.0.0.1", "--main_process_port", str(_free_port()),
        "-m", "gavel", "train", "sft", "--cpu", "--no-progress", *arguments,
    ]  # fmt: skip
    env = os.environ | {"OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


def test_two_process_ddp_run_trains_checkpoints_and_resumes(tmp_path, qwen_dir, mixed_data):
    out = tmp_path / "ddp"
    arguments = [
        "--data", str(mixed_data), "--base-model", str(qwen_dir), "--out", str(out),
        "--max-steps", "4", "--batch-size", "2", "--grad-accum", "2", "--lr", "1e-2",
        "--save-every", "2",
    ]  # fmt: skip
    first = _launch(EXAMPLES / "ddp.yaml", *arguments, "--stop-after", "2")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "stopped at step 2/4" in first.stderr
    checkpoint = out / "checkpoints" / "step-00000002"
    assert (checkpoint / "random_states_0.pkl").is_file()
    assert (checkpoint / "random_states_1.pkl").is_file()  # one RNG state per process

    second = _launch(EXAMPLES / "ddp.yaml", *arguments)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "trained 4/4 steps" in second.stderr
    info = json.loads((out / "gavel_train.json").read_text())
    assert info["processes"] == 2 and info["distributed_type"] == "MULTI_CPU"
    # 32 samples, 2 per process per pass, 2 passes per step: 4 steps per epoch.
    assert info["steps_per_epoch"] == 4 and info["steps"] == 4
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [entry["step"] for entry in log] == [1, 2, 3, 4]
    assert all(entry["samples"] == 8 for entry in log)  # 2 x 2 x 2 processes
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()


def test_launcher_reads_the_fsdp_config_as_fsdp2():
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils.launch import prepare_multi_gpu_env

    parser = launch_command_parser()
    args = parser.parse_args(
        ["--config_file", str(EXAMPLES / "fsdp.yaml"), "-m", "gavel", "train", "sft"]
    )
    args, _, _ = _validate_launch_command(args)
    env = prepare_multi_gpu_env(args)
    assert args.use_fsdp and args.num_processes == 8
    assert env["ACCELERATE_USE_FSDP"] == "true" and env["FSDP_VERSION"] == "2"
    assert env["FSDP_AUTO_WRAP_POLICY"] == "TRANSFORMER_BASED_WRAP"
    assert env["FSDP_STATE_DICT_TYPE"] == "SHARDED_STATE_DICT"
    assert env["ACCELERATE_MIXED_PRECISION"] == "bf16"
