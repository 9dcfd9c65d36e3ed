"""GryviaWorkspace on the kind controller (always on): passes at once when a workspace (a shell
heartbeat included) or its pod changes, else when its next stop could fall due (at most every
PASS_SECONDS). A workspace observes its pod in the pod index (label gryvia.io/workspace), its
home PVC with one GET while it has no pod (the operator watches PVCs only with the job
children's server-side selector) and its pod's CPU from metrics.k8s.io;
`reconcile.workspace.decide` says whether to create the PVC and pod, delete the pod, or set
`spec.stopped: true` when idle or past its lifetime (with an event), and the status; the run
is then metered (`reconcile.workspace_usage`).

A workspace with GPUs that the GPU sampler reads (`--enable-gpu-metrics`) is judged by its
GPU activity instead (`Runtime.workspace_gpus`, the sampler's last reading, used while it is
at most three passes old; its CPU is then not read). A cluster without a metrics API (the
sandbox) gives no CPU samples, and then, without GPU readings, only shell sessions count as
activity.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from gryvia_operator.api.attribution import tenant_of
from gryvia_operator.api.pricing import select_rate
from gryvia_operator.api.quantity import parse_quantity
from gryvia_operator.api.workspace import (
    LABEL_WORKSPACE,
    WORKSPACE_KIND,
    GryviaWorkspace,
    pod_name,
    pvc_name,
)
from gryvia_operator.controller import policies
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.passes import ChildSource
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import WORKSPACE_PODS, WORKSPACES
from gryvia_operator.reconcile.status import JobEvent
from gryvia_operator.reconcile.workspace import (
    Observed,
    build_pod,
    build_pvc,
    decide,
    next_check,
)
from gryvia_operator.reconcile.workspace_usage import build_workspace_usage

PASS_SECONDS = 5.0
"""Longest wait between two passes: how often a running workspace's activity (its CPU) is
read (docs/workspaces.md)."""
METRICS_API = "/apis/metrics.k8s.io/v1beta1"
METRICS_POD = METRICS_API + "/namespaces/{namespace}/pods/{name}"

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


class WorkspaceSpec(KindSpec[GryviaWorkspace, Observed]):
    """A workspace observes its pod, PVC and CPU; its reconcile is `decide`; after it, the
    run's usage record is written (`after`)."""

    info = WORKSPACE_KIND
    controller = "workspace"
    index_id = WORKSPACES
    children = (
        ChildSource("", "v1", "pods", LABEL_WORKSPACE, WORKSPACE_PODS, "pod", informed=True),
    )
    idle_seconds = PASS_SECONDS
    child_word = "workspace child"
    not_created_reason = "WorkspaceChildNotCreated"

    def __init__(self) -> None:
        self.metrics_api: bool | None = None
        """Whether metrics.k8s.io is served (None: not known yet)."""
        self.metered: dict[Key, dict[str, Any]] = {}

    async def observe(self, rt: Runtime, obj: GryviaWorkspace) -> Observed:
        """The pod (index), whether the PVC exists (one GET, only while there is no pod), and
        the GPU sampler's recent reading of its GPUs (`Runtime.workspace_gpus`), else the pod's
        CPU."""
        own = pod_name(obj.name)
        found = rt.indices.values(WORKSPACE_PODS, (obj.namespace, obj.name))
        pods = [p for p in found if _key(p)[1] == own]
        pvc = True  # a pod that exists was made after its PVC
        if not pods:
            try:
                await rt.api.get("PersistentVolumeClaim", pvc_name(obj.name), obj.namespace)
            except NotFound:
                pvc = False
        gpu = rt.workspace_gpus.get((obj.namespace, obj.name)) if pods and obj.spec.gpus else None
        if gpu is not None and not gpu.fresh(rt.clock(), rt.config.gpu_sample_seconds):
            gpu = None
        cpu = await self.cpu(rt, obj.namespace, own) if pods and gpu is None else None
        return Observed(pod=pods[0] if pods else None, pvc=pvc, cpu_millicores=cpu, gpu=gpu)

    async def cpu(self, rt: Runtime, namespace: str, name: str) -> float | None:
        """The pod's CPU in millicores from its PodMetrics; None while it has none, and for
        good once the metrics API is found not served (asked once: METRICS_API)."""
        if self.metrics_api is None:
            try:
                await rt.api.get_path(METRICS_API)
                self.metrics_api = True
            except KubeError as exc:
                if exc.status not in (403, 404, 503):
                    raise
                self.metrics_api = None if exc.status == 503 else False  # 503: down for now
        if not self.metrics_api:
            return None
        try:
            found = await rt.api.get_path(METRICS_POD.format(namespace=namespace, name=name))
        except KubeError as exc:
            if exc.status in (403, 404, 503):
                return None
            raise
        return cpu_samples([found]).get((namespace, name))

    def reconcile(self, obj: GryviaWorkspace, observed: Observed, now: datetime) -> Outcome:
        """Children, the stop, the status; look again when a stop could fall due."""
        decision = decide(obj, observed, now)
        out = Outcome(status=decision.status)
        if decision.create_pvc:
            out.create.append(build_pvc(obj))
        if decision.delete_pod:
            out.delete.append(("Pod", pod_name(obj.name)))
        if decision.stop is not None:
            out.patch.append((WORKSPACE_KIND.kind, obj.name, {"spec": {"stopped": True}}))
            message = str(decision.status.get("message") or "")
            out.events.append(JobEvent("Normal", f"Stopped{decision.stop}", message))
        elif decision.create_pod:
            out.create.append(build_pod(obj))
        due = next_check(obj, decision.status, now)
        out.requeue_after = None if due is None else due + 0.2
        return out

    async def after(self, rt: Runtime, obj: GryviaWorkspace, outcome: Outcome) -> None:
        """Create or refresh the usage record of the current run (never a sealed one)."""
        known = policies.tenants(rt)
        labels = obj.metadata.labels or {}
        tenant = tenant_of(
            obj.namespace, labels, policies.namespace_labels(rt, obj.namespace), known
        )
        owner = known.get(tenant)
        rate = (
            select_rate(
                obj.spec.gpu_type, policies.skus(rt), owner.spec.allowed_skus if owner else None
            )
            if obj.spec.gpus
            else None
        )
        now = rt.clock()
        desired = build_workspace_usage(obj, outcome.status, tenant=tenant, rate=rate, now=now)
        if desired is None:
            return
        key = (obj.namespace, str(desired["metadata"]["name"]))
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


def controller(rt: Runtime) -> KindController[GryviaWorkspace, Observed]:
    """The workspace controller over `rt`."""
    return KindController(rt, WorkspaceSpec())
