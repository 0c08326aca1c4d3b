"""The whole three-stage workflow in headless Chromium, as people do it: log in, draw boxes with
the mouse, move, resize, delete and zoom, save, review (with a second reviewer refused), spot
check, look at the dashboard, then export and validate.

Uses Debian's ``chromium`` (``.ci/run`` installs it) through Playwright's Python package with
that executable; no browser is ever downloaded. Skipped when chromium or playwright is missing.
"""

from __future__ import annotations

import io
import json
import shutil

import pytest

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need the playwright package"
)
CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)"
)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class Person:
    """One browser context (its own cookies) logged in with a token."""

    def __init__(self, browser, server, token: str):
        self.context = browser.new_context(viewport={"width": 1280, "height": 860})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(server.url + "/")
        assert self.page.url.endswith("/login")
        self.page.fill("#token", token)
        self.page.click("#login")
        self.page.wait_for_load_state()

    def ready(self) -> None:
        """Wait for the image and the fitted zoom."""
        # Functions, not expression strings: the app's CSP forbids the eval that strings need.
        self.page.wait_for_function(
            "() => document.getElementById('image').naturalWidth > 0 && "
            "document.getElementById('stage').style.width !== ''"
        )

    def to_screen(self, x: float, y: float) -> tuple[float, float]:
        """Screen position of a point given in original image pixels."""
        box = self.page.locator("#overlay").bounding_box()
        width = self.page.evaluate("window.gavelEditor.width")
        scale = box["width"] / width
        return box["x"] + x * scale, box["y"] + y * scale

    def drag(self, start: tuple[float, float], end: tuple[float, float]) -> None:
        mouse = self.page.mouse
        mouse.move(*self.to_screen(*start))
        mouse.down()
        mouse.move(*self.to_screen(*end), steps=6)
        mouse.up()

    def boxes(self) -> list[list[float]]:
        return self.page.evaluate("window.gavelEditor.values()")


def close_to(got: list[list[float]], expected: list[list[float]], tolerance: float = 1.5) -> bool:
    return len(got) == len(expected) and all(
        abs(a - b) <= tolerance
        for g, e in zip(got, expected, strict=True)
        for a, b in zip(g, e, strict=True)
    )


def test_annotate_review_check_and_export_in_a_browser(served, gavel):
    project, server = served
    from gavel.annotate import db
    from gavel.annotate.users import add_user

    with db.opened(project.db) as conn:
        second_reviewer = add_user(conn, "rev2", "reviewer")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            run_workflow(browser, server, project, second_reviewer)
        finally:
            browser.close()

    exported = project.root / "gavel.jsonl"
    done = gavel("annotate", "export", "--db", project.db, "--out", exported, "--split-by-image")
    assert done.returncode == 0, done.stderr
    line = json.loads(exported.read_text().splitlines()[0])
    assert line["id"] == "street#0" and line["hallucinated"] and line["category"] == "Color"
    assert line["explanation"] == "The car is blue <not red> & parked."
    assert close_to(line["boxes"], [[50, 155, 110, 75]])
    valid = gavel("data", "validate", exported)
    assert valid.returncode == 0, valid.stderr


