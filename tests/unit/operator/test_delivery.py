"""Signed alert delivery against a real local HTTP server: signature, idempotency key, Slack
format, retries with back-off, and failure reported rather than raised."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from gryvia_operator.controller import delivery


class Receiver:
    """Records requests; answers with the queued status codes (then 200)."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.answers: list[int] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(outer.answers.pop(0) if outer.answers else 200)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/alerts"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    box = Receiver()
    thread = threading.Thread(target=box.server.serve_forever, daemon=True)
    thread.start()
    yield box
    box.server.shutdown()
    box.server.server_close()


async def _no_sleep(_: float) -> None:
    return


def test_signed_post_carries_timestamp_signature_and_key(receiver: Receiver) -> None:
    body = delivery.render({"b": 1, "a": "x"}, "gryvia", "ignored")
    outcome = asyncio.run(
        delivery.deliver(receiver.url, body, key="u/2026-12-01/50", secret=b"s3cret")
    )
    assert outcome == delivery.Outcome(True, 200, "", 1)
    ((headers, got),) = receiver.requests
    assert got == b'{"a":"x","b":1}'
    stamp = headers["x-gryvia-timestamp"]
    expected = hmac.new(b"s3cret", f"{stamp}.".encode() + got, hashlib.sha256).hexdigest()
    assert headers["x-gryvia-signature"] == f"sha256={expected}"
    assert headers["x-gryvia-delivery"] == "u/2026-12-01/50"


def test_slack_format_and_unsigned_without_secret(receiver: Receiver) -> None:
    body = delivery.render({"a": 1}, "slack", "budget acme crossed 50 %")
    asyncio.run(delivery.deliver(receiver.url, body, key="k"))
    ((headers, got),) = receiver.requests
    assert json.loads(got) == {"text": "budget acme crossed 50 %"}
    assert "x-gryvia-signature" not in headers


def test_retries_with_doubling_backoff_then_succeeds(receiver: Receiver) -> None:
    receiver.answers = [500, 503]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    outcome = asyncio.run(
        delivery.deliver(receiver.url, b"{}", key="k", attempts=5, backoff=2.0, sleep=sleep)
    )
    assert outcome.delivered and outcome.attempts == 3
    assert waits == [2.0, 4.0]
    assert {h["x-gryvia-delivery"] for h, _ in receiver.requests} == {"k"}


def test_failure_is_reported_not_raised(receiver: Receiver) -> None:
    receiver.answers = [500, 500]
    outcome = asyncio.run(
        delivery.deliver(receiver.url, b"{}", key="k", attempts=2, sleep=_no_sleep)
    )
    assert not outcome.delivered and outcome.status == 500 and "HTTP 500" in outcome.error
    refused = asyncio.run(
        delivery.deliver("http://127.0.0.1:1/x", b"{}", key="k", attempts=1, timeout=2)
    )
    assert not refused.delivered and refused.status == 0 and refused.error
