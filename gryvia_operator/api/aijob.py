"""GryviaAIJob: a training, inference, fine-tuning or evaluation job on GPUs."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, get_args

from pydantic import ConfigDict, Field, StrictBool, StringConstraints

from gryvia_operator.api import messages as msg
from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    Conditions,
    FreeForm,
    GryviaModel,
    GryviaResource,
    Int32,
    KindInfo,
    NonNegativeInt32,
    PrinterColumn,
    SchemaExtra,
    Str63,
    Str253,
    cel_rules,
)
from gryvia_operator.api.core import EnvVar, ResourceRequirements, Toleration, VolumeMount
from gryvia_operator.api.datasetuse import DatasetMount
from gryvia_operator.api.gputype import gpu_type_is_any, gpu_type_key
from gryvia_operator.api.helpers import (
    DURATION_PATTERN,
    MAX_TOTAL_GPUS,
    JobPhase,
    parse_duration,
    phase_of,
)
from gryvia_operator.api.helpers import gpus_per_pod as _gpus_per_pod
from gryvia_operator.api.helpers import pod_count as _pod_count
from gryvia_operator.api.jobmetrics import JobGpuMetrics
from gryvia_operator.api.pending import EstimatedStart, PendingStatus
from gryvia_operator.api.quantity import Quantity

JobType = Literal["training", "inference", "fine-tuning", "evaluation"]
Network = Literal["", "standard", "rdma", "sriov"]
WorkloadKind = Literal["job", "statefulset"]
Framework = Literal["", "pytorch", "tensorflow", "horovod", "deepspeed", "megatron"]
Backend = Literal["nccl", "gloo", "mpi"]
PullPolicy = Literal["Always", "IfNotPresent", "Never"]

JOB_TYPES: tuple[str, ...] = get_args(JobType)
NETWORKS: tuple[str, ...] = tuple(n for n in get_args(Network) if n)
WORKLOAD_KINDS: tuple[str, ...] = get_args(WorkloadKind)
FRAMEWORKS: tuple[str, ...] = tuple(f for f in get_args(Framework) if f)
BACKENDS: tuple[str, ...] = get_args(Backend)
DEFAULT_STORAGE_REQUEST = "100Gi"

_ENABLED = "has(self.enabled) && self.enabled"
_DISTRIBUTED_RULES = [
    {
        "rule": f"!({_ENABLED}) || (has(self.nodes) && self.nodes > 0)",
        "message": msg.DIST_NODES_CEL,
    },
    {
        "rule": f"!({_ENABLED}) || !has(self.elastic) || !has(self.elastic.minNodes) || "
        "!has(self.nodes) || self.nodes <= 0 || "
        "(self.elastic.minNodes >= 1 && self.elastic.minNodes <= self.nodes)",
        "message": msg.ELASTIC_MIN_NODES_CEL,
    },
]

# Total GPUs = pods x GPUs per pod, the same arithmetic as helpers.total_gpus.
_DIST = "(has(self.distributed) && has(self.distributed.enabled) && self.distributed.enabled)"
_PODS = (
    f"(({_DIST} && has(self.distributed.nodes) && self.distributed.nodes > 0)"
    " ? self.distributed.nodes : 1)"
)
_PER_POD = (
    f"(({_DIST} && has(self.distributed.gpusPerNode) && self.distributed.gpusPerNode > 0)"
    " ? self.distributed.gpusPerNode : self.gpus)"
)
# What admission judged (GPU count, type and pod shape) is fixed once the job exists, as a
# batch Job's pod template is: the webhook's quota policy and the operator's placement see
# the same job for its whole life, and CEL holds it even while the webhook is down.
_SAME = "(has(self.{f}) == has(oldSelf.{f}) && (!has(self.{f}) || self.{f} == oldSelf.{f}))"
_GPU_SHAPE_RULE = {
    "rule": " && ".join(_SAME.format(f=f) for f in ("gpus", "gpuType", "distributed")),
    "message": msg.GPU_SHAPE_IMMUTABLE,
}
_SPEC_RULES = [
    {"rule": f"{_PODS} * {_PER_POD} <= {MAX_TOTAL_GPUS}", "message": msg.TOTAL_GPUS_CEL},
    _GPU_SHAPE_RULE,
]
_PRIORITY_RULE = {"rule": "self >= 0 && self <= 100", "message": msg.PRIORITY_RANGE_CEL}


class ElasticSpec(GryviaModel):
    """Elastic training (PyTorch on a batch Job): the job runs once minNodes workers succeed."""

    min_nodes: Int32 | None = None
    """Fewest workers the job can run with; 1..distributed.nodes (default nodes)."""


class DistributedSpec(GryviaModel):
    """Multi-pod training: one pod per node, rendezvous through the job's headless Service."""

    model_config = ConfigDict(json_schema_extra=cel_rules(_DISTRIBUTED_RULES))

    enabled: StrictBool = False
    """Run `nodes` pods instead of one."""
    framework: Framework | None = None
    """Training framework; empty means pytorch. Exported as GRYVIA_DIST_FRAMEWORK."""
    backend: Backend | None = None
    """Collective backend; exported as GRYVIA_DIST_BACKEND. gloo disables the NCCL variables."""
    nodes: Int32 | None = None
    """Number of pods (workers); must be > 0 when enabled."""
    gpus_per_node: NonNegativeInt32 | None = None
    """GPUs per pod; 0 or unset means spec.gpus."""
    elastic: ElasticSpec | None = None
    """Elastic range (pytorch and workloadKind job only)."""


