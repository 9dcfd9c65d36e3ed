"""The names that cross the boundary between the cluster side and the client: every label,
annotation, finalizer and name prefix Gryvia writes or reads, and the names of a job's children.

Defined here once; the operator, the webhook, the CLI, the console and the sandbox import them
(a unit test greps the tree for stray literals). Values follow the Kubernetes label and
annotation syntax (`<prefix>/<name>`, prefix `gryvia.io`).
"""

from __future__ import annotations

import re
from typing import Final

GROUP: Final = "gryvia.io"
"""The API group of every Gryvia kind, and the prefix of every label and annotation."""
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
CLI_API_VERSION: Final = f"cli.{GROUP}/v1"
"""`apiVersion` of the documents the CLI prints for computed views (capacity, cost, ...):
group `cli.gryvia.io`, version `v1` (docs/json-output.md: fields are only added within v1)."""
AIJOB_KIND_NAME: Final = "GryviaAIJob"

# Labels on every child of a GryviaAIJob and on its pods.
LABEL_JOB: Final = "gryvia.io/job"
"""The owning GryviaAIJob's name; the Service selector and the child watches use it."""
LABEL_JOB_NAME: Final = "gryvia.io/job-name"
"""Same value as LABEL_JOB, under the name the CLI and dashboards look for."""
LABEL_TYPE: Final = "gryvia.io/type"
LABEL_MANAGED_BY: Final = "app.kubernetes.io/managed-by"
MANAGED_BY: Final = "gryvia-operator"

LABEL_SYSTEM_NODE: Final = "gryvia.io/system-node"
"""Label and NoSchedule taint key of nodes set aside for platform pods: the chart's operator
pods tolerate the taint and prefer the label (`systemNodes`); the sandbox's real node has both."""

# Node labels written by GPU registration and read by placement.
LABEL_GPU: Final = "gryvia.io/gpu"
LABEL_GPU_FAMILY: Final = "gryvia.io/gpu-family"
"""The family of the node's GPU type (`A100` for `A100-80G`): what a job naming only the
family selects on (`api.gputype.gpu_selector`)."""
LABEL_GPU_COUNT: Final = "gryvia.io/gpu-count"
LABEL_GPU_MEMORY: Final = "gryvia.io/gpu-memory"
LABEL_RDMA: Final = "gryvia.io/rdma"
LABEL_SRIOV: Final = "gryvia.io/sriov"
LABEL_INTERCONNECT: Final = "gryvia.io/interconnect"
LABEL_AUTO_REGISTERED: Final = "gryvia.io/auto-registered"
NODE_LABELS: Final = (
    LABEL_GPU,
    LABEL_GPU_FAMILY,
    LABEL_GPU_COUNT,
    LABEL_GPU_MEMORY,
    LABEL_RDMA,
    LABEL_SRIOV,
)
"""Node labels auto-registration owns (removed when the node stops being a GPU node)."""

# Annotations read on a GryviaAIJob.
ANNOTATION_CANCEL: Final = "gryvia.io/cancel"
ANNOTATION_PRIORITY_CLASS: Final = "gryvia.io/priority-class"
LABEL_PRIORITY: Final = "gryvia.io/priority"
"""On a PriorityClass Gryvia manages: the GryviaPriority that owns it."""
ANNOTATION_PLACEMENT_STRATEGY: Final = "gryvia.io/placement-strategy"

# Who submitted a GryviaAIJob: stamped by the admission webhook from the request's userInfo
# on CREATE (a user cannot set another value, and nobody can change it afterwards).
ANNOTATION_SUBMITTER: Final = "gryvia.io/submitted-by"
"""The submitter's username as the API server authenticated it (`userInfo.username`)."""
ANNOTATION_SUBMITTER_GROUPS: Final = "gryvia.io/submitted-by-groups"
"""The submitter's groups (`userInfo.groups`), comma-separated, in the API server's order."""
SUBMITTER_ANNOTATIONS: Final = (ANNOTATION_SUBMITTER, ANNOTATION_SUBMITTER_GROUPS)

