"""What a list-then-watch reports: one change of one object, and the state of the watch.

Plain data shared by the access layer's watcher (`gryvia_cli.kube.watch`) and the console's
source protocol (`gryvia_cli.tui.source`), so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

WatchState = Literal["connecting", "live", "reconnecting", "failed", "forbidden", "stopped"]
"""`connecting` until the first list, `live` while watching, `reconnecting` between retries,
`failed` while the server refuses (401, 403, 404; still retried), `forbidden` when RBAC
refuses a cluster-wide list or watch (final: not retried), `stopped` at the end."""

EventType = Literal["ADDED", "MODIFIED", "DELETED"]


@dataclass(frozen=True)
class WatchEvent:
    """One change of one object (`object` is the raw API object as a dict)."""

    type: EventType
    object: dict[str, Any]