class GryviaAIJobSpec(GryviaModel):
    """What to run, on how many GPUs of which type, and how to treat failures."""

    model_config = ConfigDict(json_schema_extra=cel_rules(_SPEC_RULES))

    type: JobType
    """Kind of work; decides the default workloadKind (inference -> statefulset)."""
    model: str | None = None
    """Informational model name, e.g. llama-70b."""
    gpus: NonNegativeInt32
    """GPUs per pod; 0 is a CPU-only job (no GPU limit, no GPU node selector, no placement)."""
    gpu_type: str | None = None
    """Required value of the node label gryvia.io/gpu (H100, A100-80G, L40, ...); empty or
    `any` places no constraint."""
    image: Annotated[str, StringConstraints(min_length=1)]
    """Container image of the trainer."""
    image_pull_policy: PullPolicy | None = None
    """Image pull policy of the trainer container."""
    command: list[str] | None = None
    """Container entrypoint."""
    args: list[str] | None = None
    """Container arguments."""
    env: list[EnvVar] | None = None
    """Environment; the operator appends its own variables after these."""
    working_dir: str | None = None
    """Working directory of the trainer container."""
    distributed: DistributedSpec | None = None
    """Multi-pod settings."""
    network: Network | None = None
    """standard, rdma (nodes labelled gryvia.io/rdma=true, NCCL over InfiniBand) or sriov."""
    storage: str | None = None
    """StorageClass name; when set the operator creates PVC `<job>-data` mounted at /data."""
    storage_request: Quantity = DEFAULT_STORAGE_REQUEST
    """Size of the `<job>-data` PVC."""
    datasets: Annotated[list[DatasetMount], Field(max_length=16)] | None = None
    """GryviaDatasets mounted read-only (`[{name, mountPath}]`); the job waits until each is
    staged (docs/datasets.md)."""
    resources: ResourceRequirements | None = None
    """CPU and memory requests and limits of the trainer container."""
    volumes: list[FreeForm] | None = None
    """Extra pod volumes (Kubernetes `Volume`), passed through."""
    volume_mounts: list[VolumeMount] | None = None
    """Extra mounts of the trainer container."""
    priority: Annotated[Int32, SchemaExtra({"x-kubernetes-validations": [_PRIORITY_RULE]})] = 0
    """0..100; bucketed by tens into Kueue WorkloadPriorityClasses. With priorities enabled,
    mapped to a GryviaPriority by the table of docs/priorities.md unless priorityClassName is
    set."""
    priority_class_name: Str253 | None = None
    """A GryviaPriority (its PriorityClass of the same name goes on the pods); wins over
    `priority`. Only with the operator's priorities enabled."""
    retry_limit: NonNegativeInt32 = 0
    """Failed pods tolerated before the job fails (batch Job backoffLimit)."""
    timeout: Annotated[str, StringConstraints(max_length=64, pattern=DURATION_PATTERN)] | None = (
        None
    )
    """Wall-clock limit such as 90m, 24h, 7d or 1d12h (activeDeadlineSeconds); must be positive."""
    node_selector: dict[str, str] | None = None
    """Extra node labels the pods require."""
    tolerations: list[Toleration] | None = None
    """Pod tolerations."""
    affinity: FreeForm | None = None
    """Pod affinity (Kubernetes `Affinity`), passed through."""
    workload_kind: WorkloadKind | None = None
    """job or statefulset; default statefulset for inference, job otherwise. An existing
    workload is never migrated."""
    suspend: StrictBool = False
    """Create the batch Job suspended, or suspend it (job kind only; Kueue may override)."""
    queue_name: Str253 | None = None
    """Kueue LocalQueue (only with the Kueue integration)."""

    @property
    def distributed_enabled(self) -> bool:
        """True when `distributed.enabled` is set."""
        return self.distributed is not None and self.distributed.enabled

    def pod_count(self) -> int:
        """Pods of the job: `max(distributed.nodes, 1)` when distributed, else 1."""
        nodes = self.distributed.nodes if self.distributed else None
        return _pod_count(distributed=self.distributed_enabled, nodes=nodes)

    def gpus_per_pod(self) -> int:
        """GPUs each pod requests (`distributed.gpusPerNode` if > 0, else `gpus`)."""
        per_node = self.distributed.gpus_per_node if self.distributed else None
        return _gpus_per_pod(
            gpus=self.gpus, distributed=self.distributed_enabled, gpus_per_node=per_node
        )

    def total_gpus(self) -> int:
        """Total GPUs of the job, `pod_count() * gpus_per_pod()`."""
        return self.pod_count() * self.gpus_per_pod()

    @property
    def cpu_only(self) -> bool:
        """True when pods request no GPU (no GPU limit, selector or placement)."""
        return self.gpus_per_pod() == 0

    @property
    def gpu_type_constrained(self) -> bool:
        """True when gpuType names a concrete type (not empty or `any`)."""
        return not gpu_type_is_any(self.gpu_type)

    @property
    def gpu_type_key(self) -> str:
        """The canonical GPU type asked for (`api.gputype`): `h100` -> `H100`; "" for any."""
        return gpu_type_key(self.gpu_type)

    def timeout_seconds(self) -> int | None:
        """The timeout in whole seconds, None when unset or empty.

        Raises DurationError (message `spec.timeout: ...`) when malformed or not positive.
        """
        if not self.timeout:
            return None
        return parse_duration(self.timeout, field="spec.timeout")

    def effective_workload_kind(self) -> WorkloadKind:
        """`workloadKind`, else statefulset for inference and job for everything else."""
        if self.workload_kind is not None:
            return self.workload_kind
        return "statefulset" if self.type == "inference" else "job"

    def effective_framework(self) -> str:
        """`distributed.framework`, with empty or unset meaning pytorch."""
        framework = self.distributed.framework if self.distributed else None
        return framework or "pytorch"


