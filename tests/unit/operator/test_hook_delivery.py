"""Guarded hook delivery against real local HTTP servers: the SSRF guard before the request and
on every redirect, allowed CIDRs, hook headers, per-attempt bodies and the attempt callback."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from gryvia_operator.api.signature import HOOK_USER_AGENT, verify
from gryvia_operator.api.ssrf import parse_cidrs
from gryvia_operator.controller import delivery


class Server:
    """Records POSTs; answers with the queued (status, Location) pairs, then 200."""

    def __init__(self, host: str) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.answers: list[tuple[int, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                code, location = outer.answers.pop(0) if outer.answers else (200, "")
                self.send_response(code)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *_: Any) -> None:
                return

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.url = f"http://{host}:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def servers() -> Iterator[tuple[Server, Server]]:
    a, b = Server("127.0.0.2"), Server("127.0.0.1")
    yield a, b
    a.close()
    b.close()


async def _no_sleep(_: float) -> None:
    return


def _deliver(url: str, allowed: list[str], **kw: Any) -> delivery.Outcome:
    guard = delivery.Guard(parse_cidrs(allowed))
    return asyncio.run(delivery.deliver(url, b"{}", key="k", guard=guard, sleep=_no_sleep, **kw))


def test_loopback_is_refused_before_any_request(servers: tuple[Server, Server]) -> None:
    _, b = servers
    outcome = _deliver(b.url, [], attempts=3)
    assert not outcome.delivered
    assert outcome.attempts == 1  # a refusal is not retried
    assert outcome.refused.startswith("127.0.0.1 is loopback (127.0.0.0/8): refused")
    assert b.requests == []


def test_allowed_cidr_delivers_with_hook_headers(servers: tuple[Server, Server]) -> None:
    _, b = servers
    outcome = _deliver(
        b.url,
        ["127.0.0.0/8"],
        secret=b"s",
        event="Succeeded",
        user_agent=HOOK_USER_AGENT,
        extra_headers={"X-Team": "a", "User-Agent": "spoof", "X-Gryvia-Event": "spoof"},
    )
    assert outcome.delivered and outcome.answer == "ok"
    ((headers, body),) = b.requests
    assert headers["user-agent"] == "gryvia-job-hook"
    assert headers["x-gryvia-event"] == "Succeeded"
    assert headers["x-team"] == "a"
    assert headers["host"] == b.url.split("/")[2]
    assert verify(b"s", headers["x-gryvia-timestamp"], body, headers["x-gryvia-signature"])


def test_redirect_target_is_checked_refused_unless_allowed(
    servers: tuple[Server, Server],
) -> None:
    a, b = servers
    a.answers = [(307, b.url)]
    refused = _deliver(a.url, ["127.0.0.2/32"])
    assert not refused.delivered
    assert refused.refused.startswith(f"redirect to {b.url}: 127.0.0.1 is loopback")
    assert len(a.requests) == 1 and b.requests == []
    a.answers = [(307, b.url)]
    followed = _deliver(a.url, ["127.0.0.0/8"])
    assert followed.delivered
    assert len(b.requests) == 1


def test_unguarded_delivery_never_follows_redirects(servers: tuple[Server, Server]) -> None:
    a, b = servers
    a.answers = [(302, b.url)]
    outcome = asyncio.run(delivery.deliver(a.url, b"{}", key="k", attempts=1))
    assert not outcome.delivered and outcome.status == 302
    assert "not followed" in outcome.error
    assert b.requests == []


def test_down_twice_then_delivered_on_the_third_attempt(servers: tuple[Server, Server]) -> None:
    _, b = servers
    b.answers = [(503, ""), (503, "")]
    seen: list[int] = []

    async def note(n: int) -> None:
        seen.append(n)

    outcome = asyncio.run(
        delivery.deliver(
            b.url,
            lambda n: f'{{"attempt":{n}}}'.encode(),
            key="k",
            attempts=3,
            guard=delivery.Guard(parse_cidrs(["127.0.0.1/32"])),
            on_attempt=note,
            sleep=_no_sleep,
        )
    )
    assert outcome.delivered and outcome.attempts == 3
    assert seen == [1, 2, 3]
    assert [body for _, body in b.requests] == [
        b'{"attempt":1}',
        b'{"attempt":2}',
        b'{"attempt":3}',
    ]
    assert len({h["x-gryvia-delivery"] for h, _ in b.requests}) == 1


def test_resumed_delivery_starts_at_the_recorded_attempt(servers: tuple[Server, Server]) -> None:
    _, b = servers
    b.answers = [(500, "")]
    outcome = _deliver(b.url, ["127.0.0.1/32"], attempts=3, first_attempt=3)
    assert not outcome.delivered and outcome.attempts == 3
    assert len(b.requests) == 1
