"""Environment variables of a job's trainer container: the user's, then the rendezvous ones."""

from __future__ import annotations

from typing import Any, Literal

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.names import (
    COMPLETION_INDEX_ANNOTATION,
    MASTER_PORT,
    POD_INDEX_LABEL,
    batch_job_name,
    service_name,
    statefulset_name,
)

WorkloadKind = Literal["job", "statefulset"]


def master_addr(job: GryviaAIJob, kind: WorkloadKind, cluster_domain: str) -> str:
    """DNS name of pod 0 through the headless Service (`a-0.a-headless.ns.svc.cluster.local`)."""
    first = batch_job_name(job.name) if kind == "job" else statefulset_name(job.name)
    return f"{first}-0.{service_name(job.name)}.{job.namespace}.svc.{cluster_domain}"


def _field(path: str) -> dict[str, Any]:
    return {"fieldRef": {"fieldPath": path}}


def build_distributed_env(
    job: GryviaAIJob, *, kind: WorkloadKind, cluster_domain: str = "cluster.local"
) -> list[dict[str, Any]]:
    """The rendezvous variables of a distributed job (empty when not distributed).

    MASTER_ADDR/MASTER_PORT point at pod 0; WORLD_SIZE = nodes x processes per node (GPUs per
    pod, 1 for CPU-only); RANK and NODE_RANK come from the completion index (Job) or the pod
    index label (StatefulSet); NCCL_DEBUG=INFO unless gloo; NCCL_IB_DISABLE=0 and
    NCCL_NET_GDR_LEVEL=5 for rdma.
    """
    spec = job.spec
    dist = spec.distributed
    if dist is None or not spec.distributed_enabled:
        return []
    nodes = spec.pod_count()
    procs = spec.gpus_per_pod() or 1
    index = (
        f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"
        if kind == "job"
        else f"metadata.labels['{POD_INDEX_LABEL}']"
    )
    env: list[dict[str, Any]] = [
        {"name": "MASTER_ADDR", "value": master_addr(job, kind, cluster_domain)},
        {"name": "MASTER_PORT", "value": str(MASTER_PORT)},
        {"name": "WORLD_SIZE", "value": str(nodes * procs)},
        {"name": "RANK", "valueFrom": _field(index)},
        {"name": "NODE_RANK", "valueFrom": _field(index)},
    ]
    elastic_min = dist.elastic.min_nodes if dist.elastic and dist.elastic.min_nodes else None
    if elastic_min is not None and kind == "job":
        env += [
            {"name": "NNODES", "value": f"{elastic_min}:{nodes}"},
            {"name": "GRYVIA_ELASTIC", "value": "true"},
            {"name": "GRYVIA_ELASTIC_MIN_NODES", "value": str(elastic_min)},
            {"name": "GRYVIA_ELASTIC_MAX_NODES", "value": str(nodes)},
        ]
    else:
        env.append({"name": "NNODES", "value": str(nodes)})
    env.append({"name": "NPROC_PER_NODE", "value": str(procs)})
    if dist.framework:
        env.append({"name": "GRYVIA_DIST_FRAMEWORK", "value": dist.framework})
    if dist.backend:
        env.append({"name": "GRYVIA_DIST_BACKEND", "value": dist.backend})
    if dist.backend != "gloo":
        env.append({"name": "NCCL_DEBUG", "value": "INFO"})
        if spec.network == "rdma":
            env += [
                {"name": "NCCL_IB_DISABLE", "value": "0"},
                {"name": "NCCL_NET_GDR_LEVEL", "value": "5"},
            ]
    return env


def build_env(
    job: GryviaAIJob, *, kind: WorkloadKind, cluster_domain: str = "cluster.local"
) -> list[dict[str, Any]]:
    """The container env: the user's variables first, then the operator's.

    An operator variable the user already set is left out, so the user's value stands and
    the API server sees no duplicate names.
    """
    user = [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in job.spec.env or []]
    taken = {e["name"] for e in user}
    ours = build_distributed_env(job, kind=kind, cluster_domain=cluster_domain)
    return user + [e for e in ours if e["name"] not in taken]
