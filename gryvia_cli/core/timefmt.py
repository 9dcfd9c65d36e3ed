"""Ages and durations as people read them: kubectl-style ages, job durations, timestamps."""

from __future__ import annotations

from datetime import UTC, datetime

MISSING = "-"
CLOCK_SKEW = "clock skew"


def parse_time(value: object) -> datetime | None:
    """Parse an RFC 3339 timestamp (`2024-05-01T10:00:00Z`, fractions allowed) to an aware
    datetime; None for None, "" or anything unparsable."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value:
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def human_duration(seconds: float) -> str:
    """Format a duration as kubectl does: `45s`, `5m30s`, `42m`, `3h15m`, `20h`, `2d4h`, `90d`,
    `2y30d`. Negative durations beyond one second are `clock skew`."""
    total = int(seconds)
    if total < -1:
        return CLOCK_SKEW
    if total < 0:
        return "0s"
    if total < 120:
        return f"{total}s"
    minutes, hours, days = total // 60, total // 3600, total // 86400
    # (below this many seconds, show big unit + small unit, the two values), as kubectl does
    for limit, big, big_unit, small, small_unit in (
        (600, minutes, "m", total % 60, "s"),
        (180 * 60, minutes, "m", 0, "s"),
        (8 * 3600, hours, "h", minutes % 60, "m"),
        (48 * 3600, hours, "h", 0, "m"),
        (8 * 86400, days, "d", hours % 24, "h"),
    ):
        if total < limit:
            return f"{big}{big_unit}{small}{small_unit}" if small else f"{big}{big_unit}"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years, rest_days = divmod(days, 365)
    if hours < 24 * 365 * 8 and rest_days:
        return f"{years}y{rest_days}d"
    return f"{years}y"


def age(timestamp: object, now: datetime) -> str:
    """Time since `timestamp` in kubectl form; `-` when missing or unparsable."""
    when = parse_time(timestamp)
    if when is None:
        return MISSING
    return human_duration((now - when).total_seconds())


def seconds_between(start: object, end: object) -> float | None:
    """Seconds from `start` to `end` (timestamps or datetimes); None if either is missing."""
    a, b = parse_time(start), parse_time(end)
    if a is None or b is None:
        return None
    return (b - a).total_seconds()


def format_seconds(seconds: float | None) -> str:
    """A precise short duration for job timings: `0s`, `45s`, `2m5s`, `1h2m3s`, `2d3h`;
    `-` for None."""
    if seconds is None:
        return MISSING
    total = max(int(seconds), 0)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h" if hours else f"{days}d"
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s"]
    if hours:
        parts[2] = f"{secs}s" if secs else ""
    return "".join(parts) or "0s"
