"""What a GryviaAIJob amounts to for people: GPUs, phase, timings, conditions, table rows.

Works on the raw API object and tolerates objects that do not validate (written by another
version): a missing or odd field becomes a default, never an exception.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from gryvia_cli.core import timefmt
from gryvia_cli.core.cells import Marked, plural
from gryvia_cli.core.phases import is_terminal, normalize_phase, phase_marker
from gryvia_operator.api.gputype import gpu_type_key
from gryvia_operator.api.helpers import gpus_per_pod, pod_count
from gryvia_operator.api.names import (
    ANNOTATION_CANCEL,
    COMPLETION_INDEX_ANNOTATION,
    JOB_POD_LABELS,
    LABEL_PROJECT,
    POD_INDEX_LABEL,
)
from gryvia_operator.api.preemption import requeue_pending
from gryvia_operator.api.submitter import UNKNOWN, submitter_of

if TYPE_CHECKING:  # the models load pydantic: only views that show a blocker pay for it
    from pydantic import BaseModel

    from gryvia_operator.api.pending import EstimatedStart, PendingStatus

M = TypeVar("M", bound="BaseModel")
J = TypeVar("J", bound=Mapping[str, Any])


def _int(value: Any, default: int = 0) -> int:
    if value is None:  # the usual case (an unset field) first: this runs ~7 times per job
        return default
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return default


def _map(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:  # what JSON gives (or None): skips the slower ABC check
        return value
    if value is None:
        return {}
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class JobSummary:
    """The facts about one job that lists, queues, capacity and status views use."""

    name: str
    namespace: str
    job_type: str
    phase: str
    message: str
    gpu_type: str
    """The requested GPU type, "" when unconstrained (unset or `any`)."""
    gpus_per_pod: int
    pods: int
    image: str
    created: datetime | None
    started: datetime | None
    completed: datetime | None
    suspended: bool
    priority: int
    replicas_ready: int
    retries: int
    cancel_requested: bool
    distributed: bool
    timeout: str
    conditions: tuple[Mapping[str, Any], ...] = field(default=())
    nodes_allocated: tuple[str, ...] = field(default=())
    priority_class: str = ""
    """`spec.priorityClassName` (a GryviaPriority), "" when unset."""
    preemptions: int = 0
    """`status.preemptions`: times a higher-priority job preempted it."""
    submitter: str = ""
    """Who submitted it (annotation gryvia.io/submitted-by), "" when not recorded."""
    project: str = ""
    """Its project (label gryvia.io/project), "" when it has none."""
    retry_limit: int = 0
    """`spec.retryLimit`: failed pods the job may have before it fails."""
    pending_raw: Mapping[str, Any] | None = field(default=None, repr=False)
    """`status.pending` as stored; read it through `pending`."""
    estimate_raw: Mapping[str, Any] | None = field(default=None, repr=False)
    """`status.estimatedStart` as stored; read it through `estimated_start`."""
    kueue: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """`status.kueue` as stored (Kueue integration): queueName, clusterQueue, flavor,
    borrowedGPUs; {} for a job Gryvia's own gate admits."""
    metrics: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """`status.metrics` as stored (the operator's GPU samples, docs/gpu-metrics.md)."""

    @property
    def gpu_percent(self) -> str:
        """GPU activity as the operator sampled it: the last sample's while the job runs,
        the mean over its run once it ended; "-" when never sampled."""
        key = "meanActivityPercent" if self.terminal else "lastActivityPercent"
        value = self.metrics.get(key)
        return f"{float(value):.0f}%" if isinstance(value, int | float) else "-"

    @property
    def kueue_queue(self) -> str:
        """The job's Kueue LocalQueue, "" when Kueue does not admit it."""
        return str(self.kueue.get("queueName") or "")

    @property
    def kueue_flavor(self) -> str:
        """The ResourceFlavor of the job's GPUs once Kueue admitted it, else ""."""
        return str(self.kueue.get("flavor") or "")

    @property
    def kueue_borrowed(self) -> int | None:
        """GPUs borrowed from the cohort at admission, None when not recorded."""
        value = self.kueue.get("borrowedGPUs")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def pending(self) -> PendingStatus | None:
        """The operator's structured blocker (`status.pending`), None when absent or
        unreadable (another version). The model (and pydantic) is loaded only for a job
        that has one."""
        if not self.pending_raw:
            return None
        from gryvia_operator.api.pending import PendingStatus

        return _model(PendingStatus, self.pending_raw)

    @property
    def estimated_start(self) -> EstimatedStart | None:
        """The operator's start estimate (`status.estimatedStart`), None when absent or
        unreadable."""
        if not self.estimate_raw:
            return None
        from gryvia_operator.api.pending import EstimatedStart

        return _model(EstimatedStart, self.estimate_raw)

    @property
    def total_gpus(self) -> int:
        """GPUs of the whole job: pods x GPUs per pod."""
        return self.pods * self.gpus_per_pod

    @property
    def cpu_only(self) -> bool:
        """True when the pods request no GPU."""
        return self.gpus_per_pod == 0

    @property
    def type_key(self) -> str:
        """Grouping key for queues and capacity: the GPU type, `any`, or `cpu`."""
        if self.cpu_only:
            return "cpu"
        return self.gpu_type or "any"

    @property
    def terminal(self) -> bool:
        """True once the job reached a terminal phase; a job preempted by priority is not
        (it is requeued and runs again: waits and follows go on)."""
        if requeue_pending({"phase": self.phase, "conditions": self.conditions}):
            return False
        return is_terminal(self.phase)

    def condition(self, kind: str) -> Mapping[str, Any] | None:
        """The condition of type `kind`, or None."""
        return next((c for c in self.conditions if c.get("type") == kind), None)


