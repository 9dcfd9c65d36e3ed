"""GryviaWorkspace controller: one loop, every PASS_SECONDS or at once when a workspace
changes, over every workspace: read pods, PVCs and CPU samples, call
`reconcile.workspace.decide`, then create the PVC and pod, delete the pod, set
`spec.stopped: true` when idle or past its lifetime (with an event), write the status, and
meter the run (`reconcile.workspace_usage`).

CPU samples come from metrics.k8s.io (PodMetrics of pods labelled gryvia.io/workspace); a
cluster without a metrics API (the sandbox) gives none, and then only shell sessions count as
activity.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION
from gryvia_operator.api.attribution import tenant_of
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.api.pricing import select_rate
from gryvia_operator.api.quantity import parse_quantity
from gryvia_operator.api.workspace import LABEL_WORKSPACE, GryviaWorkspace
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.handlers import policy
from gryvia_operator.reconcile.status import JobEvent
from gryvia_operator.reconcile.workspace import (
    Observed,
    build_pod,
    build_pvc,
    decide,
    next_check,
)
from gryvia_operator.reconcile.workspace_usage import build_workspace_usage

log = logging.getLogger("gryvia.operator.workspace")
PLURAL = "gryviaworkspaces"
PASS_SECONDS = 5.0
"""Longest wait between two passes."""
METRICS_PATH = "/apis/metrics.k8s.io/v1beta1/pods"

Key = tuple[str, str]


def _key(obj: Mapping[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def cpu_samples(items: list[Mapping[str, Any]]) -> dict[Key, float]:
    """Millicores per pod `(namespace, name)` from PodMetrics items (containers summed)."""
    out: dict[Key, float] = {}
    for item in items:
        total = 0.0
        for ctr in item.get("containers") or []:
            with contextlib.suppress(ValueError, TypeError):
                total += float(parse_quantity((ctr.get("usage") or {}).get("cpu") or 0)) * 1000
        out[_key(item)] = total
    return out


class Workspaces:
    """The loop's state: the last status and usage record written per workspace."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.kick = asyncio.Event()
        self.written: dict[Key, dict[str, Any]] = {}
        self.metered: dict[Key, dict[str, Any]] = {}
        self.metrics_api = True

    async def loop(self) -> None:
        """Pass over every workspace until cancelled."""
        while True:
            self.kick.clear()
            started = time.perf_counter()
            delay = PASS_SECONDS
            try:
                delay = await self.update()
            except (KubeError, OSError) as exc:
                log.warning("workspaces: %s", exc)
            except Exception:  # a bug in one pass must not end workspaces for good
                log.exception("workspace pass failed; retrying in %.0f s", PASS_SECONDS)
            self.rt.metrics.latency.labels(controller="workspace").observe(
                time.perf_counter() - started
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.kick.wait(), max(delay, 0.5))

    async def cpu(self) -> dict[Key, float]:
        """CPU samples of workspace pods; {} (and no further tries) without a metrics API."""
        if not self.metrics_api:
            return {}
        try:
            found = await self.rt.api.get_path(METRICS_PATH, {"labelSelector": LABEL_WORKSPACE})
        except KubeError as exc:
            if exc.status in (403, 404, 503):
                self.metrics_api = exc.status == 503  # 503: aggregated API down for now
                return {}
            raise
        return cpu_samples(list(found.get("items") or []))

    async def update(self) -> float:
        """One pass; returns the seconds until the next stop could fall due (at most
        PASS_SECONDS)."""
        api = self.rt.api
        bodies = await api.list("GryviaWorkspace")
        pods = {_key(p): p for p in await api.list("Pod", label_selector=LABEL_WORKSPACE)}
        pvcs = {
            _key(p) for p in await api.list("PersistentVolumeClaim", label_selector=LABEL_WORKSPACE)
        }
        cpu = await self.cpu() if pods else {}
        delay = PASS_SECONDS
        live: set[Key] = set()
        for body in bodies:
            found = parse_valid(GryviaWorkspace, [body])
            if not found or (body.get("metadata") or {}).get("deletionTimestamp"):
                continue
            ws = found[0]
            live.add(_key(body))
            pod_key = (ws.namespace, f"{ws.name}-0")
            observed = Observed(
                pod=pods.get(pod_key),
                pvc=(ws.namespace, f"{ws.name}-home") in pvcs,
                cpu_millicores=cpu.get(pod_key),
            )
            now = self.rt.clock()
            decision = decide(ws, observed, now)
            try:
                await self.apply(ws, body, decision)
            except NotFound:
                continue  # deleted meanwhile
            await self.meter(ws, body, decision.status)
            due = next_check(ws, decision.status, now)
            if due is not None:
                delay = min(delay, due + 0.2)
        for gone in set(self.written) - live:
            self.written.pop(gone, None)
            self.metered.pop(gone, None)
        return delay

    async def apply(self, ws: GryviaWorkspace, body: Mapping[str, Any], decision: Any) -> None:
        """Carry out one decision: children, the stop, the status."""
        api, ns = self.rt.api, ws.namespace
        if decision.create_pvc:
            with contextlib.suppress(AlreadyExists):
                await api.create(build_pvc(ws))
        if decision.delete_pod:
            await api.delete("Pod", f"{ws.name}-0", ns)
        if decision.stop is not None:
            await api.patch("GryviaWorkspace", ws.name, {"spec": {"stopped": True}}, ns)
            message = str(decision.status.get("message") or "")
            self.rt.post_event(body, JobEvent("Normal", f"Stopped{decision.stop}", message))
        elif decision.create_pod:
            with contextlib.suppress(AlreadyExists):
                await api.create(build_pod(ws))
        key = (ns, ws.name)
        stored = self.written.get(key) or dict(body.get("status") or {})
        status = decision.status
        if any(stored.get(k) != v for k, v in status.items()):
            await api.patch(
                "GryviaWorkspace", ws.name, {"status": status}, ns, subresource="status"
            )
            self.rt.metrics.writes.labels(kind="GryviaWorkspace", verb="status").inc()
            self.written[key] = {**stored, **status}

    async def meter(
        self, ws: GryviaWorkspace, body: Mapping[str, Any], status: dict[str, Any]
    ) -> None:
        """Create or refresh the usage record of the current run (never a sealed one)."""
        rt = self.rt
        known = policy.tenants(rt)
        labels = ws.metadata.labels or {}
        tenant = tenant_of(ws.namespace, labels, policy.namespace_labels(rt, ws.namespace), known)
        owner = known.get(tenant)
        rate = (
            select_rate(
                ws.spec.gpu_type, policy.skus(rt), owner.spec.allowed_skus if owner else None
            )
            if ws.spec.gpus
            else None
        )
        desired = build_workspace_usage(ws, status, tenant=tenant, rate=rate, now=rt.clock())
        if desired is None:
            return
        key = (ws.namespace, str(desired["metadata"]["name"]))
        last = self.metered.get(key)
        if last is not None and (last["spec"].get("final") or last["spec"] == desired["spec"]):
            return
        fresh = last is not None and time.monotonic() - float(last.get("_at", 0)) < 60
        if fresh and not desired["spec"]["final"]:
            return  # refreshed every minute while it runs, as job records are
        try:
            await rt.api.create(desired)
        except AlreadyExists:
            found = await rt.api.get("GryviaUsageRecord", key[1], key[0])
            if not (found.get("spec") or {}).get("final"):
                await rt.api.patch("GryviaUsageRecord", key[1], {"spec": desired["spec"]}, key[0])
        self.metered[key] = {"spec": desired["spec"], "_at": time.monotonic()}


def register(registry: kopf.OperatorRegistry, rt: Runtime, loop: Workspaces) -> None:
    """Wake the loop when a workspace changes (a shell heartbeat included)."""

    @kopf.on.event(GROUP, VERSION, PLURAL, id="gryvia_workspace_events", registry=registry)
    async def workspace_event(type: str, body: kopf.Body, **_: Any) -> None:
        """A workspace appeared, changed or went: pass now."""
        if type == "DELETED":
            loop.written.pop(_key(body), None)
        loop.kick.set()