# Annotations written on pod templates.
ANNOTATION_ENV_VERSION: Final = "gryvia.io/env-version"
ENV_VERSION: Final = "2"
ANNOTATION_RDMA: Final = "gryvia.io/rdma"
ANNOTATION_SRIOV: Final = "gryvia.io/sriov"
ANNOTATION_NETWORKS: Final = "k8s.v1.cni.cncf.io/networks"

# Tenancy: labels on tenant namespaces and jobs, and the namespace prefix.
LABEL_TEAM: Final = "gryvia.io/team"
"""A job's (or namespace's) team; the tenant of a job outside a tenant namespace."""
LABEL_PROJECT: Final = "gryvia.io/project"
"""A job's project (the FAQ: "label jobs with team and project"): usage records carry it,
`gryvia usage --group-by project` totals by it and budgets of scope `project` count it."""
LABEL_TENANT: Final = "gryvia.io/tenant"
"""A namespace's tenant (written on `tenant-<name>` namespaces)."""
LABEL_TENANT_MANAGED_BY: Final = "gryvia.io/managed-by"
LABEL_DISPLAY_NAME: Final = "gryvia.io/display-name"
LABEL_DATA_CLASSIFICATION: Final = "gryvia.io/data-classification"
TENANT_NAMESPACE_PREFIX: Final = "tenant-"
"""A GryviaTenant `x` owns the namespace `tenant-x`."""

# Billing.
USAGE_RECORD_PREFIX: Final = "usage-"
"""A job run's usage record is `usage-<job uid>`."""
LABEL_DEFAULT_CATALOG: Final = "gryvia.io/default-catalog"
"""On the GryviaGpuSku objects of the default catalog."""

# The operator.
FINALIZER: Final = "gryvia.io/operator"
"""kopf's finalizer on the objects the operator must see deleted."""
FINALIZER_STANDBY: Final = "gryvia.io/standby-holds-no-finalizer"
"""kopf's finalizer name in a standby replica (`controller/standby.py`): no object carries it,
so that kopf never adds nor removes a finalizer there."""
FINALIZER_SAVE_LOG: Final = "gryvia.io/save-log"
"""On a job's pods (from the pod template): the pod stays, once deleted, until the operator
has saved the last part of its log in the job's saved-logs ConfigMap (see `saved_logs_name`)."""
LABEL_SAVED_LOGS: Final = "gryvia.io/saved-logs"
"""On a job's saved-logs ConfigMap (value "true"), next to LABEL_JOB."""
ANNOTATION_GENERATED_BY: Final = "gryvia.io/generated-by"
"""On generated CRDs: the generator module."""

# Slurm import (written by `gryvia sbatch`, read by the CLI and console).
LABEL_IMPORTED_FROM: Final = "gryvia.io/imported-from"
ANNOTATION_SBATCH_JOB_NAME: Final = "gryvia.io/sbatch-job-name"
ANNOTATION_SBATCH_SCRIPT: Final = "gryvia.io/sbatch-script"
ANNOTATION_SBATCH_COMMENT: Final = "gryvia.io/sbatch-comment"

# Job arrays (Slurm `--array`): elements share a name label; the throttle is an annotation.
LABEL_ARRAY_NAME: Final = "gryvia.io/array-name"
LABEL_ARRAY_INDEX: Final = "gryvia.io/array-index"
ANNOTATION_ARRAY_MAX_PARALLEL: Final = "gryvia.io/array-max-parallel"

# Reservations.
ANNOTATION_RESERVATION: Final = "gryvia.io/reservation"
TAINT_RESERVED: Final = "gryvia.io/reserved"
"""Taint key on a node a reservation claimed (value: the owner's name, effect NoSchedule)."""
LABEL_RESERVED_FOR: Final = "gryvia.io/reserved-for"
"""Node label: the reservation holding the node."""
LABEL_RESERVED_BY: Final = "gryvia.io/reserved-by"
"""Node label: the owner the node is held for."""
LABEL_EXCLUSIVE: Final = "gryvia.io/exclusive"
"""Node label `true` on the nodes of an exclusive reservation."""
RESERVATION_FINALIZER: Final = "gryvia.io/reservation-finalizer"
"""Kept on a reservation until its nodes are released."""

