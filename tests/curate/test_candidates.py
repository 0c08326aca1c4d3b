"""Candidate pairs from both directions: captions written by a model (image-to-text, through a
real OpenAI-protocol server) and generated images with their prompts (text-to-image)."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from gavel.curate.captions import caption_images
from gavel.curate.images import list_images
from gavel.curate.importer import import_prompts
from gavel.curate.pairs import read_pairs
from gavel.errors import DataError
from gavel.models.registry import load_model
from gavel.prompts import Template


def photos(tmp_path):
    root = tmp_path / "photos"
    (root / "sub").mkdir(parents=True)
    Image.new("RGB", (32, 32), "red").save(root / "a.png")
    Image.new("RGB", (40, 30), "green").save(root / "sub" / "b.jpg")
    (root / "notes.txt").write_text("not an image")
    (root / ".hidden.png").write_bytes((root / "a.png").read_bytes())
    outside = tmp_path / "outside.png"
    outside.write_bytes((root / "a.png").read_bytes())
    (root / "escape.png").symlink_to(outside)  # a link leading out of the folder is skipped
    return root


def test_images_are_listed_safely(tmp_path):
    assert list_images(photos(tmp_path)) == ["a.png", "sub/b.jpg"]


def test_captions_become_one_pair_per_sentence_and_resume(tmp_path, server, api_key):
    root = photos(tmp_path)
    server.reply = lambda body, n: (
        "<think>look first</think>The image shows a red square. It has 3.5 cm sides.\n"
        "- A small blue dot sits in the corner."
    )
    out = tmp_path / "pairs.jsonl"
    model = load_model("openai:captioner", base_urls=(server.url,), api_key_env="GAVEL_TEST_KEY")
    result = caption_images(root, model, out, concurrency=2, progress=False)
    assert (result.images, result.pairs, result.failed) == (2, 6, 0)
    pairs = list(read_pairs(out))
    assert [p.id for p in pairs[:3]] == ["a.png#0", "a.png#1", "a.png#2"]
    assert [p.caption for p in pairs[:3]] == [
        "The image shows a red square.",
        "It has 3.5 cm sides.",
        "A small blue dot sits in the corner.",
    ]
    assert {p.direction for p in pairs} == {"image-to-text"} and pairs[0].source == "captioner"
    assert pairs[3].image == "sub/b.jpg" and pairs[3].sentence == 0
    sent = server.received[0][1]["messages"][-1]["content"]
    assert any(part["type"] == "image_url" for part in sent)
    assert "Describe this image in detail" in sent[-1][
        "text"
    ] or "Describe this image" in json.dumps(sent)

    hits = server.hits
    model = load_model("openai:captioner", base_urls=(server.url,), api_key_env="GAVEL_TEST_KEY")
    caption_images(root, model, out, concurrency=2, progress=False)
    assert server.hits == hits  # every image was answered already

    # another model, or another prompt, is asked afresh instead of reusing the old replies
    other = load_model("openai:writer-2", base_urls=(server.url,), api_key_env="GAVEL_TEST_KEY")
    caption_images(root, other, out, concurrency=2, progress=False)
    assert server.hits == hits + 2
    assert {p.source for p in read_pairs(out)} == {"writer-2"}
    mine = Template("mine.txt", "Describe the picture in five plain sentences.")
    caption_images(root, other, out, template=mine, concurrency=2, progress=False)
    assert server.hits == hits + 4
    assert "five plain sentences" in json.dumps(server.received[-1][1]["messages"])


def test_generated_images_with_prompts_from_jsonl_and_csv(tmp_path):
    root = photos(tmp_path)
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(
        json.dumps(
            {
                "image": "a.png",
                "prompt": "A red square on a table. Two forks lie beside it.",
                "source": "sd-3.5",
            }
        )
        + "\n\n"
        + json.dumps({"image": "./sub/b.jpg", "prompt": "A green field under a grey sky."})
        + "\n"
    )
    out = tmp_path / "t2i.jsonl"
    result = import_prompts(root, prompts, out, source="default-gen")
    assert (result.prompts, result.pairs) == (2, 3)
    pairs = list(read_pairs(out))
    assert [(p.id, p.caption, p.source) for p in pairs] == [
        ("a.png#0", "A red square on a table.", "sd-3.5"),
        ("a.png#1", "Two forks lie beside it.", "sd-3.5"),
        ("sub/b.jpg#0", "A green field under a grey sky.", "default-gen"),
    ]
    assert {p.direction for p in pairs} == {"text-to-image"}

    table = tmp_path / "prompts.csv"
    table.write_text('image,prompt,id\na.png,"A red square, seen from above. It glows.",gen-1\n')
    whole = import_prompts(root, table, out, whole=True)
    assert whole.pairs == 1
    (pair,) = read_pairs(out)
    assert (pair.id, pair.caption, pair.sentence) == (
        "gen-1",
        "A red square, seen from above. It glows.",
        None,
    )


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ({"image": "../outside.png", "prompt": "A thing here."}, "image"),
        ({"image": "/etc/hostname", "prompt": "A thing here."}, "image"),
        ({"image": "escape.png", "prompt": "A thing here."}, "image"),
        ({"image": "missing.png", "prompt": "A thing here."}, "image"),
        ({"image": "a.png", "prompt": ""}, "prompt"),
        ({"image": "a.png", "prompt": "Fine text here.", "source": 3}, "source"),
    ],
)
def test_bad_prompt_lines_name_their_line_and_field(tmp_path, line, field):
    root = photos(tmp_path)
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(
        json.dumps({"image": "a.png", "prompt": "A fine first line."})
        + "\n"
        + json.dumps(line)
        + "\n"
    )
    with pytest.raises(DataError) as error:
        import_prompts(root, prompts, tmp_path / "out.jsonl")
    assert (error.value.line, error.value.field) == (2, field)
    assert not (tmp_path / "out.jsonl").exists()  # nothing half-written


def test_captions_and_import_commands(tmp_path, server, api_key, gavel):
    root = photos(tmp_path)
    server.reply = lambda body, n: "A red square fills the frame. Nothing else is there."
    done = gavel(
        "curate",
        "captions",
        "--images",
        root,
        "--model",
        "openai:captioner",
        "--base-url",
        server.url,
        "--api-key-env",
        "GAVEL_TEST_KEY",
        "--out",
        tmp_path / "pairs.jsonl",
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    assert "4 pairs from 2 images" in done.stderr
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps({"image": "../x.png", "prompt": "A thing here."}) + "\n")
    refused = gavel(
        "curate", "import", "--images", root, "--prompts", prompts, "--out", tmp_path / "t.jsonl"
    )
    assert refused.returncode == 2
    assert "prompts.jsonl, line 1, field 'image'" in refused.stderr
