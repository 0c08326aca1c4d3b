"""gavel.api.curation called directly: the pairs `gavel curate` writes, through a real
OpenAI-protocol server on loopback."""

from __future__ import annotations

import json
import shutil

from PIL import Image

from gavel.api.curation import ModelSettings, captions, import_prompts, score_pairs
from gavel.curate.pairs import read_pairs


def test_captions_then_scoring_then_import(tmp_path, server, api_key):
    root = tmp_path / "photos"
    root.mkdir()
    Image.new("RGB", (32, 32), "red").save(root / "a.png")
    Image.new("RGB", (32, 32), "blue").save(root / "b.png")
    model = ModelSettings(
        "openai:captioner",
        base_urls=(server.url,),
        api_key_env="GAVEL_TEST_KEY",
        progress=False,
    )
    server.reply = lambda body, n: "A red square fills the frame. Nothing else is there."
    described = captions(root, tmp_path / "pairs.jsonl", model)
    assert (described.images, described.pairs, described.failed) == (2, 4, 0)
    assert (tmp_path / "pairs.replies.jsonl").is_file()
    assert len(server.received) == 2

    server.reply = lambda body, n: json.dumps({"rating": 2, "reason": "colour is off"})
    rated = score_pairs(tmp_path / "pairs.jsonl", tmp_path / "scored.jsonl", model, images=root,
                        below=3)  # fmt: skip
    # Paths as text; without images=, the images are relative to the pairs file's folder.
    shutil.copy(tmp_path / "pairs.jsonl", root / "pairs.jsonl")
    again = score_pairs(str(root / "pairs.jsonl"), str(tmp_path / "again.jsonl"), model)
    assert (again.rated, again.failed) == (4, 0)
    assert (rated.pairs, rated.rated, rated.kept, rated.failed) == (4, 4, 4, 0)
    assert [p.alignment for p in read_pairs(tmp_path / "scored.jsonl")] == [2, 2, 2, 2]

    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps({"image": "a.png", "prompt": "A red square. A frame."}) + "\n")
    imported = import_prompts(root, prompts, tmp_path / "t2i.jsonl", source="gen", min_words=2)
    assert (imported.prompts, imported.pairs) == (1, 2)
    assert {p.source for p in read_pairs(tmp_path / "t2i.jsonl")} == {"gen"}
