"""The report in a real headless Chromium, opened from disk: no console error, no network
request, hostile text shown as text and never run, filters and paging working.

The browser is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: JSON
messages ending in NUL on file descriptors 3 and 4), so no extra package is needed. Skipped
when no Chromium is installed (``apt-get install chromium``; ``GAVEL_CHROMIUM`` names another).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PAGE_SIZE = 50


def find_browser() -> str | None:
    if os.environ.get("GAVEL_CHROMIUM"):
        return shutil.which(os.environ["GAVEL_CHROMIUM"])
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def load_builders():
    """The run builders of test_html.py (one definition of the hostile texts and runs)."""
    spec = importlib.util.spec_from_file_location(
        "report_html_builders", Path(__file__).with_name("test_html.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Browser:
    """A headless Chromium and one page, driven over the DevTools pipe."""

    def __init__(self, executable: str, profile: Path, log: Path):
        to_browser_read, self._write = os.pipe()
        self._read, from_browser_write = os.pipe()

        def child() -> None:  # the protocol's fixed descriptors: 3 reads, 4 writes
            read, write = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(read, 3)
            os.dup2(write, 4)

        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", "--no-default-browser-check", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", "--window-size=1280,900", "about:blank"],
            pass_fds=(3, 4),
            preexec_fn=child,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
        )  # fmt: skip
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next = 0
        self.events: list[dict] = []
        self.session: str | None = None

    def call(self, method: str, params: dict | None = None, timeout: float = 20) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params or {}}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 16)
                if not chunk:
                    raise EOFError("the browser closed the DevTools pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._receive(deadline))

    def settle(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._receive(deadline))
        except TimeoutError:
            pass

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str) -> float:
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        attached = self.call(
            "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}
        )
        self.session = attached["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(f"{domain}.enable")
        started = time.monotonic()
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired", 30)
        return time.monotonic() - started

    def close(self) -> None:
        with contextlib.suppress(OSError, EOFError, TimeoutError, RuntimeError):
            self.call("Browser.close", timeout=5)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        os.close(self._write)
        os.close(self._read)
        self._log.close()


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[Path, dict]:
    from gavel.api.demo import score_photos, score_synthetic

    builders = load_builders()
    root = tmp_path_factory.mktemp("browser")
    score_photos(root / "photos", "union")
    score_synthetic(root / "synthetic", "videohallucer", "hard", 3, 0, "union")
    runs = sorted((root / "photos").glob("*/results.json"))
    runs.append(root / "synthetic" / "videohallucer" / "hard")
    runs.append(builders.gavel_run(root / "hostile", 6, hostile=True))
    runs.append(builders.hostile_detailverify_run(root / "dvb"))
    runs.append(builders.gavel_run(root / "large", 5000, images=3))
    out = root / "report"
    from gavel.report.html import write_report

    index = write_report(runs, out, page_size=PAGE_SIZE)
    data = builders.gallery_data(index.read_text(), "gavel")
    return index, {"builders": builders, "data": data, "root": root}


@pytest.fixture(scope="module")
def browser(page, tmp_path_factory):
    executable = find_browser()
    if executable is None:
        pytest.skip(
            "Chromium not installed (apt-get install chromium, or set GAVEL_CHROMIUM): "
            "the report's browser test needs a real browser"
        )
    root = tmp_path_factory.mktemp("chromium")
    driver = Browser(executable, root / "profile", root / "chromium.log")
    try:
        load_seconds = driver.open(page[0].as_uri())
        driver.settle(0.5)
        yield driver, load_seconds
    finally:
        driver.close()


def test_page_opens_offline_without_errors(browser, page):
    driver, load_seconds = browser
    assert load_seconds < 15
    exceptions = [e for e in driver.events if e.get("method") == "Runtime.exceptionThrown"]
    console = [
        e["params"] for e in driver.events
        if e.get("method") == "Runtime.consoleAPICalled"
        and e["params"].get("type") in ("error", "warning", "assert")
    ]  # fmt: skip
    logged = [
        e["params"]["entry"] for e in driver.events
        if e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"
    ]  # fmt: skip
    assert exceptions == [] and console == [] and logged == []
    requests = [
        e["params"]["request"]["url"]
        for e in driver.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert requests and requests[0] == page[0].as_uri()
    assert all(url.startswith(("file://", "data:")) for url in requests), requests


def test_hostile_text_is_shown_and_never_runs(browser, page):
    driver, _ = browser
    builders = page[1]["builders"]
    assert driver.evaluate("typeof window.__pwned") == "undefined"
    assert not [e for e in driver.events if e.get("method") == "Page.javascriptDialogOpening"]
    # only the page's own script and the JSON blocks are script elements
    scripts = driver.evaluate("Array.from(document.scripts).map(s => s.type || 'js')")
    assert scripts.count("js") == 1 and set(scripts) == {"js", "application/json"}
    assert driver.evaluate("document.querySelectorAll('svg, iframe, object, embed').length") == 0
    # pick the hostile run in the GAVEL gallery and read the card's text
    runs = page[1]["data"]["runs"]
    hostile = runs.index(builders.HOSTILE_FOLDER)
    driver.evaluate(
        "(() => { const s = document.querySelector('#gallery-gavel select[data-filter=\"r\"]');"
        f" s.value = '{hostile}'; s.dispatchEvent(new Event('change')); }})()"
    )
    text = driver.evaluate("document.querySelector('#gallery-gavel .cards').innerText")
    assert builders.HOSTILE_CAPTION in text
    assert builders.HOSTILE_EXPLANATION in text and builders.HOSTILE_ANSWER in text
    assert builders.HOSTILE_ID in text
    dvb = driver.evaluate("document.querySelector('#gallery-detailverify .cards').innerText")
    assert "<script>window.__pwned=4</script>" in dvb
    driver.settle(0.3)
    assert driver.evaluate("typeof window.__pwned") == "undefined"
    assert builders.HOSTILE_FOLDER in driver.evaluate(
        "document.querySelector('table.runs').innerText"
    )


def test_filters_and_paging_work(browser, page):
    driver, _ = browser
    data = page[1]["data"]
    gallery = "document.querySelector('#gallery-gavel')"

    def choose(key: str, value: str) -> None:
        driver.evaluate(
            f"(() => {{ const s = {gallery}.querySelector('select[data-filter=\"{key}\"]');"
            f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()"
        )

    def state() -> dict:
        return driver.evaluate(
            f"(() => {{ const g = {gallery}; return {{page: g.dataset.page, shown: +g.dataset.shown,"
            " cards: g.querySelectorAll('.card').length,"
            " status: g.querySelector('.page-status').textContent}; })()"
        )

    choose("r", "")
    assert state() == {
        "page": "0",
        "shown": len(data["items"]),
        "cards": PAGE_SIZE,
        "status": f"page 1 of {-(-len(data['items']) // PAGE_SIZE)} · 1–{PAGE_SIZE} of "
        f"{len(data['items'])}",
    }
    driver.evaluate(f"{gallery}.querySelector('button.next').click()")
    assert state()["page"] == "1"
    driver.evaluate(f"{gallery}.querySelector('button.last').click()")
    last = state()
    assert int(last["page"]) == -(-len(data["items"]) // PAGE_SIZE) - 1
    assert driver.evaluate(f"{gallery}.querySelector('button.next').disabled") is True
    large = data["runs"].index("run")
    choose("r", str(large))
    choose("o", "unparseable")
    expected = sum(1 for it in data["items"] if it["r"] == large and it["o"] == "unparseable")
    assert expected > PAGE_SIZE
    now = state()
    assert now["page"] == "0" and now["shown"] == expected and now["cards"] == PAGE_SIZE
    choose("c", "No hall.")
    expected = sum(
        1 for it in data["items"]
        if it["r"] == large and it["o"] == "unparseable" and it["c"] == "No hall."
    )  # fmt: skip
    assert state()["shown"] == expected
    for key in ("r", "o", "c"):
        choose(key, "")


def test_thumbnails_and_boxes_load_from_disk(browser):
    driver, _ = browser
    driver.evaluate("document.querySelector('#gallery-gavel .card').scrollIntoView()")
    driver.settle(1.0)
    loaded = driver.evaluate(
        "(() => { const img = document.querySelector('#gallery-gavel .card img');"
        " return [img.complete, img.naturalWidth, img.getAttribute('src')]; })()"
    )
    assert loaded[0] is True and loaded[1] > 0 and loaded[2].startswith("thumbs/")
    assert driver.evaluate("document.querySelectorAll('#gallery-gavel .box.gold').length") > 0
    assert driver.evaluate("document.querySelectorAll('#gallery-gavel .box.pred').length") > 0
    figures = driver.evaluate(
        "Array.from(document.querySelectorAll('figure img')).map(i => i.naturalWidth > 0)"
    )
    assert figures and all(figures)