class KueueJobStatus(GryviaModel):
    """Where Kueue has the job (only with the Kueue integration, docs/kueue.md)."""

    queue_name: Str63 | None = None
    """The LocalQueue the job was sent to (in the job's namespace)."""
    cluster_queue: Str63 | None = None
    """The ClusterQueue that admitted it (set from its admission on)."""
    flavor: Str63 | None = None
    """The ResourceFlavor of its GPUs at admission (e.g. gryvia-h100)."""
    borrowed_gpus: NonNegativeInt32 | None = Field(default=None, alias="borrowedGPUs")
    """GPUs of the job over its team's nominal quota, borrowed from the cohort: the
    ClusterQueue's borrowed GPUs of the flavor when the operator first saw the admission, at
    most the job's GPUs (Kueue records borrowing per ClusterQueue, not per job)."""


class GryviaAIJobStatus(GryviaModel):
    """Observed state, written by the operator (and the quota operator for Queued/Rejected)."""

    phase: JobPhase | None = None
    """Lifecycle phase; empty is treated as Pending."""
    conditions: Conditions | None = None
    """Scheduled, Ready, Rejected, KueueAdmitted, BudgetWarning, AdmissionUnchecked, Reservation."""
    message: str | None = None
    """Human-readable detail of the phase."""
    start_time: datetime | None = None
    """When the workload started running."""
    completion_time: datetime | None = None
    """When the job reached a terminal phase."""
    nodes_allocated: list[str] | None = None
    """Nodes chosen by the advisory placement."""
    gpus_allocated: Int32 | None = None
    """GPUs per pod placed (0 when Kueue or CPU-only)."""
    retries: Int32 | None = None
    """Failed pods so far (batch Job status.failed)."""
    replicas_ready: Int32 | None = None
    """Ready pods (Job status.ready or StatefulSet readyReplicas)."""
    pending: PendingStatus | None = None
    """Why the job waits, with numbers (only while Pending, Queued or suspended)."""
    estimated_start: EstimatedStart | None = None
    """When it should start: a range, or unknown with the reason (only while it waits)."""
    preemptions: NonNegativeInt32 | None = None
    """Times a higher-priority job preempted this one: requeued by the quota gate, or pods
    evicted by the kube-scheduler on full nodes (counted in `schedulerPreemptions` too)."""
    scheduler_preemptions: NonNegativeInt32 | None = None
    """Of `preemptions`, those by the kube-scheduler: the job kept its run (its Job replaced
    the evicted pods), so they start no new run and no new usage record."""
    carried_retries: NonNegativeInt32 | None = None
    """Failed pods of runs before the last preemption; `retries` includes them and the new
    run's batch Job may fail only `retryLimit - carriedRetries` more pods."""
    kueue: KueueJobStatus | None = None
    """The job's Kueue queue, and once admitted its ClusterQueue, flavor and borrowed GPUs."""
    metrics: JobGpuMetrics | None = None
    """Its GPU use, sampled from dcgm-exporter while it runs (`api.jobmetrics`)."""


