"""The API server's clock as the console reads it: the local UTC clock corrected by the offset
the server's `Date` reply header shows (RFC 9110), so that ages of objects the server stamped
read as `kubectl` shows them when the local clock is off (3 minutes behind: `clock skew`).

The header has whole seconds and arrives after the server wrote it, so offsets within
`TOLERANCE_SECONDS` are taken as none: the console's ages then never jitter by a second.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

TOLERANCE_SECONDS = 2.0
"""Offsets of at most this many seconds (either way) are not corrected."""


def header_time(value: str | None) -> datetime | None:
    """An HTTP date (`Sat, 05 Dec 2026 08:03:00 GMT`) as an aware UTC datetime; None when
    missing or malformed."""
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _local_now() -> datetime:
    return datetime.now(UTC)


class ServerClock:
    """The server's time: `local()` plus the offset (seconds, server minus local) of the last
    `Date` header noted when it exceeds `tolerance` seconds. Noted from any thread (one float
    is written), read by the console's views."""

    def __init__(
        self,
        local: Callable[[], datetime] = _local_now,
        *,
        tolerance: float = TOLERANCE_SECONDS,
    ) -> None:
        self.local = local
        self.tolerance = tolerance
        self.offset = 0.0

    def note(self, date_header: str | None) -> None:
        """Take the offset from a reply's `Date` header (kept as it was when None or
        malformed)."""
        server = header_time(date_header)
        if server is not None:
            seconds = (server - self.local()).total_seconds()
            self.offset = seconds if abs(seconds) > self.tolerance else 0.0

    def now(self) -> datetime:
        """The server's time now, in UTC."""
        return self.local() + timedelta(seconds=self.offset)
