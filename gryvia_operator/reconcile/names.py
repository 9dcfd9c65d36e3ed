"""Names, labels, annotations, condition types and reasons the operator writes or reads."""

from __future__ import annotations

from typing import Final

# Labels on every child of a GryviaAIJob and on its pods.
LABEL_JOB: Final = "gryvia.io/job"
"""The owning GryviaAIJob's name; the Service selector and the child watches use it."""
LABEL_JOB_NAME: Final = "gryvia.io/job-name"
"""Same value as LABEL_JOB, under the name the CLI and dashboards look for."""
LABEL_TYPE: Final = "gryvia.io/type"
LABEL_MANAGED_BY: Final = "app.kubernetes.io/managed-by"
MANAGED_BY: Final = "gryvia-operator"

# Node labels written by GPU registration and read by placement.
LABEL_GPU: Final = "gryvia.io/gpu"
LABEL_GPU_COUNT: Final = "gryvia.io/gpu-count"
LABEL_GPU_MEMORY: Final = "gryvia.io/gpu-memory"
LABEL_RDMA: Final = "gryvia.io/rdma"
LABEL_SRIOV: Final = "gryvia.io/sriov"
LABEL_INTERCONNECT: Final = "gryvia.io/interconnect"
LABEL_AUTO_REGISTERED: Final = "gryvia.io/auto-registered"
NODE_LABELS: Final = (
    LABEL_GPU,
    LABEL_GPU_COUNT,
    LABEL_GPU_MEMORY,
    LABEL_RDMA,
    LABEL_SRIOV,
)
"""Node labels auto-registration owns (removed when the node stops being a GPU node)."""

# Annotations read on a GryviaAIJob.
ANNOTATION_CANCEL: Final = "gryvia.io/cancel"
ANNOTATION_PRIORITY_CLASS: Final = "gryvia.io/priority-class"
ANNOTATION_PLACEMENT_STRATEGY: Final = "gryvia.io/placement-strategy"

# Annotations written on pod templates.
ANNOTATION_ENV_VERSION: Final = "gryvia.io/env-version"
ENV_VERSION: Final = "2"
ANNOTATION_RDMA: Final = "gryvia.io/rdma"
ANNOTATION_SRIOV: Final = "gryvia.io/sriov"
ANNOTATION_NETWORKS: Final = "k8s.v1.cni.cncf.io/networks"

# Kubernetes names.
GPU_RESOURCE: Final = "nvidia.com/gpu"
COMPLETION_INDEX_ANNOTATION: Final = "batch.kubernetes.io/job-completion-index"
POD_INDEX_LABEL: Final = "apps.kubernetes.io/pod-index"

# The pod template.
CONTAINER_NAME: Final = "trainer"
MASTER_PORT: Final = 29500
PORT_NAME: Final = "torch-dist"
DATA_VOLUME: Final = "data"
DATA_MOUNT: Final = "/data"
SHM_VOLUME: Final = "shm"
SHM_MOUNT: Final = "/dev/shm"


def service_name(job_name: str) -> str:
    """The headless Service of a job: `<job>-headless`."""
    return f"{job_name}-headless"


def pvc_name(job_name: str) -> str:
    """The data PVC of a job: `<job>-data`."""
    return f"{job_name}-data"


def batch_job_name(job_name: str) -> str:
    """The batch Job of a job: the job's own name."""
    return job_name


def statefulset_name(job_name: str) -> str:
    """The StatefulSet of a job: `<job>-training`."""
    return f"{job_name}-training"


class Cond:
    """Condition types on a GryviaAIJob."""

    SCHEDULED: Final = "Scheduled"
    READY: Final = "Ready"
    REJECTED: Final = "Rejected"
    ADMITTED: Final = "Admitted"
    """False while the job waits in phase Queued for quota; True once quota is reserved."""


class Reason:
    """Condition reasons (CamelCase, stable: dashboards and alerts match on them)."""

    SCHEDULED: Final = "Scheduled"
    SCHEDULING_FAILED: Final = "SchedulingFailed"
    CPU_ONLY: Final = "CPUOnly"
    READY: Final = "Ready"
    PARTIALLY_READY: Final = "PartiallyReady"
    PODS_NOT_READY: Final = "PodsNotReady"
    SUSPENDED: Final = "Suspended"
    COMPLETED: Final = "Completed"
    FAILED: Final = "Failed"
    CANCELLED: Final = "Cancelled"
    PREEMPTED: Final = "Preempted"
    REJECTED: Final = "Rejected"
    INVALID_SPEC: Final = "InvalidSpec"
    CHILD_CONFLICT: Final = "ChildConflict"
    QUOTA_RESERVED: Final = "QuotaReserved"


class Msg:
    """Status messages (behaviour reference section 4)."""

    SCHEDULED: Final = "Job scheduled successfully"
    CPU_ONLY: Final = "CPU-only job: no GPU placement needed"
    ALL_READY: Final = "All replicas are ready"
    PARTIALLY_READY: Final = "{ready}/{total} replicas are ready"
    NOT_READY: Final = "0/{total} replicas are ready"
    SUSPENDED: Final = "Job is suspended (waiting to be admitted)"
    COMPLETED: Final = "All indexes completed"
    CANCELLED: Final = "Cancelled by request (annotation gryvia.io/cancel)"
    CANCELLED_BY_STATUS: Final = "Cancelled"
    PREEMPTED: Final = "Preempted"
    NO_NODES: Final = (
        'no nodes meet the job requirements (gpuType="{gpu_type}", gpus={gpus}, '
        'network="{network}", {evaluated} nodes evaluated)'
    )
    NOT_ENOUGH_NODES: Final = "not enough nodes: need {need}, found {found}"
    BEST_NODE: Final = "best: {node} {problems}"
    JOB_FAILED: Final = "{reason}: {message} ({failed}/{expected} pod(s) failed)"
    PODS_FAILED: Final = "{failed}/{total} pod(s) failed"
    NOT_OWNED: Final = (
        "{kind} {namespace}/{name} already exists and is not owned by this GryviaAIJob"
    )
    PREVIOUS_OWNER: Final = (
        "{kind} {namespace}/{name} still belongs to a deleted GryviaAIJob of the same name; "
        "waiting for it to be garbage-collected"
    )
    REFUSED: Final = "{kind} {namespace}/{name} was refused by the API server: {detail}"
    RUNNING: Final = "{ready}/{total} replicas ready"
    SUCCEEDED_SO_FAR: Final = ", {succeeded} succeeded"
    SUCCEEDED: Final = "All {total} pod(s) succeeded"