def summarize_job(obj: Mapping[str, Any]) -> JobSummary:
    """Summarise a GryviaAIJob API object (never raises on odd content)."""
    meta, spec, status = _map(obj.get("metadata")), _map(obj.get("spec")), _map(obj.get("status"))
    dist = _map(spec.get("distributed"))
    enabled = dist.get("enabled") is True
    per_pod = gpus_per_pod(
        gpus=_int(spec.get("gpus")),
        distributed=enabled,
        gpus_per_node=_int(dist.get("gpusPerNode")) or None,
    )
    gpu_type = spec.get("gpuType") if isinstance(spec.get("gpuType"), str) else ""
    annotations = _map(meta.get("annotations"))
    conditions = tuple(c for c in status.get("conditions") or [] if isinstance(c, Mapping))
    return JobSummary(
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        job_type=str(spec.get("type") or ""),
        phase=normalize_phase(status.get("phase")),
        message=str(status.get("message") or ""),
        gpu_type=gpu_type_key(gpu_type),
        gpus_per_pod=per_pod,
        pods=pod_count(distributed=enabled, nodes=_int(dist.get("nodes")) or None),
        image=str(spec.get("image") or ""),
        created=timefmt.parse_time(meta.get("creationTimestamp")),
        started=timefmt.parse_time(status.get("startTime")),
        completed=timefmt.parse_time(status.get("completionTime")),
        suspended=spec.get("suspend") is True,
        priority=_int(spec.get("priority")),
        replicas_ready=_int(status.get("replicasReady")),
        retries=_int(status.get("retries")),
        retry_limit=_int(spec.get("retryLimit")),
        cancel_requested=str(annotations.get(ANNOTATION_CANCEL, "")).lower() == "true",
        distributed=enabled,
        timeout=str(spec.get("timeout") or ""),
        conditions=conditions,
        nodes_allocated=tuple(str(n) for n in status.get("nodesAllocated") or []),
        pending_raw=_map(status.get("pending")) or None,
        estimate_raw=_map(status.get("estimatedStart")) or None,
        priority_class=str(spec.get("priorityClassName") or ""),
        preemptions=_int(status.get("preemptions")),
        submitter=submitter_of(obj),
        project=str(_map(meta.get("labels")).get(LABEL_PROJECT) or ""),
        kueue=_map(status.get("kueue")),
        metrics=_map(status.get("metrics")),
    )


def by_submitter(items: Iterable[J], wanted: frozenset[str] | None) -> list[J]:
    """The GryviaAIJob objects whose submitter (annotation gryvia.io/submitted-by) is in
    `wanted`; all of them when `wanted` is None. Jobs without a submitter match no user."""
    if wanted is None:
        return list(items)
    return [item for item in items if submitter_of(item) in wanted]


def priority_text(job: JobSummary) -> str:
    """The job's priority as shown: `90`, or `urgent (GryviaPriority)` when it names one."""
    if job.priority_class:
        return f"{job.priority_class} (GryviaPriority)"
    return str(job.priority)


def preemption_text(job: JobSummary) -> str:
    """`preempted 2 times, last by ns/high` ("" when never preempted)."""
    if job.preemptions <= 0:
        return ""
    cond = job.condition("Preempted") or {}
    text = str(cond.get("message") or "")
    who = text.split("preempted by ", 1)[1].split(" ", 1)[0] if "preempted by " in text else ""
    times = "1 time" if job.preemptions == 1 else f"{job.preemptions} times"
    return f"preempted {times}" + (f", last by {who}" if who else "")


def _model(model: type[M], value: Mapping[str, Any] | None) -> M | None:
    """`value` validated as the pydantic `model`, None when absent or not valid."""
    from pydantic import ValidationError

    if value is None:
        return None
    try:
        return model.model_validate(value)
    except ValidationError:
        return None


