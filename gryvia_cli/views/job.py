"""One job's status view (`status JOB`, `describe job`).

Reads the job, its pods and events; prints spec summary, phase, timings, conditions, pods
and events; `show_job` prints it once or follows it until the job ends.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gryvia_cli.cli.session import Session
from gryvia_cli.core import timefmt
from gryvia_cli.core.cells import Marked
from gryvia_cli.core.gpuuse import GpuUse, job_gpu_use, summary_text
from gryvia_cli.core.jobs import (
    JobSummary,
    bound_nodes,
    durations,
    gpu_text,
    preemption_text,
    priority_text,
    replica_of_pod,
    summarize_job,
)
from gryvia_cli.core.phases import phase_marker
from gryvia_cli.core.spend import JobCost, cost_text
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    emit,
    emit_marked,
    render_data,
    render_table,
    section,
)
from gryvia_operator.api.names import child_names


@dataclass
class JobSnapshot:
    """A job with its pods and events at one moment."""

    job: dict[str, Any]
    pods: list[Any]
    events: list[Any]
    cost: JobCost | None = None
    """The cost so far (None when it was not read)."""
    gpus: list[GpuUse] | None = None
    """Its GPUs' use as dcgm-exporter reads it (None when not read: no pod runs)."""
    gpus_note: str = ""
    """Why the GPU use could not be read, in part or at all ("" when it could)."""
    gpus_source: str = ""
    """Where the GPU use was read (`views.gpumetrics.GpuRead.source`)."""
    checkpoints: dict[str, str] | None = None
    """A guarded job's checkpoint record: the data of its ConfigMap `<job>-checkpoint`
    (docs/checkpoints.md: steps, folder, claim, GryviaStorage); None when it has none."""

    @property
    def summary(self) -> JobSummary:
        """The job's summary."""
        return summarize_job(self.job)

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON shape of `status JOB -o json` (kind JobStatus,
        docs/reference/json/): `{apiVersion, kind, job, pods, events, nodes, gpus, gpusSource,
        cost}` with the API objects as they are, the nodes the pods are bound
        to, the GPUs' use and where it was read, the cost so far
        `{soFar, perHour, currency, metered}` (null when unknown), and `checkpoints`: a
        guarded job's checkpoint record (null when it has none)."""
        from gryvia_operator.api.names import CLI_API_VERSION

        cost = self.cost
        return {
            "apiVersion": CLI_API_VERSION,
            "kind": "JobStatus",
            "job": self.job,
            "pods": self.pods,
            "events": self.events,
            "nodes": list(self.nodes),
            "gpus": None if self.gpus is None else [u.as_dict() for u in self.gpus],
            "gpusSource": self.gpus_source or None,
            "cost": None
            if cost is None
            else {
                "soFar": round(cost.so_far, 4),
                "perHour": round(cost.per_hour, 4),
                "currency": cost.currency,
                "metered": cost.metered,
            },
            "checkpoints": self.checkpoints,
        }

    @property
    def nodes(self) -> tuple[str, ...]:
        """The nodes the job's pods are bound to (`spec.nodeName`), in replica order."""
        s = self.summary
        return bound_nodes(self.pods).get((s.namespace, s.name), ())

    def fingerprint(self) -> tuple[Any, ...]:
        """What changes when the view changes (watch mode prints only then)."""
        s = self.summary
        conds = tuple((c.get("type"), c.get("status"), c.get("reason")) for c in s.conditions)
        pods = tuple(
            ((p.get("metadata") or {}).get("name"), (p.get("status") or {}).get("phase"))
            for p in self.pods
        )
        return (s.phase, s.message, conds, pods, len(self.events))


