"""Provenance never records a secret: URL userinfo is redacted wherever it appears."""

from __future__ import annotations

from gavel.manifest import redact_userinfo


def test_userinfo_of_every_url_is_redacted_and_nothing_else():
    given = {
        "base_urls": ["http://user:KEY@host:8000/v1", "https://KEY@api.example/v1?x=a@b"],
        "command": ["gavel", "--base-url=http://a:b@h/v1", "--note", "mail me at a@b.example"],
        "nested": {"url": "HTTPS://u:p@H/v1"},
        "count": 3,
    }
    assert redact_userinfo(given) == {
        "base_urls": ["http://***@host:8000/v1", "https://***@api.example/v1?x=a@b"],
        "command": ["gavel", "--base-url=http://***@h/v1", "--note", "mail me at a@b.example"],
        "nested": {"url": "HTTPS://***@H/v1"},
        "count": 3,
    }


def test_a_url_made_a_path_is_redacted_too():
    """``Path("http://u:KEY@h/x")`` prints as ``http:/u:KEY@h/x``; a drive letter is no scheme."""
    assert redact_userinfo("http:/u:KEY@h/x: file not found") == "http:/***@h/x: file not found"
    assert redact_userinfo("C:/users/a@b/x.jsonl") == "C:/users/a@b/x.jsonl"
    assert redact_userinfo("runs/a@b/x.jsonl") == "runs/a@b/x.jsonl"
