"""The Files and Batches calls against listings as servers other than OpenAI's give them:
refused, ignoring ``after``, oldest first, every purpose at once, file objects without
``status``, and a server that refuses batch ``metadata``. The counts are the server's."""

from __future__ import annotations

import json

import pytest

from gavel.batch.client import BatchClient, tag
from gavel.errors import GavelError

openai = pytest.importorskip("openai")

WANTED = tag("run0123456789abc", "p.jsonl", "r1-p1", 1, "ab" * 32)


def client_of(server, warnings: list[str] | None = None) -> BatchClient:
    api = openai.OpenAI(api_key="sk-test", base_url=server.url, max_retries=2, timeout=2.0)
    return BatchClient(
        api, sleep=lambda _: None, warn=(warnings if warnings is not None else []).append
    )


def requests_file(tmp_path, text: str = "one"):
    path = tmp_path / f"{text}.requests.jsonl"
    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    line = {"custom_id": text, "method": "POST", "url": "/v1/chat/completions", "body": body}
    path.write_text(json.dumps(line) + "\n")
    return path


def test_a_listing_that_ignores_after_is_read_once_not_forever(batch_server, tmp_path):
    batch_server.ignore_after = True  # the same first page, no has_more, on every call
    client = client_of(batch_server)
    for n in range(3):
        client.upload(requests_file(tmp_path, f"q{n}"), f"gavel-q{n}.jsonl")
    listed = batch_server.listed
    assert client.find_file("gavel-none.jsonl", 1) is None
    assert client.find_batch(WANTED) is None
    # One page each, and one more each that showed nothing new.
    assert batch_server.listed - listed <= 4


def test_a_server_listing_oldest_first_is_searched_all_the_same(batch_server, tmp_path):
    batch_server.oldest_first = True
    batch_server.max_page = 1
    client = client_of(batch_server)
    first = client.upload(requests_file(tmp_path), "gavel-one.jsonl")
    made, found = client.create(first, WANTED)
    other = client.upload(requests_file(tmp_path, "two"), "gavel-two.jsonl")
    client.create(other, {**WANTED, "gavel_sha256": "0" * 16})
    assert not found
    assert client.find_batch(WANTED).id == made.id
    assert client.find_file("gavel-two.jsonl", (tmp_path / "two.requests.jsonl").stat().st_size)


def test_files_of_another_purpose_or_without_status_are_told_apart(batch_server, tmp_path):
    batch_server.ignore_purpose = True  # the purpose filter is not understood
    batch_server.file_fields_left_out = ("status",)  # nor kept
    client = client_of(batch_server)
    path = requests_file(tmp_path)
    size = path.stat().st_size
    batch_server._new_file("gavel-one.jsonl", path.read_bytes(), "batch_output")
    assert client.find_file("gavel-one.jsonl", size) is None  # not a batch input file
    file_id = client.upload(path, "gavel-one.jsonl")
    assert client.find_file("gavel-one.jsonl", size) == file_id
    assert batch_server.uploads == 1


@pytest.mark.parametrize("status", [400, 404, 405, 501])
def test_refused_listings_warn_and_an_upload_goes_on(batch_server, tmp_path, status):
    batch_server.list_status = {"/files": status, "/batches": status}
    warnings: list[str] = []
    client = client_of(batch_server, warnings)
    assert client.find_batch(WANTED) is None
    file_id = client.upload(requests_file(tmp_path), "gavel-one.jsonl")
    _, found = client.create(file_id, WANTED)
    assert not found and batch_server.created == 1 and batch_server.uploads == 1
    listed = batch_server.listed
    assert client.find_batch(WANTED) is None and client.find_file("gavel-x.jsonl", 1) is None
    assert batch_server.listed == listed  # a refused listing is not asked again
    assert len(warnings) == 2  # once per listing
    assert f"GET {batch_server.url}/batches answered HTTP {status}" in " ".join(warnings)


@pytest.mark.parametrize("fault", ["drop", "500"])
def test_a_lost_create_reply_is_not_sent_again_when_batches_cannot_be_listed(
    batch_server, tmp_path, fault
):
    batch_server.list_status = {"/batches": 404}
    batch_server.create_faults = [fault] * 3
    client = client_of(batch_server)
    file_id = client.upload(requests_file(tmp_path), "gavel-one.jsonl")
    with pytest.raises(GavelError) as raised:
        client.create(file_id, WANTED)
    assert batch_server.created == 1  # made once, never a second time blindly
    message = str(raised.value)
    assert "may have made it" in message and "cannot list" in message


def test_a_server_without_batch_metadata_gets_the_batch_without_it(batch_server, tmp_path):
    batch_server.refuse_metadata = True
    warnings: list[str] = []
    client = client_of(batch_server, warnings)
    file_id = client.upload(requests_file(tmp_path), "gavel-one.jsonl")
    made, found = client.create(file_id, WANTED)
    assert not found and batch_server.created == 1
    assert batch_server.batches[made.id]["metadata"] is None
    assert any("metadata" in text for text in warnings)
    # Untagged, it is still found by its input file (a rerun after a lost reply).
    assert client.find_batch(WANTED, file_id).id == made.id


def test_the_tag_keeps_to_openais_metadata_limits():
    long = tag("r" * 16, "x" * 700 + ".jsonl", "r12-p3", 12, "f" * 64)
    assert len(long) <= 16
    assert all(isinstance(v, str) and len(v) <= 512 for v in long.values())
    assert all(len(k) <= 64 for k in long)
