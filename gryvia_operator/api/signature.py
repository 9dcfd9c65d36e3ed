"""The wire format of Gryvia's signed POSTs (budget alerts and job hooks): body and headers.

- `Content-Type: application/json`, `User-Agent` (`gryvia-job-hook` for hooks,
  `gryvia-operator` for budget alerts);
- `X-Gryvia-Event: <event>` (hooks: the job phase, e.g. `Succeeded`);
- `X-Gryvia-Delivery: <id>`: the same on every retry and after an operator restart, so a
  receiver drops a repeat by it;
- `X-Gryvia-Timestamp: <unix seconds>` and, with a secret,
  `X-Gryvia-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`.

A receiver checks the signature over the raw body bytes, and may refuse old timestamps.
Pure: the CLI's `gryvia hook test` and the operator build requests with the same functions.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

HOOK_USER_AGENT = "gryvia-job-hook"
ALERT_USER_AGENT = "gryvia-operator"


def sign(secret: bytes, timestamp: str, body: bytes) -> str:
    """`sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`."""
    digest = hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify(secret: bytes, timestamp: str, body: bytes, signature: str) -> bool:
    """True when `signature` is `sign(secret, timestamp, body)` (constant-time compare)."""
    return hmac.compare_digest(sign(secret, timestamp, body), signature)


def render(payload: Mapping[str, Any], fmt: str, text: str) -> bytes:
    """The request body: the payload as compact JSON (keys sorted), or Slack's
    `{"text": text}` when `fmt` is `slack`."""
    data = {"text": text} if fmt == "slack" else dict(payload)
    return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()


def headers(
    body: bytes,
    *,
    key: str,
    secret: bytes | None,
    now: float,
    event: str | None = None,
    user_agent: str = ALERT_USER_AGENT,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The headers of one POST of `body` at unix time `now` (seconds). `extra` (the hook's
    own headers) cannot replace the Gryvia headers or the content type."""
    stamp = str(int(now))
    reserved = {"content-type", "user-agent", "host", "content-length"}
    out = {k: v for k, v in (extra or {}).items() if k.lower() not in reserved}
    out = {k: v for k, v in out.items() if not k.lower().startswith("x-gryvia-")}
    out |= {
        "Content-Type": "application/json",
        "User-Agent": user_agent,
        "X-Gryvia-Timestamp": stamp,
        "X-Gryvia-Delivery": key,
    }
    if event:
        out["X-Gryvia-Event"] = event
    if secret:
        out["X-Gryvia-Signature"] = sign(secret, stamp, body)
    return out
