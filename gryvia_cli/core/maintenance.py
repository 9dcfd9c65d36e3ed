"""`gryvia maintenance`: the pure part. Which pods a drain evicts, the patches that start and
end maintenance, the eviction loop (with the API call passed in), its report, and the rows
of `maintenance list`.

The rules are the original's (behaviour reference, `maintenance start`): cordon and annotate
(`gryvia.io/maintenance` = the start, RFC 3339 UTC, kept when already set;
`gryvia.io/maintenance-reason`); `--drain` evicts through the Eviction API only, so
PodDisruptionBudgets hold, skipping DaemonSet pods (their controller ignores cordons and
would recreate them), mirror pods (static pods the kubelet owns: the API cannot delete them)
and finished or terminating pods (nothing left to move); a pod a budget refuses (HTTP 429)
is retried until the timeout, then reported and left, and the command fails (exit 5,
`errors.EXIT_NOT_DRAINED`) with the node still cordoned. `kubectl drain` skips the same
pods for the same reasons.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from gryvia_cli.core.cells import Marked
from gryvia_cli.core.timefmt import human_duration
from gryvia_operator.api.maintenance import (
    Maintenance,
    format_since,
    maintenance_of,
    maintenance_text,
)
from gryvia_operator.api.names import (
    ANNOTATION_MAINTENANCE,
    ANNOTATION_MAINTENANCE_REASON,
    CLI_API_VERSION,
    GPU_RESOURCE,
    LABEL_GPU,
)

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
"""On a mirror pod: the API's copy of a static pod the kubelet runs from a file."""


@dataclass(frozen=True, order=True)
class PodRef:
    """One pod on the node: namespace, name and uid (a pod recreated under the same name,
    as a StatefulSet's, is another pod)."""

    namespace: str
    name: str
    uid: str = field(default="", compare=False)

    def __str__(self) -> str:
        """`namespace/name`."""
        return f"{self.namespace}/{self.name}"


def pod_ref(pod: Mapping[str, Any]) -> PodRef:
    """The PodRef of a Pod object."""
    meta = pod.get("metadata") or {}
    uid = str(meta.get("uid") or "")
    return PodRef(str(meta.get("namespace") or ""), str(meta.get("name") or ""), uid)


def skip_reason(pod: Mapping[str, Any]) -> str:
    """Why a drain leaves `pod` alone ("" when it evicts it): `DaemonSet pod`, `mirror pod`,
    `finished (Succeeded)` or `terminating`."""
    meta = pod.get("metadata") or {}
    if any(ref.get("kind") == "DaemonSet" for ref in meta.get("ownerReferences") or []):
        return "DaemonSet pod"
    if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        return "mirror pod"
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        return f"finished ({phase})"
    if meta.get("deletionTimestamp"):
        return "terminating"
    return ""


@dataclass(frozen=True)
class DrainPlan:
    """The pods of one node a drain evicts, and those it skips with the reason, sorted."""

    evict: tuple[PodRef, ...]
    skipped: tuple[tuple[PodRef, str], ...]


def drain_plan(pods: Iterable[Mapping[str, Any]], node: str) -> DrainPlan:
    """Split the pods bound to `node` (`spec.nodeName`; others are ignored) into those to
    evict and those skipped (`skip_reason`)."""
    evict, skipped = [], []
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName") != node:
            continue
        why = skip_reason(pod)
        if why:
            skipped.append((pod_ref(pod), why))
        else:
            evict.append(pod_ref(pod))
    return DrainPlan(tuple(sorted(evict)), tuple(sorted(skipped)))


def start_patch(node: Mapping[str, Any], reason: str, now: datetime) -> dict[str, Any]:
    """The merge patch that puts a Node in maintenance: cordon, the start (kept when the Node
    has one already, so a second `start` does not reset it) and the reason (the current one
    when `reason` is empty). Raises ValueError naming --reason when there is no reason at all.
    """
    marks = maintenance_of(node)
    reason = reason.strip() or (marks.reason if marks else "")
    if not reason:
        raise ValueError("--reason is required to start maintenance (e.g. --reason 'XID 79')")
    since = marks.since if marks and marks.since else format_since(now)
    return {
        "metadata": {
            "annotations": {ANNOTATION_MAINTENANCE: since, ANNOTATION_MAINTENANCE_REASON: reason}
        },
        "spec": {"unschedulable": True},
    }


