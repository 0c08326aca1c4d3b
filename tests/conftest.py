"""Shared fixtures: real benchmark data when available, the command line as a user runs it,
and real OpenAI-protocol servers on loopback."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

# Bytecode caches stay on even where PYTHONDONTWRITEBYTECODE is set: a run starts some hundreds
# of interpreters (the command line, lmms-eval, inspect, accelerate) and pytest rewrites every
# test module, and without the caches each of them compiles gavel's sources and the tests anew
# (about a fifth of a command's start, a third of the collection). The caches are gitignored.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

#: Real data shipped beside the repository (never copied into it).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


# --- the fast tier and parallel runs (README: Developing) ------------------------------------

#: Test modules in the slow tier, which ``pytest -m "not slow"`` leaves out (every test stays in
#: the default run): the modules whose tests together took 12 s or more in a measured run, and
#: those that drive a browser, a local Ray cluster, llama-server or torch models. Their tests
#: start real servers, browsers, clusters, installs and kill-and-rerun cycles, or train and load
#: models: seconds a test, where most of the suite takes milliseconds.
SLOW_MODULES = frozenset(
    {
        "annotate/test_browser.py",
        "batch/test_judge_batch.py",
        "batch/test_runner.py",
        "benchmarks/videohallucer/test_scoring.py",
        "cli/test_config_file.py",
        "cli/test_demo.py",
        "cli/test_failures.py",
        "cli/test_full_disk.py",
        "cli/test_generate.py",
        "cli/test_generate_hf.py",
        "cli/test_judge_agreement.py",
        "cli/test_malformed_inputs.py",
        "cli/test_report.py",
        "cli/test_score_judge.py",
        "cli/test_synth_generate.py",
        "integrations/test_inspect_log.py",
        "integrations/test_inspect_tasks.py",
        "integrations/test_lmms_eval_task.py",
        "judge/test_calibration.py",
        "models/test_hf.py",
        "models/test_llama_server.py",
        "models/test_real_servers.py",
        "models/test_scene.py",
        "report/test_browser.py",
        "report/test_html.py",
        "transport/test_gate.py",
        "runner/test_generate_cli.py",
        "runner/test_ray_data.py",
        "runner/test_ray_executor.py",
        "runner/test_ray_served.py",
        "sources/test_hub.py",
        "train/test_launch.py",
        "train/test_trainer.py",
    }
)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, which may be absent
def pytest_xdist_auto_num_workers(config) -> int | None:
    """``-n auto``: one worker more than the CPUs this process may use, hyperthreads included
    (xdist would count physical cores only). A third of the suite's time is spent waiting, not
    computing: on rate-limit windows, batch polls, Ray clusters starting and servers answering.
    Measured on 2 cores, idle: 2 workers 8 min 25 s (12.6 min of CPU), 3 workers 6 min 40 s."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist reads it
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cpus or 1) + 1


#: The modules that take longest (wall seconds of a measured run, longest first). With ``-n``
#: they are handed out first (``--no-loadscope-reorder`` keeps this order): a long module
#: started last would leave the other workers idle at the end.
LONGEST_FIRST = (
    "integrations/test_lmms_eval_task.py",
    "transport/test_gate.py",
    "integrations/test_inspect_tasks.py",
    "runner/test_ray_executor.py",
    "batch/test_runner.py",
    "runner/test_ray_served.py",
    "train/test_launch.py",
    "cli/test_malformed_inputs.py",
    "judge/test_calibration.py",
    "cli/test_generate_hf.py",
    "models/test_scene.py",
    "annotate/test_browser.py",
    "api/test_running.py",
    "cli/test_config_file.py",
    "runner/test_generate_cli.py",
    "sources/test_hub.py",
)


def pytest_collection_modifyitems(config, items: list[pytest.Item]) -> None:
    """Marks the tests of :data:`SLOW_MODULES` ``slow``; in an xdist worker, puts the modules
    of :data:`LONGEST_FIRST` first (the same order in every worker, as xdist requires)."""
    root = Path(__file__).resolve().parent
    rank: dict[pytest.Item, int] = {}
    for item in items:
        try:
            relative = item.path.resolve().relative_to(root).as_posix()
        except ValueError:
            continue
        if relative in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
        if relative in LONGEST_FIRST:
            rank[item] = LONGEST_FIRST.index(relative)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: rank.get(item, len(LONGEST_FIRST)))  # stable: else as found


@pytest.fixture(autouse=True, scope="session")
def _private_answer_cache(tmp_path_factory) -> None:
    """Every test (and every command it starts) caches answers in a folder of its own run,
    never in the user's ~/.cache/gavel."""
    os.environ["GAVEL_CACHE_DIR"] = str(tmp_path_factory.mktemp("answer-cache"))


