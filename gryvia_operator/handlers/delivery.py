"""Signed HTTP delivery of alerts (budget alerts today; job hooks use the same scheme).

A delivery is one JSON POST made with httpx:

- `X-Gryvia-Timestamp: <unix seconds>` and, when a secret is given,
  `X-Gryvia-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`;
- `X-Gryvia-Delivery: <idempotency key>`: the same key on every retry and after an operator
  restart, so a receiver can drop a repeat;
- format `gryvia` (the payload as JSON) or `slack` (`{"text": <message>}`).

Failures (connection errors, timeouts, non-2xx answers) are retried with doubling back-off
(`backoff`, `2 * backoff`, ... capped at MAX_BACKOFF_SECONDS) up to `attempts` times; no
redirects are followed.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

MAX_BACKOFF_SECONDS = 60.0
USER_AGENT = "gryvia-operator"


def sign(secret: bytes, timestamp: str, body: bytes) -> str:
    """`sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`."""
    digest = hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def render(payload: Mapping[str, Any], fmt: str, text: str) -> bytes:
    """The request body: the payload as compact JSON, or Slack's `{"text": text}`."""
    data = {"text": text} if fmt == "slack" else dict(payload)
    return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()


def headers(body: bytes, *, key: str, secret: bytes | None, now: float) -> dict[str, str]:
    """The delivery headers for `body` at unix time `now`."""
    stamp = str(int(now))
    out = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Gryvia-Timestamp": stamp,
        "X-Gryvia-Delivery": key,
    }
    if secret:
        out["X-Gryvia-Signature"] = sign(secret, stamp, body)
    return out


@dataclass(frozen=True)
class Outcome:
    """How a delivery ended: delivered (2xx), the last HTTP status (0: no answer), the last
    error, and how many attempts were made."""

    delivered: bool
    status: int
    error: str
    attempts: int


async def deliver(
    url: str,
    body: bytes,
    *,
    key: str,
    secret: bytes | None = None,
    timeout: float = 10.0,
    attempts: int = 3,
    backoff: float = 1.0,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Outcome:
    """POST `body` to `url`, signed, retried with back-off; never raises for HTTP or network
    failures (they are in the Outcome)."""
    status, error = 0, ""
    delay = backoff
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
        for attempt in range(1, max(attempts, 1) + 1):
            try:
                answer = await client.post(
                    url, content=body, headers=headers(body, key=key, secret=secret, now=clock())
                )
                status = answer.status_code
                if 200 <= status < 300:
                    return Outcome(True, status, "", attempt)
                error = f"HTTP {status} from {url}"
            except httpx.HTTPError as exc:
                status, error = 0, f"{type(exc).__name__}: {exc}"[:500]
            if attempt < attempts:
                await sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF_SECONDS)
    return Outcome(False, status, error, max(attempts, 1))