# GPU sharing: the policy that labelled a node (gryvia.io/gpu-sharing=<policy>).
LABEL_GPU_SHARING: Final = "gryvia.io/gpu-sharing"

# Checkpoint guards: the scheduling gate on a guarded job's pods until their resume step is set.
GATE_CHECKPOINT_RESTORE: Final = "gryvia.io/checkpoint-restore"

# Node maintenance (`gryvia maintenance start|end|list`, docs/gpu-metrics.md): a cordoned Node
# with ANNOTATION_MAINTENANCE is taken out of service on purpose; capacity and the reasons of
# waiting jobs name it with its reason.
ANNOTATION_MAINTENANCE: Final = "gryvia.io/maintenance"
"""On a Node: when its maintenance started (RFC 3339, UTC); kept when started again."""
ANNOTATION_MAINTENANCE_REASON: Final = "gryvia.io/maintenance-reason"
"""On a Node: why it is in maintenance (free text from `--reason`)."""

# The sandbox's simulated nodes.
ANNOTATION_SANDBOX_NODE: Final = "gryvia.io/sandbox"

# Labels the batch controller and StatefulSet controller put on a job's pods.
LABEL_BATCH_JOB_NAME: Final = "batch.kubernetes.io/job-name"
LABEL_LEGACY_JOB_NAME: Final = "job-name"
JOB_POD_LABELS: Final = (LABEL_JOB, LABEL_JOB_NAME, LABEL_BATCH_JOB_NAME, LABEL_LEGACY_JOB_NAME)
"""Pod labels that name the owning job, most specific first."""

ANNOTATION_LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"

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


REVISION_HASH_LENGTH: Final = 10
"""The longest hash a StatefulSet puts in its pods' `controller-revision-hash` label value
`<statefulset>-<hash>` (Kubernetes' rule, which caps StatefulSet names at 52 characters)."""


def job_name_limit(workload_kind: str) -> tuple[int, str]:
    """The longest GryviaAIJob name whose children keep their names and label values within
    63 characters, and the child that sets it: the Service `<job>-headless` (a DNS-1035 label)
    for a batch Job, the StatefulSet's revision label `<job>-training-<hash>` for a
    StatefulSet."""
    if workload_kind == "statefulset":
        child = f"label controller-revision-hash {statefulset_name('<job>')}-<hash>"
        return 63 - len(statefulset_name("")) - 1 - REVISION_HASH_LENGTH, child
    return 63 - len(service_name("")), f"Service {service_name('<job>')}"


def child_names(job_name: str) -> set[str]:
    """Every name a job's children carry (Job, Service, StatefulSet; events name them)."""
    return {batch_job_name(job_name), service_name(job_name), statefulset_name(job_name)}


def saved_logs_name(job_name: str) -> str:
    """The ConfigMap holding the saved last lines of a job's deleted pods: `<job>-logs`."""
    return f"{job_name}-logs"


def usage_record_name(job_uid: str, run: int = 0) -> str:
    """The usage record of one job run: `usage-<job uid>` for the first run, and
    `usage-<job uid>-<n>` for the run after the job's n-th preemption (it was requeued)."""
    return f"{USAGE_RECORD_PREFIX}{job_uid}" + (f"-{run}" if run > 0 else "")


# Object names: Kubernetes' DNS-1123 subdomain rule (k8s.io/apimachinery validation), which the
# API server applies to metadata.name of every custom resource.
DNS1123_SUBDOMAIN: Final = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
DNS1123_DETAIL: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com')"
)


def name_problem(name: str) -> str:
    """Why `name` cannot be an object's metadata.name ("" when it can): at most 253 characters
    of the DNS-1123 subdomain form."""
    problems = []
    if len(name) > 253:
        problems.append("must be no more than 253 characters")
    if not DNS1123_SUBDOMAIN.match(name):
        problems.append(DNS1123_DETAIL)
    return "; ".join(problems)


# Kueue integration (docs/kueue.md): a job's queue choice, and where a ClusterQueue's GPU quota
# came from (tenant, quota or unlimited).
ANNOTATION_QUEUE_NAME: Final = "gryvia.io/queue-name"
ANNOTATION_QUOTA_SOURCE: Final = "gryvia.io/quota-source"