def gpu_text(job: JobSummary) -> str:
    """GPUs as people say them: `8 x H100`, `2 x 8 H100` (pods x per pod), `CPU only`."""
    if job.cpu_only:
        return "CPU only" if job.pods == 1 else f"{job.pods} pods, CPU only"
    kind = job.gpu_type or "any"
    if job.pods == 1:
        return f"{job.gpus_per_pod} x {kind}"
    return f"{job.pods} x {job.gpus_per_pod} {kind} ({plural(job.total_gpus, 'GPU')})"


def durations(job: JobSummary, now: datetime) -> dict[str, float | None]:
    """Seconds spent waiting (created to started, or to now) and running (started to
    completed, or to now); None where a timestamp is missing."""
    waited_until = job.started or (job.completed if job.terminal else now)
    ran_until = job.completed or (None if job.terminal else now)
    return {
        "waiting": timefmt.seconds_between(job.created, waited_until),
        "running": timefmt.seconds_between(job.started, ran_until) if job.started else None,
    }


JOB_COLUMNS = ("name", "user", "type", "gpus", "gpu type", "status", "age")
JOB_WIDE_COLUMNS = (
    *JOB_COLUMNS,
    "pods",
    "ready",
    "duration",
    "nodes",
    "gpu%",
    "cost",
    "message",
)


def bound_nodes(pods: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], tuple[str, ...]]:
    """The nodes each job's pods are bound to (`spec.nodeName`, set by the scheduler), by
    (namespace, job), in replica order without repeats; unbound pods add nothing.

    This is where the pods run: the operator's `status.nodesAllocated` is only its planner's
    advice (pods are steered by node selector, and the scheduler may pick another node of
    the type), so views show these instead."""
    found: dict[tuple[str, str], list[str]] = {}
    for pod in sort_pods(list(pods)):
        job = job_of_pod(pod)
        node = _map(pod.get("spec")).get("nodeName")
        if not job or not node:
            continue
        key = (str(_map(pod.get("metadata")).get("namespace") or ""), job)
        names = found.setdefault(key, [])
        if node not in names:
            names.append(str(node))
    return {key: tuple(names) for key, names in found.items()}


def job_row(
    job: JobSummary,
    now: datetime,
    *,
    wide: bool = False,
    nodes: Sequence[str] = (),
    cost: str = "-",
) -> list[Any]:
    """One `list jobs` row: NAME, USER (the submitter, `-` when not recorded), TYPE, GPUS
    (total), GPU TYPE, STATUS, AGE, and with `wide`
    PODS, READY, DURATION, NODES (`nodes`: where the pods are bound, see `bound_nodes`),
    GPU% (`JobSummary.gpu_percent`), COST (`cost`, the text of the cost so far) and
    MESSAGE."""
    status = job.phase + (" (cancelling)" if job.cancel_requested and not job.terminal else "")
    row: list[Any] = [
        job.name,
        job.submitter or UNKNOWN,
        job.job_type or "-",
        job.total_gpus,
        "-" if job.cpu_only else (job.gpu_type or "any"),
        Marked(status, phase_marker(job.phase)),
        timefmt.age(job.created, now),
    ]
    if wide:
        ran = durations(job, now)["running"]
        row += [
            job.pods,
            f"{job.replicas_ready}/{job.pods}",
            timefmt.format_seconds(ran),
            ",".join(nodes) or "-",
            job.gpu_percent,
            cost,
            job.message or "-",
        ]
    return row


def job_of_pod(pod: Mapping[str, Any]) -> str | None:
    """The job a pod belongs to, from the first of JOB_POD_LABELS it carries."""
    labels = _map(_map(pod.get("metadata")).get("labels"))
    for key in JOB_POD_LABELS:
        if labels.get(key):
            return str(labels[key])
    return None


def replica_of_pod(pod: Mapping[str, Any]) -> int | None:
    """A pod's replica number: completion index (Indexed Job) or ordinal (StatefulSet)."""
    meta = _map(pod.get("metadata"))
    for source in (_map(meta.get("annotations")), _map(meta.get("labels"))):
        for key in (COMPLETION_INDEX_ANNOTATION, POD_INDEX_LABEL):
            if str(source.get(key, "")).isdigit():
                return int(source[key])
    tail = str(meta.get("name") or "").rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None


def sort_pods(pods: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Pods by replica number (unknown last), then newest first for the same replica."""

    def key(pod: Mapping[str, Any]) -> tuple[int, float]:
        replica = replica_of_pod(pod)
        created = timefmt.parse_time(_map(pod.get("metadata")).get("creationTimestamp"))
        return (
            replica if replica is not None else 1 << 30,
            -(created.timestamp() if created else 0),
        )

    return sorted(pods, key=key)


def nothing_to_cancel(name: str, phase: str) -> str:
    """What `gryvia cancel` and the console say, writing nothing, about a job that already
    ended in `phase`."""
    return f"job {name} is already {phase}; nothing to cancel"
