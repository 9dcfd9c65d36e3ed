"""Fluent builders of API objects for TUI tests (`make_job("a").gpus(8).gpu_type("H100").obj()`)."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

NOW = dt.datetime(2026, 11, 20, 12, 0, 0, tzinfo=dt.UTC)
"""The frozen clock of every rendering test."""


def ts(ago: dt.timedelta) -> str:
    """RFC 3339 time `ago` before NOW."""
    return (NOW - ago).strftime("%Y-%m-%dT%H:%M:%SZ")


H, M, D = dt.timedelta(hours=1), dt.timedelta(minutes=1), dt.timedelta(days=1)


class JobBuilder:
    """`make_job("a").ns("x").gpus(8).gpu_type("H100").phase("Running", started=2*H).obj()`."""

    def __init__(self, name: str) -> None:
        self._obj: dict[str, Any] = {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaAIJob",
            "metadata": {
                "name": name,
                "namespace": "default",
                "uid": f"uid-{name}",
                "creationTimestamp": ts(H),
            },
            "spec": {"type": "training", "gpus": 1, "image": "ghcr.io/acme/train:1.4"},
            "status": {},
        }

    def ns(self, namespace: str) -> JobBuilder:
        """Namespace."""
        self._obj["metadata"]["namespace"] = namespace
        return self

    def created(self, ago: dt.timedelta) -> JobBuilder:
        """Creation time before NOW."""
        self._obj["metadata"]["creationTimestamp"] = ts(ago)
        return self

    def type(self, kind: str) -> JobBuilder:
        """spec.type."""
        self._obj["spec"]["type"] = kind
        return self

    def gpus(self, count: int) -> JobBuilder:
        """spec.gpus (per pod)."""
        self._obj["spec"]["gpus"] = count
        return self

    def gpu_type(self, gpu: str) -> JobBuilder:
        """spec.gpuType."""
        self._obj["spec"]["gpuType"] = gpu
        return self

    def nodes(self, count: int) -> JobBuilder:
        """Distributed over `count` pods."""
        self._obj["spec"]["distributed"] = {"enabled": True, "nodes": count}
        return self

    def spec(self, **fields: Any) -> JobBuilder:
        """Any other spec fields (camelCase)."""
        self._obj["spec"].update(fields)
        return self

    def label(self, key: str, value: str) -> JobBuilder:
        """A label."""
        self._obj["metadata"].setdefault("labels", {})[key] = value
        return self

    def annotate(self, key: str, value: str) -> JobBuilder:
        """An annotation."""
        self._obj["metadata"].setdefault("annotations", {})[key] = value
        return self

    def phase(
        self,
        phase: str,
        *,
        started: dt.timedelta | None = None,
        ended: dt.timedelta | None = None,
        message: str = "",
        nodes: tuple[str, ...] = (),
    ) -> JobBuilder:
        """status: phase, start/completion times before NOW, message, nodesAllocated."""
        status = self._obj["status"]
        status["phase"] = phase
        if started is not None:
            status["startTime"] = ts(started)
        if ended is not None:
            status["completionTime"] = ts(ended)
        if message:
            status["message"] = message
        if nodes:
            status["nodesAllocated"] = list(nodes)
        return self

    def gpu_activity(
        self, last: float, mean: float, replicas: dict[int, list[int]] | None = None
    ) -> JobBuilder:
        """status.metrics as the operator's GPU sampler writes it (last and mean activity,
        and `replicas`: each replica's recent activities, oldest first)."""
        self._obj["status"]["metrics"] = {
            "field": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
            "samples": 20,
            "lastSampleTime": ts(M),
            "lastActivityPercent": last,
            "meanActivityPercent": mean,
        }
        if replicas:
            self._obj["status"]["metrics"]["replicas"] = [
                {"replica": r, "recentActivityPercent": values} for r, values in replicas.items()
            ]
        return self

    def condition(
        self, kind: str, status: str, reason: str, message: str, ago: dt.timedelta = M
    ) -> JobBuilder:
        """Add a status condition."""
        self._obj["status"].setdefault("conditions", []).append(
            {
                "type": kind,
                "status": status,
                "reason": reason,
                "message": message,
                "lastTransitionTime": ts(ago),
            }
        )
        return self

    def obj(self) -> dict[str, Any]:
        """The object (a copy)."""
        return copy.deepcopy(self._obj)


def make_job(name: str) -> JobBuilder:
    """Start a job builder."""
    return JobBuilder(name)


def gpu_node(
    name: str, gpu: str, count: int, *, phase: str = "Ready", memory: int = 80
) -> dict[str, Any]:
    """A GryviaGpuNode."""
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaGpuNode",
        "metadata": {"name": name},
        "spec": {
            "nodeName": name,
            "gpuType": gpu,
            "gpuCount": count,
            "memoryGB": memory,
            "rdma": gpu != "L40",
        },
        "status": {"phase": phase, "driverVersion": "550.127.08", "cudaVersion": "12.4"},
    }


def node(name: str, *, ready: bool = True, cordoned: bool = False) -> dict[str, Any]:
    """A Kubernetes Node."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {"unschedulable": True} if cordoned else {},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def pod(
    job: str,
    ns: str,
    index: int,
    node_name: str,
    gpus: int,
    *,
    phase: str = "Running",
    started: dt.timedelta = H,
    restarts: int = 0,
) -> dict[str, Any]:
    """A job pod with a trainer container."""
    state: dict[str, Any] = {"running": {"startedAt": ts(started)}}
    if phase in ("Succeeded", "Failed"):
        state = {"terminated": {"exitCode": 0 if phase == "Succeeded" else 1}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job}-{index}",
            "namespace": ns,
            "labels": {"gryvia.io/job": job},
            "annotations": {"batch.kubernetes.io/job-completion-index": str(index)},
            "creationTimestamp": ts(started),
        },
        "spec": {
            "nodeName": node_name,
            "containers": [
                {"name": "trainer", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
            ],
        },
        "status": {
            "phase": phase,
            "containerStatuses": [
                {
                    "name": "trainer",
                    "ready": phase == "Running",
                    "restartCount": restarts,
                    "state": state,
                }
            ],
        },
    }


def usage(
    job: str,
    ns: str,
    tenant: str,
    gpu: str,
    gpus: int,
    rate: float,
    start: dt.timedelta,
    hours: float,
    *,
    final: bool = True,
) -> dict[str, Any]:
    """A GryviaUsageRecord of `hours` wall-clock hours."""
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaUsageRecord",
        "metadata": {"name": f"usage-{job}", "namespace": ns},
        "spec": {
            "tenant": tenant,
            "job": job,
            "jobUID": f"uid-{job}",
            "sku": gpu.lower(),
            "gpuType": gpu,
            "gpus": gpus,
            "rate": rate,
            "currency": "USD",
            "start": ts(start),
            "gpuHours": hours * gpus,
            "cost": round(hours * gpus * rate, 2),
            "final": final,
        },
    }