END_PATCH: dict[str, Any] = {
    "metadata": {
        "annotations": {ANNOTATION_MAINTENANCE: None, ANNOTATION_MAINTENANCE_REASON: None}
    },
    "spec": {"unschedulable": None},
}
"""The merge patch that ends maintenance: uncordon, remove both annotations."""

_BUDGET = re.compile(r"disruption budget (?P<name>[^\s]+)", re.IGNORECASE)


def refusal_text(status: Mapping[str, Any], namespace: str) -> tuple[str, str]:
    """(budget, text) from the Status an eviction was refused with (HTTP 429): the
    PodDisruptionBudget `namespace/name` its `details.causes` name (reason DisruptionBudget,
    "The disruption budget NAME needs N healthy pods and has M currently"), "" when none is
    named, and the words to show."""
    causes = [
        str(c.get("message") or "")
        for c in (status.get("details") or {}).get("causes") or []
        if isinstance(c, Mapping)
    ]
    for text in [*causes, str(status.get("message") or "")]:
        found = _BUDGET.search(text)
        if found:
            name = found.group("name").rstrip(".,")
            return f"{namespace}/{name}", text.strip()
    return "", (causes[0] if causes else str(status.get("message") or "refused")).strip()


@dataclass(frozen=True)
class Outcome:
    """What one eviction request did: `evicted` (accepted: the pod terminates), `gone` (no
    such pod any more), `refused` (429: try again later) or `failed` (refused for good, e.g.
    the pod has two budgets); `budget` and `text` say who refused and why."""

    kind: Literal["evicted", "gone", "refused", "failed"]
    budget: str = ""
    text: str = ""


@dataclass
class DrainReport:
    """What `maintenance start` did to one node: its marks, the pods evicted, those no
    budget let go (with the budget and why), those skipped, and evicted pods still
    terminating when the timeout ended."""

    node: str
    since: str
    reason: str
    drained: bool = False
    evicted: list[PodRef] = field(default_factory=list)
    not_evicted: list[tuple[PodRef, Outcome]] = field(default_factory=list)
    skipped: list[tuple[PodRef, str]] = field(default_factory=list)
    terminating: list[PodRef] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True unless a pod could not be evicted."""
        return not self.not_evicted

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of `maintenance start -o json` (kind MaintenanceReport)."""

        def ref(p: PodRef, **extra: str) -> dict[str, str]:
            return {"namespace": p.namespace, "name": p.name, **extra}

        return {
            "apiVersion": CLI_API_VERSION,
            "kind": "MaintenanceReport",
            "node": self.node,
            "since": self.since,
            "reason": self.reason,
            "cordoned": True,
            "drained": self.drained,
            "evicted": [ref(p) for p in self.evicted],
            "notEvicted": [ref(p, budget=o.budget, reason=o.text) for p, o in self.not_evicted],
            "skipped": [ref(p, reason=why) for p, why in self.skipped],
            "terminating": [ref(p) for p in self.terminating],
        }