class GryviaAIJob(GryviaResource):
    """A GPU job: the operator turns it into a PVC, a headless Service and a Job or StatefulSet."""

    kind: Literal["GryviaAIJob"] = "GryviaAIJob"
    spec: GryviaAIJobSpec
    status: GryviaAIJobStatus | None = None

    @property
    def phase(self) -> JobPhase:
        """`status.phase` as a JobPhase; Pending when unset."""
        return phase_of(self.status.phase if self.status else None)


AIJOB_KIND = KindInfo(
    resource=resources.AIJOB,
    model=GryviaAIJob,
    description=GryviaAIJob.__doc__ or "",
    printer_columns=(
        PrinterColumn("Type", ".spec.type"),
        PrinterColumn("GPUs", ".spec.gpus", "integer", "GPUs per pod"),
        PrinterColumn("GPU-Type", ".spec.gpuType"),
        PrinterColumn("Phase", ".status.phase"),
        AGE_COLUMN,
        PrinterColumn(
            "Nodes", ".spec.distributed.nodes", "integer", "Pods of a distributed job", 1
        ),
        PrinterColumn("Priority", ".spec.priority", "integer", priority=1),
        PrinterColumn("Timeout", ".spec.timeout", priority=1),
        PrinterColumn("Message", ".status.message", priority=1),
        PrinterColumn("Waiting-For", ".status.pending.kind", priority=1),
        PrinterColumn("Likely-Start", ".status.estimatedStart.likely", "date", priority=1),
    ),
    omitted=(
        "status.placementExplanation: fabric-aware ranking is not built",
        "status.dataset and distributed.elastic.desiredNodes: dataset and resize features "
        "are not built",
        "phase Unknown: never written",
    ),
)
GryviaAIJob.kind_info = AIJOB_KIND
