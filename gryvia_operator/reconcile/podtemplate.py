"""The pod template of a job's workload, its labels and the owner reference of every child."""

from __future__ import annotations

from typing import Any

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.controlled import owner_reference
from gryvia_operator.api.gputype import gpu_resource_name, gpu_selector, mig_profile
from gryvia_operator.api.names import (
    ANNOTATION_ENV_VERSION,
    ANNOTATION_NETWORKS,
    ANNOTATION_RDMA,
    ANNOTATION_SRIOV,
    CONTAINER_NAME,
    DATA_MOUNT,
    DATA_VOLUME,
    ENV_VERSION,
    FINALIZER_SAVE_LOG,
    LABEL_JOB,
    LABEL_JOB_NAME,
    LABEL_MANAGED_BY,
    LABEL_RDMA,
    LABEL_TYPE,
    MANAGED_BY,
    MASTER_PORT,
    PORT_NAME,
    SHM_MOUNT,
    SHM_VOLUME,
    pvc_name,
    service_name,
)
from gryvia_operator.reconcile.checkpointguard import with_checkpoint
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.env import WorkloadKind, build_env
from gryvia_operator.reconcile.placement import cpu_only_affinity
from gryvia_operator.reconcile.priority import job_priority_class


def selector_labels(job: GryviaAIJob) -> dict[str, str]:
    """Labels that select a job's pods (Service selector, StatefulSet selector)."""
    return {LABEL_JOB: job.name}


def job_labels(job: GryviaAIJob) -> dict[str, str]:
    """Labels of every child and pod of a job."""
    return {
        LABEL_JOB: job.name,
        LABEL_JOB_NAME: job.name,
        LABEL_TYPE: job.spec.type,
        LABEL_MANAGED_BY: MANAGED_BY,
    }


def child_metadata(job: GryviaAIJob, name: str) -> dict[str, Any]:
    """metadata of a child named `name`: namespace, labels and the owner reference."""
    return {
        "name": name,
        "namespace": job.namespace,
        "labels": job_labels(job),
        "ownerReferences": [owner_reference(job)],
    }


def pod_annotations(job: GryviaAIJob, config: ReconcileConfig) -> dict[str, str]:
    """Pod template annotations: env version and the network attachments."""
    annotations = {ANNOTATION_ENV_VERSION: ENV_VERSION}
    if job.spec.network == "rdma":
        annotations |= {ANNOTATION_RDMA: "true", ANNOTATION_NETWORKS: config.rdma_network}
    elif job.spec.network == "sriov":
        annotations |= {ANNOTATION_SRIOV: "true", ANNOTATION_NETWORKS: config.sriov_network}
    return annotations


def pod_node_selector(job: GryviaAIJob) -> dict[str, str]:
    """spec.nodeSelector plus gryvia.io/gpu (GPU job of a concrete type; gryvia.io/gpu-family
    for a family with variants, `api.gputype.gpu_selector`) and gryvia.io/rdma.

    A MIG slice type gets no gryvia.io/gpu selector: the `nvidia.com/mig-<profile>` resource
    it requests already places it (nodes label their parent GPU, not each slice)."""
    spec = job.spec
    selector = dict(spec.node_selector or {})
    whole_gpu = mig_profile(spec.gpu_type) is None
    if not spec.cpu_only and spec.gpu_type_constrained and spec.gpu_type and whole_gpu:
        selector.update(gpu_selector(spec.gpu_type))
    if spec.network == "rdma":
        selector[LABEL_RDMA] = "true"
    return selector


def build_container(
    job: GryviaAIJob, kind: WorkloadKind, config: ReconcileConfig
) -> dict[str, Any]:
    """The single `trainer` container."""
    spec = job.spec
    container: dict[str, Any] = {"name": CONTAINER_NAME, "image": spec.image}
    if spec.image_pull_policy:
        container["imagePullPolicy"] = spec.image_pull_policy
    if spec.command:
        container["command"] = list(spec.command)
    if spec.args:
        container["args"] = list(spec.args)
    if spec.working_dir:
        container["workingDir"] = spec.working_dir
    env = build_env(job, kind=kind, cluster_domain=config.cluster_domain)
    if env:
        container["env"] = env
    if spec.distributed_enabled:
        container["ports"] = [{"name": PORT_NAME, "containerPort": MASTER_PORT}]
    resources: dict[str, Any] = {}
    if spec.resources is not None:
        resources = spec.resources.model_dump(mode="json", by_alias=True, exclude_none=True)
    if spec.gpus_per_pod() > 0:
        limits = dict(resources.get("limits", {}))
        limits[gpu_resource_name(spec.gpu_type)] = str(spec.gpus_per_pod())
        resources["limits"] = limits
    if resources:
        container["resources"] = resources
    mounts = [
        m.model_dump(mode="json", by_alias=True, exclude_none=True)
        for m in spec.volume_mounts or []
    ]
    if spec.storage:
        mounts.append({"name": DATA_VOLUME, "mountPath": DATA_MOUNT})
    for i, ds in enumerate(config.datasets):
        mounts.append({"name": f"dataset-{i}", "mountPath": ds.mount_path, "readOnly": True})
    if spec.distributed_enabled:
        mounts.append({"name": SHM_VOLUME, "mountPath": SHM_MOUNT})
    if mounts:
        container["volumeMounts"] = mounts
    return container


def build_pod_template(
    job: GryviaAIJob, *, kind: WorkloadKind, config: ReconcileConfig
) -> dict[str, Any]:
    """The pod template shared by the batch Job and the StatefulSet of a job."""
    spec = job.spec
    pod: dict[str, Any] = {
        "restartPolicy": "Never" if kind == "job" else "Always",
        "containers": [build_container(job, kind, config)],
    }
    if kind == "job":
        pod["subdomain"] = service_name(job.name)
    volumes = [dict(v) for v in spec.volumes or []]
    if spec.storage:
        claim = config.data_claim
        name = claim.claim_name(job.name) if claim is not None else pvc_name(job.name)
        volumes.append({"name": DATA_VOLUME, "persistentVolumeClaim": {"claimName": name}})
    for i, ds in enumerate(config.datasets):
        source = {"claimName": ds.claim, "readOnly": True}
        volumes.append({"name": f"dataset-{i}", "persistentVolumeClaim": source})
    if spec.distributed_enabled:
        volumes.append({"name": SHM_VOLUME, "emptyDir": {"medium": "Memory"}})
    if volumes:
        pod["volumes"] = volumes
    selector = pod_node_selector(job)
    if selector:
        pod["nodeSelector"] = selector
    if spec.tolerations:
        pod["tolerations"] = [
            t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in spec.tolerations
        ]
    if spec.cpu_only:
        pod["affinity"] = cpu_only_affinity(spec.affinity)
    elif spec.affinity:
        pod["affinity"] = dict(spec.affinity)
    priority_class = job_priority_class(job, config.priorities)
    if priority_class:
        pod["priorityClassName"] = priority_class
    if kind == "job":
        pod = with_checkpoint(pod, job, config.checkpoint)
    return {
        "metadata": {
            "labels": job_labels(job),
            "annotations": pod_annotations(job, config),
            # a deleted pod stays until the operator saved its log tail (handlers.savedlogs)
            "finalizers": [FINALIZER_SAVE_LOG],
        },
        "spec": pod,
    }