def drain(
    plan: DrainPlan,
    evict: Callable[[PodRef], Outcome],
    report: DrainReport,
    *,
    timeout: float,
    interval: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    on_outcome: Callable[[PodRef, Outcome], None] | None = None,
) -> DrainReport:
    """Evict every pod of `plan` with `evict`, retrying the refused ones every `interval`
    seconds until `timeout` seconds have passed; fill `report` (evicted, not evicted,
    skipped) and return it. `on_outcome` hears each final outcome (evicted, gone, and the
    refusals left at the end). Errors of `evict` other than refusals propagate."""
    report.skipped = list(plan.skipped)
    report.drained = True
    deadline = clock() + timeout
    waiting = list(plan.evict)
    last: dict[PodRef, Outcome] = {}
    while waiting:
        again = []
        for pod in waiting:
            outcome = evict(pod)
            if outcome.kind == "refused":
                last[pod] = outcome
                again.append(pod)
                continue
            if outcome.kind == "failed":
                report.not_evicted.append((pod, outcome))
            elif outcome.kind == "evicted":
                report.evicted.append(pod)
            if on_outcome is not None:
                on_outcome(pod, outcome)
        waiting = again
        left = deadline - clock()
        if not waiting or left <= 0:
            break
        sleep(min(interval, left))
    for pod in waiting:
        report.not_evicted.append((pod, last[pod]))
        if on_outcome is not None:
            on_outcome(pod, last[pod])
    report.not_evicted.sort(key=lambda item: item[0])
    return report


def still_there(evicted: Sequence[PodRef], pods: Iterable[Mapping[str, Any]]) -> list[PodRef]:
    """The evicted pods (same uid) still among `pods`: terminating, not gone yet."""
    present = {(p.namespace, p.name, p.uid) for p in map(pod_ref, pods)}
    return [p for p in evicted if (p.namespace, p.name, p.uid) in present]


@dataclass(frozen=True)
class MarkedNode:
    """A row of `maintenance list`: a Node with maintenance marks."""

    name: str
    marks: Maintenance
    gpu_type: str
    gpus: str

    def age_seconds(self, now: datetime) -> float | None:
        """Seconds since the maintenance started (None when the start is unreadable)."""
        started = self.marks.started()
        return max((now - started).total_seconds(), 0.0) if started else None

    def as_dict(self, now: datetime) -> dict[str, Any]:
        """One item of `maintenance list -o json`."""
        age = self.age_seconds(now)
        return {
            "node": self.name,
            "since": self.marks.since,
            "ageSeconds": None if age is None else int(age),
            "reason": self.marks.reason,
            "cordoned": self.marks.cordoned,
            "gpuType": self.gpu_type,
            "gpus": self.gpus,
        }


def marked_nodes(nodes: Iterable[Mapping[str, Any]]) -> list[MarkedNode]:
    """The Nodes carrying maintenance marks, by name (cordoned or not: an uncordoned one was
    taken back into service without `maintenance end`)."""
    out = []
    for node in nodes:
        marks = maintenance_of(node)
        if marks is None:
            continue
        meta, status = node.get("metadata") or {}, node.get("status") or {}
        out.append(
            MarkedNode(
                str(meta.get("name") or ""),
                marks,
                _gpu_type(meta.get("labels") or {}),
                str((status.get("allocatable") or {}).get(GPU_RESOURCE) or "-"),
            )
        )
    return sorted(out, key=lambda n: n.name)


def _gpu_type(labels: Mapping[str, Any]) -> str:
    """The node's GPU type: registration's gryvia.io/gpu label, else GPU feature discovery's
    product label normalized (`NVIDIA-H100-80GB-HBM3` -> `H100`), else `-`."""
    from gryvia_operator.api.gputype import normalize_gpu_type

    product = str(labels.get("nvidia.com/gpu.product") or "")
    return str(labels.get(LABEL_GPU) or "") or (normalize_gpu_type(product) if product else "-")


LIST_COLUMNS = ("node", "since", "age", "reason", "status")
LIST_WIDE_COLUMNS = (*LIST_COLUMNS, "gpu type", "gpus")


def list_row(node: MarkedNode, now: datetime, *, wide: bool) -> list[Any]:
    """One `maintenance list` row; STATUS is `in maintenance` (cordoned) or `uncordoned`
    (marked, but taking pods again: `maintenance end` clears the marks)."""
    age = node.age_seconds(now)
    status = (
        Marked(maintenance_text(""), "warn")
        if node.marks.cordoned
        else Marked("uncordoned", "error")
    )
    row: list[Any] = [
        node.name,
        node.marks.since or "-",
        "-" if age is None else human_duration(age),
        node.marks.reason or "-",
        status,
    ]
    return [*row, node.gpu_type, node.gpus] if wide else row
