"""Kubernetes Events as table rows: newest last, repeated events counted, kubectl-style ages."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from gryvia_cli.core import timefmt
from gryvia_cli.core.cells import Marked


def event_time(event: Mapping[str, Any]) -> datetime | None:
    """When the event last happened (lastTimestamp, eventTime, series, or creation)."""
    series = event.get("series") or {}
    for value in (
        event.get("lastTimestamp"),
        series.get("lastObservedTime"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
        (event.get("metadata") or {}).get("creationTimestamp"),
    ):
        parsed = timefmt.parse_time(value)
        if parsed is not None:
            return parsed
    return None


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def since(events: Iterable[Mapping[str, Any]], start: datetime | None) -> list[Mapping[str, Any]]:
    """Events that last happened at or after `start` (all when `start` is None), e.g. to
    drop events of an earlier object with the same name."""
    if start is None:
        return list(events)
    out = []
    for event in events:
        when = event_time(event)
        if when is None or when >= start:
            out.append(event)
    return out


def sort_events(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Events oldest first (unknown times first)."""
    return sorted(events, key=lambda e: (event_time(e) is not None, event_time(e) or datetime.min))


def event_rows(
    events: Iterable[Mapping[str, Any]], now: datetime, limit: int = 20
) -> list[list[Any]]:
    """The newest `limit` events oldest first: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE."""
    rows = []
    for event in sort_events(events)[-limit:]:
        target = event.get("involvedObject") or event.get("regarding") or {}
        count = event.get("count") or (event.get("series") or {}).get("count") or 1
        when = timefmt.age(event_time(event), now)
        kind = event.get("type") or "Normal"
        rows.append(
            [
                f"{when} (x{count})" if count > 1 else when,
                Marked(kind, "warn" if kind == "Warning" else "info"),
                event.get("reason") or "",
                f"{str(target.get('kind') or '').lower()}/{target.get('name') or ''}",
                _short(str(event.get("message") or "").strip()),
            ]
        )
    return rows