def job_snapshot(state: Session, name: str, namespace: str, *, gpus: bool = True) -> JobSnapshot:
    """Read the job (NotFoundError if missing), its pods and the events about them, and with
    `gpus` its running pods' GPU use from the dcgm-exporters."""
    from gryvia_cli.core.events import since
    from gryvia_cli.views.reads import get_namespaced, read_pricing, try_read
    from gryvia_cli.views.streams import job_pods

    access = state.access()
    job = get_namespaced(access, r.AIJOB, name, namespace)
    pods = try_read(lambda: job_pods(access, namespace, name), "pods") or []
    running = {
        str(p["metadata"]["name"]): (replica_of_pod(p), str((p.get("spec") or {}).get("nodeName")))
        for p in pods
        if (p.get("status") or {}).get("phase") == "Running"
    }
    gpu_read = None
    if running and gpus:  # beside the reads below: it waits on the exporters
        from concurrent.futures import ThreadPoolExecutor

        from gryvia_cli.views.gpumetrics import read_gpus

        pool = ThreadPoolExecutor(1, thread_name_prefix="gpu-read")
        nodes = {node for _, node in running.values()}
        url = state.prometheus_url()
        gpu_read = pool.submit(read_gpus, access, nodes, set(running), url)
        pool.shutdown(wait=False)
    names = child_names(name)
    names |= {str((p.get("metadata") or {}).get("name")) for p in pods}
    events = try_read(lambda: access.items(r.EVENT, namespace), "events") or []
    ours = [
        e
        for e in events
        if ((e.get("involvedObject") or e.get("regarding") or {}).get("name")) in names
    ]
    created = summarize_job(job).created
    cost = read_pricing(access, []).job_cost(job, state.now())
    snapshot = JobSnapshot(job, list(pods), since(ours, created), cost)
    if (job.get("spec") or {}).get("storage"):  # a guarded job's checkpoints live there
        snapshot.checkpoints = _checkpoints(access, name, namespace)
    if gpu_read is not None:
        read = gpu_read.result()
        snapshot.gpus_note, snapshot.gpus_source = read.note, read.source
        replicas = {pod: replica for pod, (replica, _) in running.items()}
        snapshot.gpus = job_gpu_use(read.readings, namespace, replicas)
    return snapshot


def _checkpoints(access: Any, name: str, namespace: str) -> dict[str, str] | None:
    """The data of the job's checkpoint ConfigMap; None when there is none or it cannot be
    read (a job no guard covers has none: not worth a warning)."""
    from gryvia_cli.errors import ApiError, ForbiddenError, NotFoundError
    from gryvia_operator.api.checkpointguard import configmap_name

    try:
        found = access.get(r.CONFIG_MAP, configmap_name(name), namespace)
    except (NotFoundError, ForbiddenError, ApiError):
        return None
    return {str(k): str(v) for k, v in (found.get("data") or {}).items()}


def _line(label: str, *parts: Any) -> None:
    emit_marked([f"{label + ':':<13}", *parts])


def render_job(snapshot: JobSnapshot, now: datetime) -> None:
    """Print the job view."""
    from gryvia_cli.core.events import event_rows

    s = snapshot.summary
    section(f"Job {s.name}")
    _line("Namespace", s.namespace)
    _line("Type", s.job_type or "-")
    _line("Image", s.image or "-")
    _line("GPUs", gpu_text(s))
    if s.distributed:
        dist = (snapshot.job.get("spec") or {}).get("distributed") or {}
        backend = dist.get("backend") or "nccl"
        _line(
            "Distributed", f"{s.pods} pods, {dist.get('framework') or 'pytorch'}, backend {backend}"
        )
    limits = f"timeout {s.timeout or 'none'}, priority {priority_text(s)}"
    _line("Limits", f"{limits}, retry limit {s.retry_limit}")
    if s.retries:
        _line("Retries", f"{s.retries} failed pod(s) of the {s.retry_limit} allowed")
    if s.preemptions:
        _line("Preempted", preemption_text(s).removeprefix("preempted "))
    status = s.phase + (" (cancel requested)" if s.cancel_requested and not s.terminal else "")
    _line("Phase", Marked(status, phase_marker(s.phase)))
    if s.message:
        _line("Message", s.message)
    if s.pending is not None and not s.terminal:
        from gryvia_operator.api.pendingtext import waiting_line

        _line("Waiting", waiting_line(s.pending, s.estimated_start).removeprefix("waiting: "))
    times = durations(s, now)
    _line("Created", f"{timefmt.age(s.created, now)} ago")
    waited = timefmt.format_seconds(times["waiting"])
    if s.started:
        ran = timefmt.format_seconds(times["running"])
        label = "Took" if s.terminal else "Running for"
        _line("Timing", f"waited {waited}, {label.lower()} {ran}")
    else:
        _line("Timing", f"{'waited' if s.terminal else 'waiting for'} {waited}")
    if snapshot.nodes:
        _line("Nodes", ", ".join(snapshot.nodes))
    if snapshot.cost is not None:
        _line("Cost", _cost_line(snapshot.cost))
    if snapshot.checkpoints is not None:
        from gryvia_cli.core.checkpointguards import checkpoints_text

        _line("Checkpoints", checkpoints_text(snapshot.checkpoints, now))
    if snapshot.gpus is not None:
        _line(
            "GPU use", summary_text(snapshot.gpus) or f"- ({snapshot.gpus_note or 'no readings'})"
        )
    if s.conditions:
        section("Conditions")
        render_table(
            ["type", "status", "reason", "message", "age"],
            [
                [
                    c.get("type"),
                    Marked(str(c.get("status")), "ok" if c.get("status") == "True" else "warn"),
                    c.get("reason") or "",
                    c.get("message") or "",
                    timefmt.age(c.get("lastTransitionTime"), now),
                ]
                for c in s.conditions
            ],
        )
    section("Pods")
    if snapshot.pods:
        render_table(
            ["name", "replica", "phase", "node", "restarts", "age"],
            [_pod_row(p, now) for p in snapshot.pods],
        )
    else:
        emit("  <none yet>")
    if snapshot.gpus:
        section(f"GPUs (from {snapshot.gpus_source})" if snapshot.gpus_source else "GPUs")
        render_table(
            ["replica", "pod", "node", "gpu", "activity %", "tensor %", "memory MiB", "power W"],
            [_gpu_row(u) for u in snapshot.gpus],
        )
    section("Events")
    if snapshot.events:
        render_table(
            ["last seen", "type", "reason", "object", "message"], event_rows(snapshot.events, now)
        )
    else:
        emit("  <none>")


