"""Names from data become paths only inside their root."""

from __future__ import annotations

import pytest

from gavel.io.safe_paths import UnsafePath, path_inside, read_inside, safe_component, safe_relative


@pytest.mark.parametrize("name", ["test", "real_test", "v1.2", "ünï", "a b"])
def test_plain_names_are_single_components(name):
    assert safe_component(name) == name


@pytest.mark.parametrize(
    "name", ["", " ", ".", "..", "../x", "x/y", "a\\b", "/etc", "x\ny", "x\x00", 5, None]
)
def test_anything_else_is_not_a_component(name):
    with pytest.raises(UnsafePath):
        safe_component(name, "split")


@pytest.mark.parametrize(
    ("name", "normal"),
    [("images/a.png", "images/a.png"), ("./a//b.png", "a/b.png"), ("a\\b.png", "a/b.png"),
     ("a/../b.png", "b.png"), (".ssh/authorized_keys", ".ssh/authorized_keys")],
)  # fmt: skip
def test_relative_paths_are_normalized(name, normal):
    assert safe_relative(name) == normal


@pytest.mark.parametrize(
    "name", ["", "..", "../x", "a/../../x", "/etc/passwd", "\\\\host\\share", "C:/x", "x\x00y"]
)
def test_paths_that_leave_the_root_are_refused(name):
    with pytest.raises(UnsafePath):
        safe_relative(name)


def test_a_symlink_inside_the_root_cannot_lead_a_write_out(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside)
    assert path_inside(root, "images/a.png") == root / "images" / "a.png"
    with pytest.raises(UnsafePath, match="leads outside"):
        path_inside(root, "link/a.png")


def test_a_file_linking_out_of_the_folder_is_not_read(tmp_path):
    (tmp_path / "ds").mkdir()
    (tmp_path / "secret").write_text("key")
    (tmp_path / "ds" / "in.txt").write_text("ok")
    (tmp_path / "ds" / "out.txt").symlink_to(tmp_path / "secret")
    (tmp_path / "ds" / "again.txt").symlink_to("in.txt")
    assert read_inside(tmp_path / "ds" / "in.txt", tmp_path / "ds")
    assert read_inside(tmp_path / "ds" / "again.txt", tmp_path / "ds")
    with pytest.raises(UnsafePath, match="outside"):
        read_inside(tmp_path / "ds" / "out.txt", tmp_path / "ds")
