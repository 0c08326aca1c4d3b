"""The Batch JSONL requests file: online bodies line by line, cut within the API's limits."""

from __future__ import annotations

import asyncio
import json

from gavel.batch.requests_file import read_custom_ids, read_sizes, sizes_path, write_parts
from gavel.examples import example_dir
from gavel.models.openai_compat import OpenAIChatModel, encode_body
from gavel.requests import Request

IMAGES = sorted((example_dir("photos") / "images").iterdir())[:5]


def requests(same_image: bool = False) -> list[tuple[str, Request]]:
    made = [Request(f"s{i}", "gavel", f"Is picture {i} right?",
                    images=(IMAGES[0] if same_image else path,))
            for i, path in enumerate(IMAGES)]  # fmt: skip
    return [(f"key-{r.sample_id}", r) for r in made]


def test_each_line_is_the_online_body_and_files_are_cut_by_count_and_bytes(tmp_path):
    model = OpenAIChatModel("m", base_urls="http://127.0.0.1:9/v1", max_image_side=64)
    keyed = requests()
    paths = (tmp_path / f"p{n}.requests.jsonl" for n in range(1, 100))
    by_count = write_parts(model, keyed, paths, max_requests=2)
    assert [w.count for w in by_count] == [2, 2, 1]
    ids = [key for w in by_count for key in read_custom_ids(w.path)]
    assert ids == [key for key, _ in keyed]  # every request once, in order
    for written in by_count:
        sizes = read_sizes(sizes_path(written.path))
        for raw in written.path.read_text().splitlines():
            line = json.loads(raw)
            request = dict(keyed)[line["custom_id"]]
            body, sent = asyncio.run(model.request_body(request))
            assert line == {"custom_id": line["custom_id"], "method": "POST",
                            "url": "/v1/chat/completions", "body": json.loads(encode_body(body))}  # fmt: skip
            assert sizes[line["custom_id"]] == sent and max(sent) == 64

    alike = requests(same_image=True)  # lines of one length
    one = (tmp_path / "one.requests.jsonl",)
    one_line = len(write_parts(model, alike[:1], one)[0].path.read_bytes())
    more = (tmp_path / f"b{n}.requests.jsonl" for n in range(1, 100))
    by_bytes = write_parts(model, alike, more, max_bytes=int(one_line * 2.5))
    assert [w.count for w in by_bytes] == [2, 2, 1]
    assert all(w.path.stat().st_size <= one_line * 2.5 for w in by_bytes)
    assert not list(tmp_path.glob(".*.tmp"))  # nothing half-written left behind


def test_a_video_is_sent_as_its_sampled_frames_as_online(tmp_path, counting_video):
    video = counting_video(tmp_path / "clip.mp4", frames=16)
    model = OpenAIChatModel("m", base_urls="http://127.0.0.1:9/v1", frames=4)
    keyed = [("k", Request("v", "videohallucer", "Is there a dog?", images=(video,)))]
    (written,) = write_parts(model, keyed, [tmp_path / "v.requests.jsonl"])
    line = json.loads(written.path.read_text())
    body, sent = asyncio.run(model.request_body(keyed[0][1]))
    assert line["body"] == json.loads(encode_body(body))
    parts = line["body"]["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["image_url"] * 4 + ["text"]
    assert read_sizes(sizes_path(written.path)) == {"k": sent}