def _cost_line(cost: JobCost) -> str:
    shown = cost_text(cost)
    if shown == "-":
        return "- (no usage records and no catalog price)"
    source = "metered" if cost.metered else "estimated from the catalog rate"
    rate = f", {cost.per_hour:.2f} {cost.currency}/hour" if cost.per_hour else ""
    return f"{shown.lstrip('~')} so far ({source}{rate})"


def _gpu_row(use: GpuUse) -> list[Any]:
    def shown(value: float | None) -> str:
        return "-" if value is None else f"{value:.0f}"

    replica = "-" if use.replica is None else use.replica
    return [
        replica,
        use.pod,
        use.node,
        use.gpu,
        shown(use.activity),
        shown(use.tensor),
        shown(use.memory_used_mib),
        shown(use.power_w),
    ]


def _pod_row(pod: dict[str, Any], now: datetime) -> list[Any]:
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    phase = status.get("phase") or "Pending"
    restarts = sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or [])
    waiting = [
        (c.get("state") or {}).get("waiting", {}).get("reason")
        for c in status.get("containerStatuses") or []
        if (c.get("state") or {}).get("waiting")
    ]
    shown = f"{phase} ({waiting[0]})" if waiting and waiting[0] else phase
    marker = {"Running": "ok", "Succeeded": "ok", "Failed": "error"}.get(phase, "warn")
    replica = replica_of_pod(pod)
    return [
        meta.get("name"),
        "-" if replica is None else replica,
        Marked(shown, marker),
        spec.get("nodeName") or "-",
        restarts,
        timefmt.age(meta.get("creationTimestamp"), now),
    ]


def show_job(
    state: Session,
    name: str,
    namespace: str | None,
    output: OutputFormat | None,
    *,
    watch: bool = False,
) -> None:
    """Print one job's status view; with `watch`, refresh it every 2s until the job ends."""
    fmt = state.fmt(output)
    ns = state.resolve_namespace(namespace)
    if not watch:
        snapshot = job_snapshot(state, name, ns)
        if fmt in MACHINE_FORMATS:
            render_data(snapshot.as_dict(), fmt)
        else:
            render_job(snapshot, state.now())
        return
    from gryvia_cli.views.streams import new_link

    link = new_link(state.access())  # --watch waits out a stalled connection (until Ctrl-C)
    last = None
    while True:
        snapshot = link.call(lambda: job_snapshot(state, name, ns))
        key = snapshot.fingerprint()
        if fmt in MACHINE_FORMATS:
            if key != last:
                render_data(snapshot.as_dict(), fmt)
        elif sys.stdout.isatty():
            sys.stdout.write("\x1b[2J\x1b[H")
            render_job(snapshot, state.now())
        elif key != last:
            render_job(snapshot, state.now())
        sys.stdout.flush()
        last = key
        if snapshot.summary.terminal:
            return
        time.sleep(2)
