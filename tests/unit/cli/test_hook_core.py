"""`gryvia hook get`'s detail lines: the extra request headers are shown, credentials hidden."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gryvia_cli.core.hooks import build_hook, header_text, hook_details
from gryvia_operator.api.jobhook import GryviaJobHook

NOW = datetime(2026, 12, 1, 21, 0, tzinfo=UTC)


def test_header_text_sorts_by_name_and_hides_credentials() -> None:
    shown = header_text({"X-Team": "ml", "Authorization": "Bearer abc123", "x-api-key": "k"})
    assert shown == (
        "Authorization: <hidden, 13 characters>; x-api-key: <hidden, 1 character>; X-Team: ml"
    )
    assert header_text(None) == "-" and header_text({}) == "-"


def test_get_shows_the_headers_line() -> None:
    body = build_hook(
        "notify",
        url="https://hooks.example.com/gryvia",
        events=["Succeeded"],
        header={"X-Source": "gryvia", "Authorization": "Bearer secret-token"},
    )
    body["metadata"]["namespace"] = "ml"
    lines = dict(hook_details(GryviaJobHook.model_validate(body), NOW))
    assert lines["Headers"] == "Authorization: <hidden, 19 characters>; X-Source: gryvia"
    assert "secret-token" not in " ".join(lines.values())


def test_create_refuses_a_url_the_operator_would_mark_invalid() -> None:
    """Refused before anything is stored (exit 2), not stored and then InvalidSpec with the
    password shown by `gryvia hook get` and `list`."""
    for url, why in (
        ("http://user:hunter2@127.0.0.1:18700/x", "must not carry credentials"),
        ("https://h.example:99999/x", "bad port"),
    ):
        with pytest.raises(ValueError, match=why):
            build_hook("h", url=url, events=["Running"])
    assert build_hook("h", url="https://h.example/x?a=1", events=["Running"])
