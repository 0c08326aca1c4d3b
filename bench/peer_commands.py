"""The harnesses ``bench/peers.py`` compares, each run as its user would type it: gavel, inspect_ai
(gavel's tasks through its entry point, its ``openai`` provider) and lmms-eval (its ``openai``
model on the task ``gavel export lmms-eval`` writes).

Each names its concurrency knob and that knob's default, read from the installed package where
it can be (so the printed table follows the versions installed), and builds one run's command
line and environment. A harness that is not installed is found as a reason to skip it.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from peer_data import Job

REPO = Path(__file__).resolve().parents[1]
#: Where tests/integrations/test_lmms_eval_task.py installs lmms-eval (pytest's cache folder).
LMMS_EVAL_SITE = REPO / ".pytest_cache" / "d" / "lmms-eval-0.7.3" / "site"
MODEL = "bench-model"  # the one model the lean server lists


@dataclass(frozen=True)
class Run:
    """One run's command line and what it adds to the environment."""

    argv: list[str]
    env: dict[str, str]


class Gavel:
    name = "gavel"

    def __init__(self) -> None:
        from gavel.runner.defaults import REMOTE_CONCURRENCY
        from gavel.version import __version__

        self.version = __version__
        self.knob = "--concurrency"
        self.default = f"{REMOTE_CONCURRENCY} (openai: models)"

    def prepare(self, job: Job, folder: Path) -> None:
        """Nothing to prepare: gavel reads the data as it is."""

    def run(self, job: Job, url: str, concurrency: int, out: Path) -> Run:
        argv = [sys.executable, "-m", "gavel", "run", "--benchmark", job.benchmark,
                "--data", str(job.data), "--model", f"openai:{MODEL}", "--base-url", url,
                "--concurrency", str(concurrency), "--out", str(out), "--no-cache",
                "--no-progress", "--bootstrap", "0"]  # fmt: skip
        if job.benchmark == "videohallucer":
            argv += ["--frames", str(job.images_per_request)]
        return Run(argv, {})


class Inspect:
    name = "inspect"

    def __init__(self, log_images: bool = True) -> None:
        self.log_images = log_images
        self.version = importlib.metadata.version("inspect_ai")
        self.knob = "--max-connections"
        self.default = _inspect_default()

    def prepare(self, job: Job, folder: Path) -> None:
        """Nothing to prepare: the task reads the data through gavel."""

    def run(self, job: Job, url: str, concurrency: int, out: Path) -> Run:
        argv = [sys.executable, "-m", "inspect_ai", "eval", f"gavel/{job.benchmark}",
                "-T", f"data={job.data}", "--model", f"openai/{MODEL}",
                "-M", "responses_api=false", "--max-connections", str(concurrency),
                "--log-dir", str(out), "--display", "none"]  # fmt: skip
        if job.benchmark == "gavel":
            argv += ["-T", "judge=none"]  # as gavel run without --judge
        else:
            argv += ["-T", f"frames={job.images_per_request}"]
        if not self.log_images:
            argv.append("--no-log-images")
        return Run(argv, {"OPENAI_BASE_URL": url})


def _inspect_default() -> str:
    """inspect's default: adaptive connections (since 0.3.2xx), else a fixed number."""
    try:
        from inspect_ai._util.constants import DEFAULT_MAX_CONNECTIONS
        from inspect_ai.util._concurrency import AdaptiveConcurrency
    except ImportError:
        return "see inspect eval --help"
    adaptive = AdaptiveConcurrency()
    return (
        f"adaptive {adaptive.min}-{adaptive.max} from {adaptive.start}; "
        f"{DEFAULT_MAX_CONNECTIONS} if off"
    )


