"""Condition types, reasons and status messages the operator writes on a GryviaAIJob.

Labels, annotations and child names live in `gryvia_operator.api.names`.
"""

from __future__ import annotations

from typing import Final


class Cond:
    """Condition types on a GryviaAIJob."""

    SCHEDULED: Final = "Scheduled"
    READY: Final = "Ready"
    REJECTED: Final = "Rejected"
    ADMITTED: Final = "Admitted"
    """False while the job waits in phase Queued for quota; True once quota is reserved."""
    ADMISSION_UNCHECKED: Final = "AdmissionUnchecked"
    """True when the admission gate admitted the job without checking its budgets."""


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
    STORAGE_QUOTA_EXCEEDED: Final = "StorageQuotaExceeded"
    DATASET_NOT_READY: Final = "DatasetNotReady"


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
