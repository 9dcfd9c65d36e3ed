"""The saved-logs ConfigMap of a job: the last lines of each replica's deleted pod.

The operator writes it (`gryvia_operator.reconcile.savedlogs` decides what, the pod handler
writes it) when a pod of the job is deleted: Kubernetes' Job controller deleting the replicas
still running when a sibling failed, the operator deleting a cancelled or preempted job's
workload, or a pod deleted by hand. `gryvia logs` reads it when a replica has no pod.

One ConfigMap per job, named `saved_logs_name(job)` (`<job>-logs`), labelled
`gryvia.io/job=<job>` and `gryvia.io/saved-logs=true`, owned by the GryviaAIJob (deleted
with it). Per replica N it holds two `data` keys:

- `replica-N.log`: the saved text, whole lines joined by "\\n"; when the log was longer than
  the bound, its first line is `CUT_MARKER`-style text saying how much was kept;
- `replica-N.json`: `{"pod", "container", "podCreated", "savedAt", "cut", "lines"}` (times in
  RFC 3339 UTC, `lines` the number of log lines kept).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LOG_SUFFIX = ".log"
META_SUFFIX = ".json"
KEY_PREFIX = "replica-"


@dataclass(frozen=True)
class SavedLog:
    """One replica's saved log and where it came from."""

    replica: int
    pod: str
    container: str
    pod_created: str
    """The pod's creationTimestamp (RFC 3339): a newer pod of the replica replaces the entry."""
    saved_at: str
    """When the operator saved it (RFC 3339, UTC)."""
    cut: bool
    """True when the log was longer than the bound and only its last part is kept."""
    text: str
    lines: int

    def text_lines(self) -> list[str]:
        """The saved lines (the cut marker first when `cut`)."""
        return self.text.split("\n") if self.text else []


def log_key(replica: int) -> str:
    """The `data` key of replica `replica`'s saved text: `replica-<N>.log`."""
    return f"{KEY_PREFIX}{replica}{LOG_SUFFIX}"


def meta_key(replica: int) -> str:
    """The `data` key of replica `replica`'s metadata: `replica-<N>.json`."""
    return f"{KEY_PREFIX}{replica}{META_SUFFIX}"


def entry_data(saved: SavedLog) -> dict[str, str]:
    """The two `data` entries of `saved`, ready to merge into the ConfigMap."""
    meta = {
        "pod": saved.pod,
        "container": saved.container,
        "podCreated": saved.pod_created,
        "savedAt": saved.saved_at,
        "cut": saved.cut,
        "lines": saved.lines,
    }
    return {
        log_key(saved.replica): saved.text,
        meta_key(saved.replica): json.dumps(meta, sort_keys=True),
    }


def parse_saved_logs(configmap: Mapping[str, Any] | None) -> dict[int, SavedLog]:
    """Replica -> SavedLog from a saved-logs ConfigMap (None or {} when there is none), in
    replica order. Entries whose metadata is missing or unreadable are skipped."""
    data = (configmap or {}).get("data") or {}
    out: dict[int, SavedLog] = {}
    for key, raw in data.items():
        if not (key.startswith(KEY_PREFIX) and key.endswith(META_SUFFIX)):
            continue
        number = key[len(KEY_PREFIX) : -len(META_SUFFIX)]
        if not number.isdigit():
            continue
        try:
            meta = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(meta, dict):
            continue
        replica = int(number)
        out[replica] = SavedLog(
            replica=replica,
            pod=str(meta.get("pod", "")),
            container=str(meta.get("container", "")),
            pod_created=str(meta.get("podCreated", "")),
            saved_at=str(meta.get("savedAt", "")),
            cut=bool(meta.get("cut", False)),
            text=str(data.get(log_key(replica)) or ""),
            lines=int(meta.get("lines") or 0),
        )
    return dict(sorted(out.items()))
