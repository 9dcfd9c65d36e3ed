"""Resuming a followed container log after its stream broke, without repeating or losing lines.

A follow asks the API server for `timestamps=true`: every line then starts with its RFC 3339
time (`2026-12-01T10:00:01.123456Z text`). To resume, it reopens the log with `sinceTime` =
the newest printed line's time rounded down to the second (the API server passes `sinceTime`
to the kubelet with second precision, so asking for more would not be honoured anyway). The
server replays, in log order, every line timed at or after that second; the lines already
printed among them come first, so the cursor drops that many (`LogCursor.resume`). Lines
timed before that second are dropped too (a server that ignores `sinceTime` replays them).

Times are compared as integer nanoseconds since the epoch (`parse_stamp`), never as text:
RFC3339Nano drops trailing zeros, so `...01.5Z` sorts after `...01.123Z` as text.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

NANOS = 1_000_000_000


def parse_stamp(stamp: str) -> int | None:
    """Nanoseconds since the epoch of an RFC 3339 time (`2026-12-01T10:00:01.5Z`, any number
    of fraction digits, `Z` or `+hh:mm`); None when `stamp` is not one."""
    text = stamp.strip()
    if len(text) < 20 or text[10] not in "Tt":
        return None
    zone_at = max(text.rfind("Z"), text.rfind("z"), text.rfind("+"), text.rfind("-", 19))
    if zone_at < 19:
        return None
    body, zone = text[:zone_at], text[zone_at:]
    whole, _, fraction = body.partition(".")
    if fraction and not fraction.isdigit():
        return None
    try:
        base = dt.datetime.fromisoformat(whole + ("+00:00" if zone in "Zz" else zone))
    except ValueError:
        return None
    nanos = int((fraction + "000000000")[:9]) if fraction else 0
    return int(base.timestamp()) * NANOS + nanos


def format_second(nanos: int) -> str:
    """The RFC 3339 UTC time (whole seconds, `Z`) of the second holding `nanos`."""
    moment = dt.datetime.fromtimestamp(nanos // NANOS, dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def split_stamp(line: str) -> tuple[int | None, str]:
    """A `timestamps=true` log line as (its time in nanoseconds, its text); (None, line) when
    it does not start with a time."""
    stamp, sep, text = line.partition(" ")
    nanos = parse_stamp(stamp) if sep or stamp else None
    if nanos is None:
        return None, line
    return nanos, text


@dataclass
class LogCursor:
    """Where a followed log stands: feed every received line (with its timestamp) to
    `accept`, which says what to print; after the stream broke, `resume` gives the
    `sinceTime` of the reopened stream and makes `accept` skip what it replays.

    `keep_timestamps`: print lines with their time (`logs --timestamps`) or without it.
    """

    keep_timestamps: bool = False
    newest_second: int | None = None
    """The epoch second of the newest printed line (None: nothing printed yet)."""
    printed_in_second: int = 0
    """Lines printed so far whose time is in `newest_second` or later."""
    since: int | None = None
    """The resumed stream's `sinceTime` (nanoseconds) while it replays; else None."""
    skip: int = 0
    """Lines at or after `since` the resumed stream still has to replay (dropped)."""

    def accept(self, line: str) -> str | None:
        """The text to print for a received line, or None to drop it (already printed)."""
        nanos, text = split_stamp(line)
        shown = line if self.keep_timestamps else text
        if nanos is None:  # no time (a server that ignores timestamps=true): cannot dedupe
            return shown
        if self.since is not None:
            if nanos < self.since:
                return None
            if self.skip > 0:
                self.skip -= 1
                return None
            self.since = None
        second = nanos // NANOS
        if self.newest_second is None or second > self.newest_second:
            self.newest_second = second
            self.printed_in_second = 1  # every line printed before is older than this second
        elif second == self.newest_second:
            self.printed_in_second += 1
        return shown

    def resume(self) -> str | None:
        """Prepare for a reopened stream; return its `sinceTime` (RFC 3339, whole seconds),
        or None when nothing was printed yet (reopen it as it was first opened)."""
        if self.newest_second is None:
            return None
        self.since = self.newest_second * NANOS
        self.skip = self.printed_in_second
        return format_second(self.since)