class LmmsEval:
    name = "lmms-eval"

    def __init__(self, site: Path | None) -> None:
        self.site = site  # None: importable as installed
        self.version = _lmms_eval_version(site)
        self.knob = "--model_args num_concurrent=N"
        self.default = _lmms_eval_default(site)
        self.tasks: dict[str, Path] = {}

    def prepare(self, job: Job, folder: Path) -> None:
        """``gavel export lmms-eval``, once per job (a user exports once, then runs)."""
        out = folder / "lmms-tasks" / job.name
        argv = [sys.executable, "-m", "gavel", "export", "lmms-eval", str(out),
                "--benchmark", job.benchmark, "--data", str(job.data)]  # fmt: skip
        if job.benchmark == "videohallucer":
            argv += ["--frames", str(job.images_per_request)]
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"gavel export lmms-eval failed: {done.stderr.strip()[-2000:]}")
        self.tasks[job.name] = out

    def run(self, job: Job, url: str, concurrency: int, out: Path) -> Run:
        argv = [sys.executable, "-m", "lmms_eval", "--model", "openai", "--model_args",
                f"model={MODEL},num_concurrent={concurrency}",
                "--include_path", str(self.tasks[job.name]), "--tasks", f"gavel_{job.benchmark}",
                "--output_path", str(out), "--log_samples", "--verbosity", "WARNING"]  # fmt: skip
        env = {"OPENAI_API_BASE": url}
        if self.site is not None:
            env["PYTHONPATH"] = os.pathsep.join(
                [str(self.site), *filter(None, [os.environ.get("PYTHONPATH")])]
            )
        return Run(argv, env)


def _lmms_eval_source(site: Path | None) -> Path | None:
    if site is not None:
        return site / "lmms_eval"
    spec = importlib.util.find_spec("lmms_eval")
    return Path(spec.origin).parent if spec and spec.origin else None


def _lmms_eval_version(site: Path | None) -> str:
    if site is None:
        return importlib.metadata.version("lmms_eval")
    found = list(importlib.metadata.distributions(path=[str(site)], name="lmms_eval"))
    return found[0].version if found else "?"


def _lmms_eval_default(site: Path | None) -> str:
    """``num_concurrent``'s default, read from the ``openai`` model's source (importing
    lmms-eval's models here would cost seconds and import what its environment has)."""
    source = _lmms_eval_source(site)
    path = source / "models" / "simple" / "openai.py" if source else None
    if path is None or not path.is_file():
        return "?"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            named = node.args.args[-len(node.args.defaults) :] if node.args.defaults else []
            found = {a.arg: ast.literal_eval(v) for a, v in zip(named, node.args.defaults, strict=True)
                     if isinstance(v, ast.Constant)}  # fmt: skip
            if "num_concurrent" in found:
                return (
                    f"{found['num_concurrent']} (adaptive_concurrency="
                    f"{found.get('adaptive_concurrency')})"
                )
    return "?"


Peer = Gavel | Inspect | LmmsEval


def find_peers(
    names: list[str], lmms_eval_path: Path | None, inspect_log_images: bool = True
) -> list[Peer]:
    """The harnesses asked for that are installed; one line for each one skipped."""
    found: list[Peer] = []
    for name in names:
        if name == "gavel":
            found.append(Gavel())
        elif name == "inspect":
            reason = _inspect_missing()
            if reason:
                print(f"skipping inspect: {reason}")
            else:
                found.append(Inspect(inspect_log_images))
        elif name == "lmms-eval":
            site, reason = _lmms_eval_site(lmms_eval_path)
            if reason:
                print(f"skipping lmms-eval: {reason}")
            else:
                found.append(LmmsEval(site))
    return found


def _inspect_missing() -> str | None:
    if importlib.util.find_spec("inspect_ai") is None:
        return "inspect_ai is not installed (pip install 'gavel-eval[inspect]')"
    names = {entry.name for entry in importlib.metadata.entry_points(group="inspect_ai")}
    if "gavel" not in names:
        return "inspect_ai does not find gavel's tasks (gavel-eval is not installed as a package)"
    return None


def _lmms_eval_site(given: Path | None) -> tuple[Path | None, str | None]:
    """The folder holding lmms-eval (--lmms-eval-path, else the tests' install), or None for
    an lmms-eval importable as installed; else the reason to skip it."""
    if given is not None:
        if (given / "lmms_eval").is_dir():
            return given, None
        return None, f"no lmms_eval package in {given} (--lmms-eval-path)"
    if (LMMS_EVAL_SITE / "lmms_eval").is_dir():
        return LMMS_EVAL_SITE, None
    if importlib.util.find_spec("lmms_eval") is not None:
        return None, None
    return None, (
        "not installed (pip install lmms-eval in this environment, give --lmms-eval-path, or "
        "run tests/integrations/test_lmms_eval_task.py once, which installs it in pytest's cache)"
    )
