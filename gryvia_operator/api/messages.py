"""User-visible validation messages, defined once for the webhook, `gryvia validate` and CEL."""

from __future__ import annotations

from gryvia_operator.api.helpers import MAX_TOTAL_GPUS


def gpu_count(count: int) -> str:
    """`1 GPU`, `8 GPUs`: a GPU count as messages write it (never `1 GPUs`)."""
    return f"{count} GPU" if count == 1 else f"{count} GPUs"


def user_limit_text(user: str, held: int, limit: int, needed: int, team: str) -> str:
    """`user alice@example.com holds 1 of the 1 GPU one user may hold in team vision, this
    job needs 1`: the per-user hold, as the gate's condition and `status.pending` say it."""
    return (
        f"user {user} holds {held} of the {gpu_count(limit)} one user may hold in team {team}, "
        f"this job needs {needed}"
    )


def job_count(count: int) -> str:
    """`1 job`, `3 jobs`: a job count as messages write it (never `1 jobs`)."""
    return f"{count} job" if count == 1 else f"{count} jobs"


# GryviaAIJob static rules (the admission rules of the Gryvia FAQ and docs/reference/crds.md).
# Placeholders are str.format fields.
NAME_REQUIRED = "metadata.name is required"
NAME_INVALID = 'metadata.name "{value}" is invalid: {detail}'
NAME_TOO_LONG = (
    "metadata.name is {length} characters, over the {limit} a job run as a {kind} may have "
    "(its {child} must fit in 63 characters): shorten the name"
)
API_VERSION_INVALID = 'apiVersion must be gryvia.io/v1alpha1, got "{value}"'
KIND_INVALID = 'kind must be GryviaAIJob, got "{value}"'
SPEC_REQUIRED = "spec is required"
TYPE_REQUIRED = "spec.type is required; valid values: {valid}"
TYPE_UNSUPPORTED = 'spec.type "{value}" is not supported; valid values: {valid}'
GPUS_REQUIRED = "spec.gpus is required"
GPUS_NEGATIVE = "spec.gpus must not be negative, got {value}"
IMAGE_REQUIRED = "spec.image is required"
GPU_TYPE_WITHOUT_GPUS = (
    'spec.gpuType "{gpu_type}" needs GPUs, but spec.gpus is 0 (a CPU-only job); remove '
    "spec.gpuType, or set spec.gpus to 1 or more"
)
NETWORK_UNSUPPORTED = 'spec.network "{value}" is not supported; valid values: {valid}'
WORKLOAD_KIND_UNSUPPORTED = 'spec.workloadKind "{value}" is not supported; valid values: {valid}'
TIMEOUT_INVALID = "{detail}"  # parse_duration's message already starts with "spec.timeout: "
RETRY_LIMIT_NEGATIVE = "spec.retryLimit must not be negative, got {value}"
PRIORITY_RANGE = "spec.priority must be between 0 and 100, got {value}"
DIST_NODES = (
    "distributed.nodes must be greater than 0 when distributed training is enabled, got {value}"
)
DIST_GPUS_PER_NODE = "distributed.gpusPerNode must be non-negative, got {value}"
DIST_FRAMEWORK_UNSUPPORTED = (
    'distributed.framework "{value}" is not supported; valid values: {valid}'
)
DIST_BACKEND_UNSUPPORTED = 'distributed.backend "{value}" is not supported; valid values: {valid}'
ELASTIC_MIN_NODES = (
    "distributed.elastic.minNodes must be between 1 and distributed.nodes ({nodes}), got {value}"
)
ELASTIC_FRAMEWORK = 'distributed.elastic requires framework pytorch, got "{value}"'
ELASTIC_WORKLOAD_KIND = "distributed.elastic requires workloadKind job, got {value}"
TOTAL_GPUS = (
    "total GPU count ({nodes} nodes x {per_node} GPUs/node = {total}) seems unreasonably large; "
    "maximum supported is {maximum}"
)
CPU_REQUEST = "CPU request must be positive, got {value}"
MEMORY_REQUEST = "memory request must be positive, got {value}"
CPU_LIMIT = "CPU limit ({limit}) must be >= CPU request ({request})"
MEMORY_LIMIT = "memory limit ({limit}) must be >= memory request ({request})"
FIELD_REQUIRED = "{field} is required"
FIELD_INVALID = "{field}: {detail}"

# Context warnings (never deny).
WARN_NODE_TOO_SMALL = (
    "requested {gpus} per node exceeds the largest current node ({largest}); the job "
    "stays pending until a larger node exists or you use distributed training"
)
WARN_NO_GPU_TYPE = 'no node currently carries GPU type "{gpu_type}" (label gryvia.io/gpu)'

# Webhook envelope.
DENIED = "invalid {kind}: {reasons}"
ALLOWED = "GryviaAIJob is valid"

# CEL rule messages (the API server itself enforces these). They cannot quote the offending
# values: a messageExpression that converts numbers to strings fails the API server's cost
# estimate, so each is the static form of the webhook message above it.
PRIORITY_RANGE_CEL = "spec.priority must be between 0 and 100"
DIST_NODES_CEL = "distributed.nodes must be greater than 0 when distributed training is enabled"
ELASTIC_MIN_NODES_CEL = "distributed.elastic.minNodes must be between 1 and distributed.nodes"
TOTAL_GPUS_CEL = (
    "total GPU count (nodes x GPUs per node) seems unreasonably large; "
    f"maximum supported is {MAX_TOTAL_GPUS}"
)
USAGE_RECORD_FINAL = "GryviaUsageRecord spec is immutable once final is true"
GPU_SHAPE_IMMUTABLE = (
    "spec.gpus, spec.gpuType and spec.distributed cannot change once the job exists "
    "(admission judged them); delete the job and submit it again"
)
