"""Past-tense messages: what workers report back to the UI thread."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from gryvia_cli.core.health import Health
from gryvia_cli.tui.store import Change


class ClusterChanged(Message):
    """A batch of watch updates was applied to the store (posted at most ~4 times a second);
    `change` None: everything may have changed (context or namespace switch)."""

    def __init__(self, change: Change | None) -> None:
        super().__init__()
        self.change = change


class WatchStateChanged(Message):
    """A watcher went live, is reconnecting, failed (with a reason) or stopped."""

    def __init__(self, kind: str, state: str, detail: str) -> None:
        super().__init__()
        self.kind = kind
        self.state = state
        self.detail = detail


class HealthChanged(Message):
    """The connection prober saw the API server answer differently (core.health.Health)."""

    def __init__(self, health: Health) -> None:
        super().__init__()
        self.health = health


class WatchReconnecting(WatchStateChanged):
    """The API server went away; the watcher retries with back-off."""


class PodsChanged(Message):
    """The pods of the job shown changed (full list, raw objects)."""

    def __init__(self, pods: list[dict[str, Any]]) -> None:
        super().__init__()
        self.pods = pods


class EventsLoaded(Message):
    """The events of a job and its pods were read."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        super().__init__()
        self.events = events


class LogsEnded(Message):
    """A log stream ended (container finished, stream closed or failed); `gen` is the
    generation of the read that ended (None: whatever is shown), so that the end of a stream
    already replaced never overwrites the newer read's note."""

    def __init__(self, pod: str, reason: str, gen: int | None = None) -> None:
        super().__init__()
        self.pod = pod
        self.reason = reason
        self.gen = gen


class SavedLogsLoaded(Message):
    """The saved-logs ConfigMap of the job shown was read: replica -> SavedLog ({} when there
    is none), or `error` when it could not be read."""

    def __init__(self, saved: dict[int, Any], error: str = "") -> None:
        super().__init__()
        self.saved = saved
        self.error = error


class NamesLoaded(Message):
    """Context or namespace names for a picker were read."""

    def __init__(self, what: str, names: list[str], error: str = "") -> None:
        super().__init__()
        self.what = what
        self.names = names
        self.error = error


class WriteFinished(Message):
    """A write (cancel, delete, resubmit, submit) finished: what worked and what failed."""

    verb = "changed"
    action = "change"

    def __init__(self, done: list[str], failed: list[tuple[str, str]]) -> None:
        super().__init__()
        self.done = done
        self.failed = failed


class JobsCancelled(WriteFinished):
    """Cancel annotations were set."""

    verb = "cancel requested for"
    action = "cancel"


class JobsDeleted(WriteFinished):
    """Jobs were deleted."""

    verb = "deleted"
    action = "delete"


class JobsSubmitted(WriteFinished):
    """Jobs were created (submit or resubmit)."""

    verb = "submitted"
    action = "submit"
