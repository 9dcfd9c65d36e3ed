"""A cheap projection of GryviaAIJob bodies for the blocker and the start estimate
(`reconcile.pending`), and the typical run length of similar finished jobs. Pure."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gryvia_operator.api.gputype import gpu_type_key
from gryvia_operator.api.helpers import (
    ACTIVE_PHASES,
    TERMINAL_PHASES,
    DurationError,
    gpus_per_pod,
    parse_duration,
    pod_count,
)
from gryvia_operator.api.startestimate import typical_duration
from gryvia_operator.api.submitter import submitter_of

FINISHED = frozenset({"Succeeded", "Failed"})
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True)
class JobFacts:
    """What the blocker and the estimate need of any job."""

    namespace: str
    name: str
    phase: str
    created: dt.datetime = EPOCH
    priority: int = 0
    gpu_type: str = ""
    """Canonical GPU type key ("" for any)."""
    per_pod: int = 0
    pods: int = 1
    timeout_seconds: int | None = None
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    placed: bool = False
    """Scheduled=True or nodes allocated: no longer waits for nodes."""
    admitted: bool = False
    """Admitted=True: its quota holds its GPUs."""
    user: str = ""
    """The submitter (annotation gryvia.io/submitted-by), "" when unknown."""

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.namespace}/{self.name}"

    @property
    def total(self) -> int:
        """GPUs in all."""
        return self.per_pod * self.pods

    @property
    def holds(self) -> bool:
        """True while it counts against its quota (as `quotas.JobView.holds_gpus`)."""
        if self.phase in TERMINAL_PHASES:
            return False
        return self.phase in ACTIVE_PHASES or self.admitted


def _time(value: Any) -> dt.datetime | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _true(conditions: Any, kind: str) -> bool:
    return any(
        isinstance(c, Mapping) and c.get("type") == kind and c.get("status") == "True"
        for c in conditions or []
    )


def job_facts(body: Mapping[str, Any]) -> JobFacts:
    """Project a GryviaAIJob body (as the API returns it); never raises (an unreadable
    timeout counts as none)."""
    meta, spec = body.get("metadata") or {}, body.get("spec") or {}
    status = body.get("status") or {}
    dist = spec.get("distributed") or {}
    enabled = bool(dist.get("enabled"))
    timeout = None
    if spec.get("timeout"):
        try:
            timeout = parse_duration(str(spec["timeout"]), field="spec.timeout")
        except DurationError:
            timeout = None
    conditions = status.get("conditions")
    return JobFacts(
        namespace=str(meta.get("namespace", "")),
        name=str(meta.get("name", "")),
        phase=str(status.get("phase") or "Pending"),
        created=_time(meta.get("creationTimestamp")) or EPOCH,
        priority=_int(spec.get("priority")),
        gpu_type=gpu_type_key(spec.get("gpuType")),
        per_pod=gpus_per_pod(
            gpus=_int(spec.get("gpus")),
            distributed=enabled,
            gpus_per_node=_int(dist.get("gpusPerNode")) or None,
        ),
        pods=pod_count(distributed=enabled, nodes=_int(dist.get("nodes")) or None),
        timeout_seconds=timeout,
        start=_time(status.get("startTime")),
        end=_time(status.get("completionTime")),
        placed=bool(status.get("nodesAllocated")) or _true(conditions, "Scheduled"),
        admitted=_true(conditions, "Admitted"),
        user=submitter_of(body),
    )


def history(jobs: Iterable[JobFacts], namespace: str, gpu_type: str) -> dt.timedelta | None:
    """Typical (median) run length of the finished jobs of the same namespace (tenant) and
    GPU type; None when there is none."""
    runs = [
        (j.end - j.start).total_seconds()
        for j in jobs
        if j.phase in FINISHED and j.start and j.end
        if j.namespace == namespace and j.gpu_type == gpu_type
    ]
    return typical_duration(runs)
