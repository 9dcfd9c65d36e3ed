"""GPU sampling (`--enable-gpu-metrics`, docs/gpu-metrics.md): every `gpu_sample_seconds`,
one pass asks the Prometheus at `--prometheus-url` for every GPU's series (one PromQL query),
or without one (or when it does not answer) reads every running dcgm-exporter pod's /metrics
once (through the API server's pod proxy, as `gryvia status` does), maps each GPU's pod to
its job with the pod index, and writes each running job's new summary to `status.metrics`
(`reconcile.gpumetrics`), and each GPU node's `status.gpuStatus` when a GPU's health
changed (an XID, ECC errors). The same readings give each GPU workspace's activity (its pod
`<name>-0`), kept in `Runtime.workspace_gpus` with the time its GPUs were last above its
`idleGPUActivityPercent`, for the workspace controller's idle stop (`reconcile.workspace_gpu`).

One read per exporter per pass, never one per job. The summary a pass folds onto is the one
this loop wrote last, or the job's own after a restart, whichever holds more samples (the
index may not have seen the loop's last write yet), so a restart neither loses nor repeats
a sample's effect beyond the pass it happened in.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from gryvia_operator.api.dcgm import EXPORTER_LABELS, GpuReading, metrics_port, parse
from gryvia_operator.api.helpers import JobPhase
from gryvia_operator.api.jobmetrics import JobGpuMetrics
from gryvia_operator.api.names import CONTAINER_NAME
from gryvia_operator.api.resources import POD
from gryvia_operator.controller.conditions import update_conditions
from gryvia_operator.controller.kubeapi import KubeError
from gryvia_operator.controller.passes import run_passes
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import (
    AIJOBS,
    EXPORTER_PODS,
    GPUNODES,
    PODS_BY_JOB,
    WORKSPACES,
)
from gryvia_operator.reconcile.gpumetrics import (
    STALLED,
    JobKey,
    fold,
    job_samples,
    node_gpu_status,
    stall_message,
)
from gryvia_operator.reconcile.status import JobEvent, get_condition, set_condition
from gryvia_operator.reconcile.workspace_gpu import record_pass

log = logging.getLogger(__name__)

CONCURRENT_READS = 16
"""Exporters read at once in one pass."""


PROMETHEUS_TIMEOUT = 10.0
"""Seconds to wait for Prometheus' answer before reading the exporter pods instead."""


async def query_prometheus(url: str) -> list[GpuReading]:
    """dcgm-exporter's series of every GPU from the Prometheus at `url` (one instant query,
    `api.promql`). Raises OSError when it cannot be reached or answers an HTTP error,
    ValueError when the answer is not a query result."""
    import httpx

    from gryvia_operator.api.promql import QUERY_PATH, exporter_query, readings_from_http

    try:
        async with httpx.AsyncClient(timeout=PROMETHEUS_TIMEOUT) as client:
            answer = await client.get(url + QUERY_PATH, params={"query": exporter_query()})
    except httpx.HTTPError as exc:
        raise OSError(f"{type(exc).__name__}: {exc}") from exc
    return readings_from_http(answer.status_code, answer.text)


def register(rt: Runtime) -> None:
    """Index the dcgm-exporter pods (EXPORTER_PODS) from the pods' list-and-watch
    (`handlers.pod`), so a pass reads the index, not a LIST."""
    rt.informer(POD.path()).add_index(EXPORTER_PODS, exporter_pod)


def exporter_pod(body: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """A dcgm-exporter pod (labels EXPORTER_LABELS) as the sampler needs it, under (namespace,
    name): name, namespace, ports, phase; {} for any other pod."""
    meta = body.get("metadata") or {}
    labels = meta.get("labels") or {}
    if any(labels.get(key) != value for key, value in EXPORTER_LABELS.items()):
        return {}
    ports = [
        {"name": port.get("name"), "containerPort": port.get("containerPort")}
        for c in (body.get("spec") or {}).get("containers") or []
        for port in c.get("ports") or []
    ]
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    slim = {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"ports": ports}]},
        "status": {"phase": (body.get("status") or {}).get("phase")},
    }
    return {(namespace, name): slim}


