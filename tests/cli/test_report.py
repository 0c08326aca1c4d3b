"""``gavel report`` from the command line, and the demo writing its report."""

from __future__ import annotations


def test_report_command_writes_one_page(gavel, tmp_path):
    assert gavel("demo", "--out", tmp_path / "demo", "--n", "4").returncode == 0
    assert (tmp_path / "demo" / "report" / "index.html").is_file()  # the demo writes one too
    done = gavel(
        "report", tmp_path / "demo" / "photos", "--out", tmp_path / "page", "--title", "photos"
    )
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "page" / "index.html").read_text()
    assert "<title>photos" in page
    missing = gavel("report", tmp_path / "nope", "--out", tmp_path / "x")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
