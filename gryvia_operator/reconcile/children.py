"""The objects a GryviaAIJob owns: batch Job or StatefulSet, headless Service, data PVC."""

from __future__ import annotations

from typing import Any

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.jobstorage import DataClaim
from gryvia_operator.api.names import (
    LABEL_JOB,
    LABEL_MANAGED_BY,
    MANAGED_BY,
    MASTER_PORT,
    PORT_NAME,
    batch_job_name,
    service_name,
    statefulset_name,
)
from gryvia_operator.api.storage import LABEL_STORAGE
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.env import WorkloadKind
from gryvia_operator.reconcile.podtemplate import (
    build_pod_template,
    child_metadata,
    selector_labels,
)
from gryvia_operator.reconcile.priority import remaining_backoff

WORKLOAD_KINDS: dict[WorkloadKind, str] = {"job": "Job", "statefulset": "StatefulSet"}
"""Workload kind of the spec -> Kubernetes kind."""


def workload_name(job: GryviaAIJob, kind: WorkloadKind) -> str:
    """`<job>` for a batch Job, `<job>-training` for a StatefulSet."""
    return batch_job_name(job.name) if kind == "job" else statefulset_name(job.name)


def build_batch_job(job: GryviaAIJob, config: ReconcileConfig | None = None) -> dict[str, Any]:
    """An Indexed batch/v1 Job: one completion per pod, disruptions do not count as failures.

    completions = parallelism = pods; backoffLimit = retryLimit; activeDeadlineSeconds from
    timeout; suspend; elastic jobs succeed once minNodes indexes succeed. No
    ttlSecondsAfterFinished: the Job, and with it its failed pods and their logs, stays until
    the GryviaAIJob is deleted (docs/logs.md). Raises DurationError for a malformed timeout.
    """
    config = config or ReconcileConfig()
    spec = job.spec
    pods = spec.pod_count()
    body: dict[str, Any] = {
        "completionMode": "Indexed",
        "completions": pods,
        "parallelism": pods,
        "backoffLimit": remaining_backoff(job),
        "suspend": spec.suspend,
        "podFailurePolicy": {
            "rules": [
                {
                    "action": "Ignore",
                    "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
                }
            ]
        },
        "template": build_pod_template(job, kind="job", config=config),
    }
    deadline = spec.timeout_seconds()
    if deadline is not None:
        body["activeDeadlineSeconds"] = deadline
    dist = spec.distributed
    min_nodes = dist.elastic.min_nodes if dist and dist.elastic else None
    if spec.distributed_enabled and min_nodes and min_nodes < pods:
        body["successPolicy"] = {"rules": [{"succeededCount": min_nodes}]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": child_metadata(job, batch_job_name(job.name)),
        "spec": body,
    }


def build_statefulset(job: GryviaAIJob, config: ReconcileConfig | None = None) -> dict[str, Any]:
    """A StatefulSet `<job>-training` (inference): one replica per pod, restartPolicy Always."""
    config = config or ReconcileConfig()
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": child_metadata(job, statefulset_name(job.name)),
        "spec": {
            "replicas": job.spec.pod_count(),
            "serviceName": service_name(job.name),
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": selector_labels(job)},
            "template": build_pod_template(job, kind="statefulset", config=config),
        },
    }


def build_workload(
    job: GryviaAIJob, config: ReconcileConfig | None = None, kind: WorkloadKind | None = None
) -> dict[str, Any]:
    """The job's workload: batch Job or StatefulSet (`kind`, default the spec's effective kind)."""
    kind = kind or job.spec.effective_workload_kind()
    return build_batch_job(job, config) if kind == "job" else build_statefulset(job, config)


def build_headless_service(job: GryviaAIJob) -> dict[str, Any]:
    """The headless Service `<job>-headless`: per-pod DNS for rendezvous, ready or not."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": child_metadata(job, service_name(job.name)),
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": selector_labels(job),
            "ports": [
                {
                    "name": PORT_NAME,
                    "port": MASTER_PORT,
                    "targetPort": MASTER_PORT,
                    "protocol": "TCP",
                }
            ],
        },
    }


def shared_claim_metadata(job: GryviaAIJob, claim: DataClaim) -> dict[str, Any]:
    """metadata of the namespace's shared claim `gryvia-data-<backend>`: no owner (it outlives
    every job that mounts it), label `gryvia.io/storage` = the backend and `gryvia.io/job` with
    an empty value (the operator's child watches select on that label; no job is named "")."""
    return {
        "name": claim.claim_name(job.name),
        "namespace": job.namespace,
        "labels": {LABEL_JOB: "", LABEL_STORAGE: str(claim.backend), LABEL_MANAGED_BY: MANAGED_BY},
    }


def build_pvc(job: GryviaAIJob, claim: DataClaim | None = None) -> dict[str, Any] | None:
    """The data PVC of `spec.storageRequest`, or None without spec.storage.

    `claim` (`api.jobstorage.data_claim`) gives its name, class and access mode: the
    GryviaStorage that spec.storage names (a ReadWriteMany one: the namespace's shared claim
    `gryvia-data-<backend>`, `shared_claim_metadata`); None, or a name no backend has:
    spec.storage as the class, ReadWriteMany, the job's own claim `<job>-data`.
    """
    spec = job.spec
    if not spec.storage:
        return None
    claim = claim or DataClaim(spec.storage)
    if claim.shared:
        metadata = shared_claim_metadata(job, claim)
    else:
        metadata = child_metadata(job, claim.claim_name(job.name))
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata,
        "spec": {
            "accessModes": [claim.access_mode],
            "storageClassName": claim.storage_class,
            "resources": {"requests": {"storage": str(spec.storage_request)}},
        },
    }


def desired_children(
    job: GryviaAIJob,
    config: ReconcileConfig | None = None,
    kind: WorkloadKind | None = None,
    claim: DataClaim | None = None,
) -> list[dict[str, Any]]:
    """Every child the job should have, in creation order: PVC (made of `claim`, see
    `build_pvc`), Service, workload."""
    pvc = build_pvc(job, claim)
    children = [pvc] if pvc is not None else []
    children.append(build_headless_service(job))
    children.append(build_workload(job, config, kind))
    return children