@pytest.fixture
def shared_data() -> Path:
    """The folder of real benchmark data; tests that need it skip with a clear reason if absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real benchmark data not found at ../shared/data (looked in {SHARED_DATA})")
    return SHARED_DATA


class MainRun:
    """What ``gavel ARGS`` did in-process: exit code, stdout, stderr. Unpacks as
    ``code, text`` (text: stdout and stderr together)."""

    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err
        self.text = out + err

    def __iter__(self):
        return iter((self.code, self.text))


def exit_code_of_main(args) -> int:
    """The exit status of the real entry point run in-process on ``args``."""
    from gavel.cli.main import main

    try:
        main([str(a) for a in args])
        return 0
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)


@pytest.fixture
def gavel_main(capsys):
    """Run the real entry point in-process, through the same error handling as the console
    script, so a test sees the message (and exit code) a user would."""

    def run(*args) -> MainRun:
        capsys.readouterr()
        code = exit_code_of_main(args)
        captured = capsys.readouterr()
        return MainRun(code, captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def gavel_shared():
    """:func:`gavel_main` for a set-up that a module's tests share (capsys is per test): the
    output is caught by redirecting sys.stdout and sys.stderr, where click writes."""
    import contextlib
    import io

    def run(*args) -> MainRun:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = exit_code_of_main(args)
        return MainRun(code, out.getvalue(), err.getvalue())

    return run


@pytest.fixture
def gavel():
    """Run the real command line in a subprocess; returns the completed process."""

    def run(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gavel", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=120,
        )

    return run


@pytest.fixture
def counting_video():
    """Writes a real MPEG-4 video whose frame i is a flat grey of level ``step * i``, so a
    decoded frame tells which one it is. Skips when PyAV is missing."""
    av = pytest.importorskip("av", reason="writing a test video needs PyAV")
    import numpy as np

    def write(path: Path, frames: int, *, step: int = 12, fps: int = 8) -> Path:
        with av.open(str(path), "w") as container:
            stream = container.add_stream("mpeg4", rate=fps, options={"qscale": "2"})
            stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
            for i in range(frames):
                image = np.full((48, 64, 3), step * i, dtype=np.uint8)
                for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)
        return path

    return write


# --- real OpenAI-compatible servers on 127.0.0.1 (runner and judge tests) ----------------


def load_fake_server() -> ModuleType:
    """``runner/openai_server.py`` (the tests run in importlib mode: no sys.path)."""
    name = "gavel_tests_openai_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).parent / "runner" / "openai_server.py"
        )
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


@pytest.fixture
def fake() -> ModuleType:
    """The server module: ``fake.Fault``, ``fake.faults_by_marker``, ``fake.FakeOpenAIServer``."""
    return load_fake_server()


@pytest.fixture
def server(fake):
    with fake.FakeOpenAIServer() as running:
        yield running


@pytest.fixture
def second_server(fake):
    with fake.FakeOpenAIServer() as running:
        yield running


@pytest.fixture
def api_key(monkeypatch) -> str:
    """A secret in ``GAVEL_TEST_KEY``; tests check it never leaves the Authorization header."""
    key = "sk-test-5f0c9a7e1b2d4c3a8e6f"
    monkeypatch.setenv("GAVEL_TEST_KEY", key)
    return key


# --- plugin distributions made in the test (docs/plugins.md) ----------------------------------


class PluginSite:
    """A folder that holds installed distributions as an installer leaves them: the package's
    modules and a ``NAME-VERSION.dist-info`` with ``METADATA`` and ``entry_points.txt``."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def install(
        self,
        name: str,
        version: str,
        entry_points: dict[str, dict[str, str]],
        files: dict[str, str],
    ) -> None:
        for relative, text in files.items():
            path = self.root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        info = self.root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        info.joinpath("METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        sections = [
            f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in entries.items())
            for group, entries in entry_points.items()
        ]
        info.joinpath("entry_points.txt").write_text("\n".join(sections), encoding="utf-8")

    def install_documented_example(self) -> None:
        """The ``gavel-letters`` package exactly as docs/plugins.md shows it."""
        import re
        import tomllib

        page = (Path(__file__).resolve().parents[1] / "docs" / "plugins.md").read_text()
        blocks = dict(re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", page, re.S))
        project = tomllib.loads(blocks.pop("pyproject.toml"))["project"]
        self.install(project["name"], project["version"], project["entry-points"], blocks)


@pytest.fixture
def plugin_site(tmp_path, monkeypatch) -> PluginSite:
    """An empty site for plugin distributions, on ``sys.path`` for this test and on
    ``PYTHONPATH`` for the commands it starts."""
    site = PluginSite(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site.root))
    source = str(Path(__file__).resolve().parents[1] / "src")
    paths = [str(site.root), source, os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    yield site
    for name in [m for m in sys.modules if m.startswith(("gavel_letters", "gavel_broken"))]:
        del sys.modules[name]


# --- an output another process is writing (gavel.io.output_lock) ------------------------------

#: A process that takes the output lock of argv[1], says so, and holds it until stdin closes.
_HOLD_OUTPUT = (
    "import sys\n"
    "from gavel.io.output_lock import exclusive\n"
    "with exclusive(sys.argv[1]):\n"
    "    print('held', flush=True)\n"
    "    sys.stdin.read()\n"
)


@pytest.fixture
def hold_output():
    """``hold_output(path)``: another process, holding the lock of the output ``path`` until
    the test ends (or its stdin is closed: ``process.communicate("")``); returns it."""
    started: list[subprocess.Popen[str]] = []

    def hold(path) -> subprocess.Popen[str]:
        child = subprocess.Popen([sys.executable, "-c", _HOLD_OUTPUT, str(path)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
        started.append(child)
        assert child.stdout is not None and child.stdout.readline() == "held\n"
        return child

    yield hold
    for child in started:
        if child.poll() is None:
            child.communicate("", timeout=30)