def run_workflow(browser, server, project, second_reviewer: str) -> None:
    ana = Person(browser, server, project.tokens["ana"])
    page = ana.page
    assert page.url.endswith("/item/1")
    ana.ready()
    assert page.inner_text("#caption") == "A red car is parked next to the tree."

    ana.drag((40, 150), (160, 230))  # draw
    assert close_to(ana.boxes(), [[40, 150, 120, 80]])
    assert page.is_checked('input[value="hallucinated"]')  # drawing marks an error
    ana.drag((250, 20), (330, 90))  # a second box, selected
    assert len(ana.boxes()) == 2
    page.keyboard.press("Delete")  # deletes the selected box
    assert close_to(ana.boxes(), [[40, 150, 120, 80]])
    ana.drag((300, 200), (360, 260))
    page.locator("#box-list li").nth(1).locator("button.delete-box").click()
    assert len(ana.boxes()) == 1

    ana.drag((100, 190), (110, 195))  # move box 1 by (+10, +5)
    assert close_to(ana.boxes(), [[50, 155, 120, 80]])
    before = page.locator("#overlay").bounding_box()["width"]
    page.keyboard.press("+")  # zoom in: the picture grows, the coordinates stay
    assert page.locator("#overlay").bounding_box()["width"] > before * 1.2
    assert page.inner_text("#zoom-level") != "100%"
    ana.drag((170, 235), (160, 230))  # resize by the bottom-right handle
    assert close_to(ana.boxes(), [[50, 155, 110, 75]])
    page.keyboard.press("0")

    page.keyboard.press("3")  # third category: Color
    assert page.input_value("#category") == "Color"
    page.fill("#explanation", "The car is blue <not red> & parked.")
    page.keyboard.press("Control+Enter")
    page.wait_for_url("**/item/2")  # saved, and on to the next item
    assert ana.errors == []

    rev = Person(browser, server, project.tokens["rev"])
    assert rev.page.url.endswith("/item/1")
    rev2 = Person(browser, server, second_reviewer)
    assert rev2.page.url.endswith("/next")  # item 1 is handed to rev: nothing for rev2
    rev2.page.goto(server.url + "/item/1")  # but a link still opens it
    for person in (rev, rev2):
        person.ready()
    assert rev.page.input_value("#explanation") == "The car is blue <not red> & parked."
    assert close_to(rev.boxes(), [[50, 155, 110, 75]])
    assert "ana (annotator)" in rev.page.inner_text(".history")
    rev.page.click("#accept")
    rev.page.wait_for_url("**/next")
    assert "No items are waiting for a reviewer" in rev.page.inner_text("#message-text")

    rev2.page.fill("#explanation", "A blue car.")
    rev2.page.click("#save")  # too late: rev accepted meanwhile
    rev2.page.wait_for_function("() => document.getElementById('message').className === 'conflict'")
    message = rev2.page.inner_text("#message")
    assert message.startswith("rev (reviewer) accepted this item") and "not saved" in message

    chk = Person(browser, server, project.tokens["chk"])
    assert chk.page.url.endswith("/item/1")
    chk.ready()
    chk.page.keyboard.press("a")  # pass
    chk.page.wait_for_url("**/next")
    chk.page.goto(server.url + "/dashboard")
    stages = chk.page.inner_text("#stages")
    assert stages.split("\n")[-1].split("\t") == ["3", "0", "0", "1", "4"]
    assert "ana" in chk.page.inner_text("#people")
    for person in (ana, rev, rev2, chk):
        assert person.errors == []
        person.context.close()


def test_exif_rotated_photo_and_an_edit_before_accept(served, hallucinated):
    """A JPEG stored sideways with EXIF orientation 6 is shown in its stored pixels, as boxes
    and models use them; and a reviewer's edit followed by Accept is saved as a correction."""
    from PIL import Image, ImageDraw

    from gavel.annotate import db, store
    from gavel.annotate.users import user_by_token

    project, server = served
    sideways = Image.new("RGB", (400, 200), (220, 30, 30))  # left half red, right half blue
    ImageDraw.Draw(sideways).rectangle((200, 0, 399, 199), fill=(30, 30, 220))
    exif = Image.Exif()
    exif[0x0112] = 6  # "turn 90 degrees clockwise to view": displayed as 200 x 400
    sideways.save(project.images / "sideways.jpg", exif=exif, quality=95)
    pairs = project.root / "sideways.jsonl"
    pairs.write_text(
        json.dumps({"id": "side#0", "image": "sideways.jpg", "caption": "Red and blue."}) + "\n"
    )
    with db.opened(project.db) as conn:
        store.import_pairs(conn, project.db, pairs, project.images)
        item = store.item_row(conn, 5)
        assert (item["width"], item["height"]) == (400, 200)  # the stored size, as models see it
        annotator = user_by_token(conn, project.tokens["ana"])
        store.save(conn, 1, annotator, "annotate", hallucinated, None)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            ana = Person(browser, server, project.tokens["ana"])
            ana.page.goto(server.url + "/item/5")
            ana.ready()
            # Turned and stretched into the 400 x 200 frame, (300, 50) would show red and
            # (100, 150) blue; in stored pixels they are blue and red. (The pixels on screen are
            # the test: naturalWidth reports the EXIF-turned size in Chromium whatever the CSS.)
            for (x, y), (red, blue) in (((300, 50), (False, True)), ((100, 150), (True, False))):
                sx, sy = ana.to_screen(x, y)
                shot = ana.page.screenshot(clip={"x": sx - 2, "y": sy - 2, "width": 4, "height": 4})
                r, _, b = Image.open(io.BytesIO(shot)).convert("RGB").getpixel((2, 2))
                assert (r > 150, b > 150) == (red, blue), (x, y, r, b)

            rev = Person(browser, server, project.tokens["rev"])
            assert rev.page.url.endswith("/item/1")
            rev.ready()
            rev.page.fill("#explanation", "The car is blue; the tree is on the left.")
            rev.page.click("#accept")
            rev.page.wait_for_url("**/next")
            for person in (ana, rev):
                assert person.errors == []
                person.context.close()
        finally:
            browser.close()
    with db.opened(project.db) as conn:
        history = store.history(conn, 1)
    assert [v["action"] for v in history] == ["annotate", "correct"]
    assert history[1]["annotation"]["explanation"] == "The car is blue; the tree is on the left."
