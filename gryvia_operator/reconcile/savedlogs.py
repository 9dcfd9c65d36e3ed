"""Saving the last part of a deleted pod's log: what to do with a pod, and what to write.

Pure: the pod handler (`gryvia_operator.handlers.savedlogs`) reads the pod, the job and the
log, calls these, and writes the result. A job's pods carry the finalizer
`gryvia.io/save-log` (from the pod template) while they run: a pod that finishes has its log's
tail saved in the job's saved-logs ConfigMap and the finalizer removed at once (so finished pods
never block a namespace deletion when no operator runs), and a running pod that is deleted stays
until the operator has saved its log and removed the finalizer. The
finalizer is removed in every case (job gone, nothing to save, read or write errors), so no
pod is kept longer than its containers' shutdown plus one save.

Bounds: at most `MAX_LINES` lines and `replica_budget(replicas)` bytes (UTF-8) per replica,
whole lines, so one job's ConfigMap stays under `TOTAL_BYTES`, below the API server's 1 MiB
limit on a ConfigMap's data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from gryvia_operator.api.names import (
    API_VERSION,
    COMPLETION_INDEX_ANNOTATION,
    CONTAINER_NAME,
    FINALIZER_SAVE_LOG,
    LABEL_JOB,
    LABEL_MANAGED_BY,
    LABEL_SAVED_LOGS,
    MANAGED_BY,
    POD_INDEX_LABEL,
    saved_logs_name,
)
from gryvia_operator.api.savedlogs import SavedLog, entry_data

MAX_LINES = 2000
"""Lines kept per replica."""
MAX_REPLICA_BYTES = 256 * 1024
"""Bytes kept per replica (fewer when the job has many replicas, see `replica_budget`)."""
TOTAL_BYTES = 900 * 1024
"""Bytes of saved text per job, all replicas together (ConfigMap data is limited to 1 MiB)."""
MIN_REPLICA_BYTES = 4 * 1024
"""Bytes kept per replica however many replicas a job has."""
SHUTDOWN_SLACK_SECONDS = 15.0
"""After the pod's deletionTimestamp (request time + grace period): stop waiting for its
containers to stop and save what the log has."""

FINISHED_PHASES = ("Succeeded", "Failed")
"""Pod phases after which no container runs again."""

Action = Literal["wait", "save", "release"]


@dataclass(frozen=True)
class LogDecision:
    """What to do with a deleted pod that carries the save-log finalizer.

    - `wait`: a container still runs; look again at `until` (or on the pod's next event);
    - `save`: read the log of `container`, save it as replica `replica`, then release;
    - `release`: remove the finalizer without saving (`why` says why).
    """

    action: Action
    why: str = ""
    until: datetime | None = None
    replica: int = 0
    container: str = ""


def _map(obj: Any, key: str) -> Mapping[str, Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def parse_timestamp(value: str) -> datetime | None:
    """An RFC 3339 time stamp as an aware UTC datetime; None when empty or unreadable."""
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def has_finalizer(pod: Mapping[str, Any]) -> bool:
    """True when the pod carries the save-log finalizer."""
    return FINALIZER_SAVE_LOG in (_map(pod, "metadata").get("finalizers") or [])


def pod_replica(pod: Mapping[str, Any]) -> int | None:
    """The replica number of a job's pod: completion index (batch Job) or ordinal
    (StatefulSet); None when it has neither."""
    meta = _map(pod, "metadata")
    for source in (_map(meta, "annotations"), _map(meta, "labels")):
        for key in (COMPLETION_INDEX_ANNOTATION, POD_INDEX_LABEL):
            if str(source.get(key, "")).isdigit():
                return int(source[key])
    return None


def log_container(pod: Mapping[str, Any]) -> str:
    """The container whose log is saved: `trainer`, else the pod's first container."""
    names = [str(c.get("name")) for c in _map(pod, "spec").get("containers") or []]
    return CONTAINER_NAME if CONTAINER_NAME in names or not names else names[0]


def pod_finished(pod: Mapping[str, Any]) -> bool:
    """True once the pod has `Succeeded` or `Failed` (its containers ended, the log is whole)."""
    return str(_map(pod, "status").get("phase") or "") in FINISHED_PHASES


def _statuses(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [s for s in _map(pod, "status").get("containerStatuses") or [] if isinstance(s, Mapping)]


def decide(
    pod: Mapping[str, Any], job: Mapping[str, Any] | None, now: datetime
) -> LogDecision | None:
    """The decision for `pod` (`job`: its GryviaAIJob's body, None when it is gone); None when
    the pod does not carry the finalizer, or is neither being deleted nor finished (nothing to
    do). A finished pod (`Succeeded`/`Failed`: its log is complete) is saved and released at
    once, so that finished pods never hold the finalizer while no operator may be running."""
    meta = _map(pod, "metadata")
    if not has_finalizer(pod) or not (meta.get("deletionTimestamp") or pod_finished(pod)):
        return None
    if job is None or _map(job, "metadata").get("deletionTimestamp"):
        return LogDecision("release", why="its job is deleted")
    replica = pod_replica(pod)
    if replica is None:
        return LogDecision("release", why="it has no replica number")
    statuses = _statuses(pod)
    started = any(
        "running" in _map(s, "state") or "terminated" in _map(s, "state") or _map(s, "lastState")
        for s in statuses
    )
    if not started:
        return LogDecision("release", why="its containers never started")
    running = any("running" in _map(s, "state") for s in statuses)
    deleted = parse_timestamp(str(meta.get("deletionTimestamp")))
    until = (deleted or now) + timedelta(seconds=SHUTDOWN_SLACK_SECONDS)
    if running and not pod_finished(pod) and now < until:
        return LogDecision("wait", why="its containers are stopping", until=until)
    return LogDecision("save", replica=replica, container=log_container(pod))


def replica_budget(replicas: int) -> int:
    """Bytes of log kept per replica of a job with `replicas` replicas."""
    share = TOTAL_BYTES // max(replicas, 1)
    return max(MIN_REPLICA_BYTES, min(MAX_REPLICA_BYTES, share))


def cut_marker(kept: int, max_lines: int, max_bytes: int) -> str:
    """The first line of a cut log: how much is kept and the bound."""
    return (
        f"[gryvia: earlier lines not saved; these are the last {kept} line(s), "
        f"the saved log keeps at most {max_lines} lines / {max_bytes // 1024} KiB per replica]"
    )


def cut_tail(
    text: str, *, max_lines: int = MAX_LINES, max_bytes: int = MAX_REPLICA_BYTES
) -> tuple[str, int, bool]:
    """The last whole lines of `text` within `max_lines` lines and `max_bytes` UTF-8 bytes
    (the marker line included), as (saved text, lines kept, cut). A last line longer than the
    whole budget keeps its end. Trailing newlines are dropped."""
    lines = text.rstrip("\n").split("\n") if text.strip("\n") else []
    marker_room = len(cut_marker(max_lines, max_lines, max_bytes).encode()) + 1
    if len(lines) <= max_lines and len(text.encode()) <= max_bytes:
        return "\n".join(lines), len(lines), False
    budget = max_bytes - marker_room
    kept: list[str] = []
    size = 0
    for line in reversed(lines[-max_lines:]):
        width = len(line.encode()) + 1
        if size + width > budget:
            if not kept:  # one huge line: keep its end
                tail = line.encode()[-max(budget - 1, 0) :].decode("utf-8", "ignore")
                kept.append(tail)
            break
        kept.append(line)
        size += width
    kept.reverse()
    return "\n".join([cut_marker(len(kept), max_lines, max_bytes), *kept]), len(kept), True


def should_replace(existing: SavedLog | None, pod_created: str) -> bool:
    """True unless the replica's saved log came from a newer pod (a retried replica's newest
    attempt wins, whichever pod is deleted last)."""
    if existing is None or not existing.pod_created:
        return True
    old, new = parse_timestamp(existing.pod_created), parse_timestamp(pod_created)
    return old is None or new is None or new >= old


def saved_entry(
    pod: Mapping[str, Any], decision: LogDecision, log_text: str, replicas: int, now: datetime
) -> SavedLog:
    """The SavedLog of `pod` from its log text, cut to the bounds."""
    meta = _map(pod, "metadata")
    text, kept, cut = cut_tail(log_text, max_bytes=replica_budget(replicas))
    return SavedLog(
        replica=decision.replica,
        pod=str(meta.get("name", "")),
        container=decision.container,
        pod_created=str(meta.get("creationTimestamp", "")),
        saved_at=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        cut=cut,
        text=text,
        lines=kept,
    )


def owned_by(configmap: Mapping[str, Any], job_uid: str) -> bool:
    """True when the ConfigMap is owned by the job with UID `job_uid`."""
    refs = _map(configmap, "metadata").get("ownerReferences") or []
    return any(isinstance(r, Mapping) and r.get("uid") == job_uid for r in refs)


def configmap_body(job: Mapping[str, Any], saved: SavedLog) -> dict[str, Any]:
    """A new saved-logs ConfigMap for `job` holding `saved`, owned by the job."""
    meta = _map(job, "metadata")
    name = str(meta.get("name", ""))
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": saved_logs_name(name),
            "namespace": str(meta.get("namespace", "")),
            "labels": {LABEL_JOB: name, LABEL_SAVED_LOGS: "true", LABEL_MANAGED_BY: MANAGED_BY},
            "ownerReferences": [
                {
                    "apiVersion": API_VERSION,
                    "kind": "GryviaAIJob",
                    "name": name,
                    "uid": str(meta.get("uid", "")),
                }
            ],
        },
        "data": entry_data(saved),
    }


def finalizer_removal(pod: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The JSON patch removing the save-log finalizer (guarded by a `test` of its position, so
    a concurrent change of the list fails the patch instead of removing another finalizer);
    None when the pod does not carry it."""
    finalizers = list(_map(pod, "metadata").get("finalizers") or [])
    if FINALIZER_SAVE_LOG not in finalizers:
        return None
    path = f"/metadata/finalizers/{finalizers.index(FINALIZER_SAVE_LOG)}"
    return [
        {"op": "test", "path": path, "value": FINALIZER_SAVE_LOG},
        {"op": "remove", "path": path},
    ]
