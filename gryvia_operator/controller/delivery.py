"""Signed HTTP delivery with httpx: the one delivery module of budget alerts and job hooks.

A delivery is one JSON POST with the headers of `gryvia_operator.api.signature` (signature,
timestamp, delivery id, event, user agent). Failures (connection errors, timeouts, non-2xx
answers) are retried with doubling back-off (`backoff`, `2 * backoff`, ... capped at
`max_backoff`) up to `attempts` times.

With a `Guard` (job hooks), the SSRF guard of `gryvia_operator.api.ssrf` runs before every
request: the host is resolved, every address it resolves to is checked, and the request goes
to the checked address (the URL's host stays in the Host header and, for https, in SNI and the
certificate check), so a DNS answer that changes between check and connect cannot move it.
Redirects are followed by hand, at most `Guard.max_redirects`, each target checked the same
way; a refused target ends the delivery without retries (`Outcome.refused`). Without a guard
(budget alerts) no redirect is followed.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from gryvia_operator.api.signature import ALERT_USER_AGENT, headers, render, sign
from gryvia_operator.api.ssrf import IPNetwork, first_refusal, parse_target

__all__ = ["MAX_BACKOFF_SECONDS", "Guard", "Outcome", "deliver", "headers", "render", "sign"]

logging.getLogger("httpx").setLevel(logging.WARNING)  # it logs every URL at info
MAX_BACKOFF_SECONDS = 60.0
USER_AGENT = ALERT_USER_AGENT
REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class Guard:
    """SSRF guard settings: CIDRs allowed despite the refused ranges, and how many redirects
    are followed (each checked)."""

    allowed: tuple[IPNetwork, ...] = ()
    max_redirects: int = 3


@dataclass(frozen=True)
class Outcome:
    """How a delivery ended: delivered (2xx), the last HTTP status (0: no answer), the last
    error, how many attempts were made, and the SSRF refusal when the guard refused."""

    delivered: bool
    status: int
    error: str
    attempts: int
    refused: str = ""
    answer: str = ""
    """The start of the receiver's last answer body (at most 500 characters)."""


class Refused(Exception):
    """The guard refused a target (the message says which address and why)."""


async def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (an IP literal resolves to itself); raises OSError
    when the name does not resolve."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def _pinned(url: str, guard: Guard) -> tuple[str, dict[str, str], dict[str, str]]:
    """(URL with the host replaced by its checked address, Host header, request extensions);
    raises Refused, or OSError when the host does not resolve."""
    try:
        target = parse_target(url)
    except ValueError as exc:
        raise Refused(str(exc)) from exc
    addresses = await resolve(target.host, target.port)
    why = first_refusal(target.host, addresses, guard.allowed)
    if why is not None:
        raise Refused(why)
    address = addresses[0]
    parts = urlsplit(url)
    shown = f"[{address}]" if ":" in address else address
    pinned = urlunsplit(parts._replace(netloc=f"{shown}:{target.port}"))
    host = parts.netloc.rsplit("@", 1)[-1]
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    return pinned, {"Host": host}, extensions


async def _post(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    sent: Mapping[str, str],
    guard: Guard | None,
) -> httpx.Response:
    """One attempt: POST (following checked redirects under a guard); raises Refused,
    httpx.HTTPError or OSError."""
    hops = guard.max_redirects if guard else 0
    for hop in range(hops + 1):
        if guard is None:
            return await client.post(url, content=body, headers=dict(sent))
        try:
            pinned, host, extensions = await _pinned(url, guard)
        except Refused as exc:
            raise Refused(f"redirect to {url}: {exc}" if hop else str(exc)) from exc
        answer = await client.post(
            pinned, content=body, headers={**sent, **host}, extensions=extensions
        )
        location = answer.headers.get("location")
        if answer.status_code not in REDIRECTS or not location:
            return answer
        url = urljoin(url, location)
    raise Refused(f"more than {hops} redirects (last to {url})")


async def deliver(
    url: str,
    body: bytes | Callable[[int], bytes],
    *,
    key: str,
    secret: bytes | None = None,
    timeout: float = 10.0,
    attempts: int = 3,
    backoff: float = 1.0,
    max_backoff: float = MAX_BACKOFF_SECONDS,
    event: str | None = None,
    user_agent: str = USER_AGENT,
    extra_headers: Mapping[str, str] | None = None,
    guard: Guard | None = None,
    first_attempt: int = 1,
    on_attempt: Callable[[int], Awaitable[None]] | None = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Outcome:
    """POST `body` to `url`, signed, retried with back-off (attempts `first_attempt` ..
    `attempts`); `body` may be a function of the attempt number (a payload naming its
    attempt); `on_attempt(n)` runs before attempt n is sent (the caller records it; what it
    raises ends the delivery). Never raises for HTTP, network or guard failures: they are in
    the Outcome."""
    status, error, answer_text = 0, "", ""
    delay = backoff
    last = max(attempts, first_attempt)
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
        for attempt in range(first_attempt, last + 1):
            if on_attempt is not None:
                await on_attempt(attempt)
            data = body(attempt) if callable(body) else body
            sent = headers(
                data,
                key=key,
                secret=secret,
                now=clock(),
                event=event,
                user_agent=user_agent,
                extra=extra_headers,
            )
            try:
                answer = await _post(client, url, data, sent, guard)
                status, answer_text = answer.status_code, answer.text[:500]
                if 200 <= status < 300:
                    return Outcome(True, status, "", attempt, answer=answer_text)
                error = f"HTTP {status} from {url}"
                if status in REDIRECTS:
                    error += " (a redirect, not followed)"
            except Refused as exc:
                return Outcome(False, 0, str(exc), attempt, refused=str(exc))
            except (httpx.HTTPError, OSError) as exc:
                status, error = 0, f"{type(exc).__name__}: {exc}"[:500]
            if attempt < last:
                await sleep(delay)
                delay = min(delay * 2, max_backoff)
    return Outcome(False, status, error, last, answer=answer_text)
