"""Node maintenance as both sides read it: a Node is in maintenance when it is cordoned
(`spec.unschedulable: true`) and carries the annotation `gryvia.io/maintenance` (its start,
RFC 3339) and usually `gryvia.io/maintenance-reason` (behaviour reference, `maintenance
start`). `gryvia maintenance start` writes both; capacity (CLI) and the waiting reasons of
jobs (operator) name such a node with its reason instead of calling it "cordoned".

A Node with the annotations that someone uncordoned is *marked* but not in maintenance: it
takes pods again, so nothing counts it out of service (`maintenance list` still shows it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gryvia_operator.api.names import ANNOTATION_MAINTENANCE, ANNOTATION_MAINTENANCE_REASON


@dataclass(frozen=True)
class Maintenance:
    """The maintenance marks of one Node: `since` (the annotation as written, RFC 3339, ""
    when absent), `reason` ("" when none was given) and whether the Node is cordoned."""

    since: str
    reason: str
    cordoned: bool

    @property
    def problem(self) -> str:
        """How a node's problem reads: `in maintenance: <reason>`, or `in maintenance`."""
        return maintenance_text(self.reason)

    def started(self) -> datetime | None:
        """`since` as an aware UTC datetime; None when absent or not RFC 3339."""
        return parse_since(self.since)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def maintenance_of(node: Mapping[str, Any] | None) -> Maintenance | None:
    """The maintenance marks of a Node object (wire form), or None when it carries neither
    annotation. In maintenance only while also cordoned (`active_reason`)."""
    annotations = _map(_map(_map(node).get("metadata")).get("annotations"))
    if ANNOTATION_MAINTENANCE not in annotations and ANNOTATION_MAINTENANCE_REASON not in (
        annotations
    ):
        return None
    return Maintenance(
        since=str(annotations.get(ANNOTATION_MAINTENANCE) or ""),
        reason=str(annotations.get(ANNOTATION_MAINTENANCE_REASON) or "").strip(),
        cordoned=_map(_map(node).get("spec")).get("unschedulable") is True,
    )


def active_reason(node: Mapping[str, Any] | None) -> str | None:
    """The reason of a Node in maintenance ("" when it has none), or None when the Node is
    not in maintenance (unmarked, or marked but uncordoned)."""
    found = maintenance_of(node)
    return found.reason if found is not None and found.cordoned else None


def maintenance_text(reason: str) -> str:
    """`in maintenance: <reason>` (just `in maintenance` without a reason): the words placement,
    waiting reasons and capacity use after a node's name."""
    return f"in maintenance: {reason}" if reason else "in maintenance"


def parse_since(text: str) -> datetime | None:
    """An RFC 3339 time (`2026-12-05T07:30:00Z`) as an aware UTC datetime; None when empty or
    malformed."""
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_since(when: datetime) -> str:
    """An RFC 3339 UTC time to whole seconds (`2026-12-05T07:30:00Z`), as the annotation holds."""
    return when.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