class GpuSampler:
    """The sampling loop and the summaries it wrote last."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.written: dict[JobKey, JobGpuMetrics] = {}
        self.nodes_written: dict[str, list[dict[str, Any]]] = {}
        self.wake = asyncio.Event()
        self.stalls = Stalls(rt)

    async def loop(self) -> None:
        """Run passes until cancelled."""
        seconds = self.rt.config.gpu_sample_seconds
        await run_passes(self.rt, "gpumetrics", self.wake, self.run_pass, seconds, log)

    async def run_pass(self) -> None:
        """Read every exporter once; write each sampled running job's summary."""
        readings = await self.read_exporters()
        views = self.rt.indices.all_values(PODS_BY_JOB)
        pod_jobs = {(view.namespace, view.name): view.job for view in views}
        pod_replicas = {
            (view.namespace, view.name): view.replica for view in views if view.replica is not None
        }
        now = self.rt.clock()
        for key, sample in job_samples(readings, pod_jobs, pod_replicas).items():
            body = self.rt.indices.first(AIJOBS, key)
            if body is None or (body.get("status") or {}).get("phase") != JobPhase.RUNNING:
                continue
            summary = fold(self._previous(key, body), sample, now)
            await self._write(key, summary)
            await self.stalls.check(key, body, summary, now)
        running = {k for k in self.written if self.rt.indices.first(AIJOBS, k) is not None}
        self.written = {k: v for k, v in self.written.items() if k in running}
        workspaces = self.rt.indices.all_values(WORKSPACES)
        self.rt.workspace_gpus = record_pass(self.rt.workspace_gpus, readings, workspaces, now)
        await self._write_nodes(readings)

    async def _write_nodes(self, readings: list[GpuReading]) -> None:
        """Each GPU node's `status.gpuStatus` (health with XIDs and ECC errors) when changed."""
        for node, entries in node_gpu_status(readings).items():
            view = self.rt.indices.first(GPUNODES, node)
            if view is None:
                continue
            if self.nodes_written.get(node, view.status.get("gpuStatus")) == entries:
                continue
            patch = {"status": {"gpuStatus": entries}}
            try:
                await self.rt.api.patch("GryviaGpuNode", view.name, patch, subresource="status")
            except KubeError as exc:
                if exc.status != 404:
                    raise
                continue
            self.nodes_written[node] = entries
            self.rt.metrics.writes.labels(kind="GryviaGpuNode", verb="status").inc()

    async def read_exporters(self) -> list[GpuReading]:
        """Every GPU's reading: from the Prometheus server when `--prometheus-url` is set and
        it answers (one query), else from every running exporter pod."""
        url = self.rt.config.prometheus_url
        if url:
            try:
                return await query_prometheus(url)
            except (OSError, ValueError) as exc:
                log.warning("Prometheus %s: %s; reading the exporter pods instead", url, exc)
        return await self.read_exporter_pods()

    async def read_exporter_pods(self) -> list[GpuReading]:
        """The readings of every running exporter pod; one that fails is logged and skipped
        (its GPUs go unsampled this pass rather than reading as idle)."""
        pods = self.rt.indices.all_values(EXPORTER_PODS)
        running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        gate = asyncio.Semaphore(CONCURRENT_READS)

        async def read(pod: dict[str, Any]) -> list[GpuReading]:
            meta = pod["metadata"]
            async with gate:
                try:
                    text = await self.rt.api.proxy_get(
                        meta["name"], meta["namespace"], metrics_port(pod), "metrics"
                    )
                    return parse(text)
                except (KubeError, OSError, ValueError) as exc:
                    log.warning("exporter %s/%s: %s", meta["namespace"], meta["name"], exc)
                    return []

        found = await asyncio.gather(*(read(p) for p in running))
        return [reading for part in found for reading in part]

    def _previous(self, key: JobKey, body: dict[str, Any]) -> JobGpuMetrics | None:
        mine = self.written.get(key)
        try:
            raw = (body.get("status") or {}).get("metrics")
            theirs = None if raw is None else JobGpuMetrics.model_validate(raw)
        except ValidationError:
            theirs = None
        if mine is None or (theirs is not None and theirs.samples > mine.samples):
            return theirs
        return mine

    async def _write(self, key: JobKey, summary: JobGpuMetrics) -> None:
        status = {"metrics": summary.model_dump(by_alias=True, mode="json", exclude_none=True)}
        try:
            await self.rt.api.patch(
                "GryviaAIJob", key[1], {"status": status}, key[0], subresource="status"
            )
        except KubeError as exc:
            if exc.status == 404:  # deleted since the index saw it
                return
            raise
        self.written[key] = summary
        self.rt.metrics.writes.labels(kind="GryviaAIJob", verb="patch").inc()


class Stalls:
    """The `Stalled` condition of sampled jobs: set (with a Warning Event) when a job's GPUs
    have been idle and its pods' logs silent for `stalled_seconds`, cleared when its GPUs are
    active again. The condition in the job's status is the record: after a restart a job
    already `Stalled` gets no second Event. The condition's lastTransitionTime is when it
    became Stalled: job hooks deliver `Stalled` from it (docs/hooks.md)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.posted: set[JobKey] = set()

    async def check(
        self, key: JobKey, body: dict[str, Any], summary: JobGpuMetrics, now: datetime
    ) -> None:
        """Set or clear the job's condition as its newest summary says."""
        conditions = (body.get("status") or {}).get("conditions") or []
        current = (get_condition(conditions, STALLED) or {}).get("status")
        if summary.idle_since is None:
            if current == "True":
                active = f"GPU activity {summary.last_activity_percent:.1f} % ({summary.field})"
                await self._set(key, "False", "Active", active, now)
            self.posted.discard(key)
            return
        window = self.rt.config.stalled_seconds
        if current == "True" or (now - summary.idle_since).total_seconds() < window:
            return
        last_log, started = await self._quiet_since(key)
        stalled = stall_message(summary, last_log, started, now, window)
        if stalled is None:
            return
        await self._set(key, "True", "IdleAndSilent", stalled, now)
        if key not in self.posted:
            self.posted.add(key)
            self.rt.post_event(body, JobEvent("Warning", STALLED, stalled))

    async def _quiet_since(self, key: JobKey) -> tuple[datetime | None, datetime | None]:
        """(time of the newest log line of the job's running pods, their latest start)."""
        newest: datetime | None = None
        started: datetime | None = None
        for view in self.rt.indices.values(PODS_BY_JOB, key):
            if not view.running:
                continue
            if view.started_at:
                when = datetime.fromisoformat(view.started_at.replace("Z", "+00:00"))
                started = max(started or when, when)
            try:
                text = await self.rt.api.pod_log(
                    view.name, key[0], container=CONTAINER_NAME, tail_lines=1, timestamps=True
                )
            except KubeError:
                continue
            stamp = text.strip().split(" ", 1)[0]
            try:
                when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            except ValueError:
                continue
            newest = max(newest or when, when)
        return newest, started

    async def _set(
        self,
        key: JobKey,
        status: str,
        reason: str,
        message: str,
        now: datetime,
    ) -> None:
        def change(current: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return set_condition(current, STALLED, status, reason, message, now)

        await update_conditions(self.rt, "GryviaAIJob", key[1], key[0], change)
