"""Static admission rules for Gryvia objects, shared by the webhook and `gryvia validate`.

Rules run on the raw object so that every violation is reported with its documented message,
even when the object does not parse; pydantic errors for fields no rule covered follow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from gryvia_operator.api import messages as msg
from gryvia_operator.api.aijob import (
    BACKENDS,
    FRAMEWORKS,
    JOB_TYPES,
    NETWORKS,
    WORKLOAD_KINDS,
    GryviaAIJob,
    GryviaAIJobSpec,
)
from gryvia_operator.api.base import API_VERSION
from gryvia_operator.api.crd.fieldcheck import (
    MISSING,
    get_path,
    int_or_none,
    pydantic_errors,
    unknown_fields,
)
from gryvia_operator.api.gputype import gpu_type_is_any, names_family, normalize_gpu_type
from gryvia_operator.api.helpers import (
    MAX_TOTAL_GPUS,
    DurationError,
    gpus_per_pod,
    parse_duration,
    pod_count,
)
from gryvia_operator.api.mig import type_serves
from gryvia_operator.api.namelimits import name_length_problem
from gryvia_operator.api.names import LABEL_GPU, LABEL_GPU_FAMILY, job_name_limit, name_problem
from gryvia_operator.api.quantity import parse_quantity
from gryvia_operator.api.registry import ALL_KINDS, kind_info

Report = Callable[[str, str], None]
NodeInventory = Iterable[tuple[str, int]]
"""Known GPU nodes as (gpuType, GPUs on the node) pairs, e.g. from GryviaGpuNode specs."""


@dataclass(frozen=True)
class FieldError:
    """One finding: the dotted field path (`spec.distributed.nodes`) and its message."""

    field: str
    message: str

    def text(self) -> str:
        """`spec.gpus: <message>`; the message alone when it already starts with the field
        (most rule messages do) or names no field."""
        if not self.field or self.message.startswith(self.field):
            return self.message
        return f"{self.field}: {self.message}"


@dataclass
class ValidationResult:
    """All errors (deny) and warnings (admit, but tell the user) found for one object."""

    errors: list[FieldError] = field(default_factory=list)
    warnings: list[FieldError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when there are no errors (warnings do not count)."""
        return not self.errors

    def denial(self, kind: str = "GryviaAIJob") -> str:
        """The webhook's message: `invalid <kind>: <msg1>; <msg2>`."""
        return msg.DENIED.format(kind=kind, reasons="; ".join(e.message for e in self.errors))


def validate_job(
    obj: Mapping[str, Any] | GryviaAIJob, *, inventory: NodeInventory | None = None
) -> ValidationResult:
    """Check a GryviaAIJob (a manifest dict or a model) against every static admission rule.

    Collects all violations (the static admission rules, messages in `messages`) plus
    pydantic errors for fields no rule covered, and warnings for fields the API server would
    drop and non-normalised GPU types. With `inventory`, adds the node warnings of
    `inventory_warnings`. Never raises for bad input; a non-mapping is one error.
    """
    if isinstance(obj, GryviaAIJob):
        obj = obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    result = ValidationResult()
    if not isinstance(obj, Mapping):
        result.errors.append(FieldError("", "a GryviaAIJob must be a mapping"))
        return result
    _check_envelope(obj, "GryviaAIJob", result)
    spec = obj.get("spec")
    if isinstance(spec, Mapping):
        _check_spec(spec, result)
    else:
        result.errors.append(FieldError("spec", msg.SPEC_REQUIRED))
    job = _parse(GryviaAIJob, obj, result)
    result.warnings.extend(FieldError(f, m) for f, m in unknown_fields(obj, "GryviaAIJob"))
    if job is not None:
        _check_name_length(job, result)
        result.warnings.extend(_gpu_type_warnings(job.spec))
        if inventory is not None:
            result.warnings.extend(inventory_warnings(job, inventory))
    return result


def inventory_warnings(
    job: GryviaAIJob | GryviaAIJobSpec, inventory: NodeInventory
) -> list[FieldError]:
    """Warn when no node carries the job's GPU type or every suitable node is too small.

    `inventory` is (gpuType, GPUs per node) per known node. CPU-only jobs get no warnings;
    a job without a concrete gpuType is compared with every node. Never denies.
    """
    spec = job.spec if isinstance(job, GryviaAIJob) else job
    per_pod = spec.gpus_per_pod()
    if per_pod == 0:
        return []
    nodes = list(inventory)
    if spec.gpu_type_constrained:
        sizes = [count for gpu_type, count in nodes if type_serves(gpu_type, spec.gpu_type)]
        if not sizes:
            text = msg.WARN_NO_GPU_TYPE.format(gpu_type=spec.gpu_type)
            return [FieldError("spec.gpuType", text)]
    else:
        sizes = [count for gpu_type, count in nodes if type_serves(gpu_type, None)]
    largest = max(sizes, default=0)
    if per_pod <= largest:
        return []
    source = "spec.gpus"
    if spec.distributed_enabled and spec.distributed and spec.distributed.gpus_per_node:
        source = "spec.distributed.gpusPerNode"
    return [
        FieldError(
            source,
            msg.WARN_NODE_TOO_SMALL.format(
                gpus=msg.gpu_count(per_pod), largest=msg.gpu_count(largest)
            ),
        )
    ]


def validate_object(obj: Any) -> ValidationResult:
    """Check any Gryvia object: GryviaAIJobs get every rule, other kinds their schema and a
    name short enough for the children they derive (`api.namelimits`).

    Unknown or missing kinds are one error naming the known kinds. Never raises.
    """
    if not isinstance(obj, Mapping):
        return ValidationResult(errors=[FieldError("", "a manifest must be a mapping")])
    kind = obj.get("kind")
    if kind == "GryviaAIJob":
        return validate_job(obj)
    result = ValidationResult()
    known = ", ".join(info.kind for info in ALL_KINDS)
    if not isinstance(kind, str) or kind not in {info.kind for info in ALL_KINDS}:
        text = f'kind "{kind or ""}" is not a Gryvia kind; known kinds: {known}'
        result.errors.append(FieldError("kind", text))
        return result
    _check_envelope(obj, kind, result)
    name = get_path(obj, "metadata", "name")
    bad = isinstance(name, str) and bool(name_problem(name))  # the envelope said so already
    if not bad and (too_long := name_length_problem(kind, obj)):
        result.errors.append(FieldError("metadata.name", too_long))
    _parse(kind_info(kind).model, obj, result)
    result.warnings.extend(FieldError(f, m) for f, m in unknown_fields(obj, kind))
    return result


# --- rules --------------------------------------------------------------------------------


def _check_name_length(job: GryviaAIJob, result: ValidationResult) -> None:
    workload = job.spec.effective_workload_kind()
    limit, child = job_name_limit(workload)
    name = job.metadata.name or ""
    if len(name) > limit and not name_problem(name):  # else the envelope said what is wrong
        kind = "StatefulSet" if workload == "statefulset" else "batch Job"
        text = msg.NAME_TOO_LONG.format(length=len(name), kind=kind, limit=limit, child=child)
        result.errors.append(FieldError("metadata.name", text))


def _check_envelope(obj: Mapping[str, Any], kind: str, result: ValidationResult) -> None:
    if obj.get("apiVersion") != API_VERSION:
        value = obj.get("apiVersion", "")
        result.errors.append(FieldError("apiVersion", msg.API_VERSION_INVALID.format(value=value)))
    if obj.get("kind") != kind:
        result.errors.append(FieldError("kind", msg.KIND_INVALID.format(value=obj.get("kind", ""))))
    name = get_path(obj, "metadata", "name")
    if isinstance(name, str) and name:
        detail = name_problem(name)
        if detail:
            text = msg.NAME_INVALID.format(value=name, detail=detail)
            result.errors.append(FieldError("metadata.name", text))
    elif name in (MISSING, None, "") and get_path(obj, "metadata", "generateName") in (
        MISSING,
        None,
        "",
    ):
        result.errors.append(FieldError("metadata.name", msg.NAME_REQUIRED))


def _check_spec(spec: Mapping[str, Any], result: ValidationResult) -> None:
    def error(path: str, text: str) -> None:
        result.errors.append(FieldError(f"spec.{path}", text))

    job_type = spec.get("type")
    valid_types = ", ".join(JOB_TYPES)
    if job_type in (None, ""):
        error("type", msg.TYPE_REQUIRED.format(valid=valid_types))
    elif job_type not in JOB_TYPES:
        error("type", msg.TYPE_UNSUPPORTED.format(value=job_type, valid=valid_types))
    gpus = int_or_none(spec.get("gpus"))
    if "gpus" not in spec or spec["gpus"] is None:
        error("gpus", msg.GPUS_REQUIRED)
    elif gpus is not None and gpus < 0:
        error("gpus", msg.GPUS_NEGATIVE.format(value=gpus))
    image = spec.get("image")
    if image is None or (isinstance(image, str) and not image.strip()):
        error("image", msg.IMAGE_REQUIRED)
    _check_enum(spec, "network", ("", *NETWORKS), msg.NETWORK_UNSUPPORTED, error)
    _check_enum(spec, "workloadKind", WORKLOAD_KINDS, msg.WORKLOAD_KIND_UNSUPPORTED, error)
    timeout = spec.get("timeout")
    if isinstance(timeout, str) and timeout:
        try:
            parse_duration(timeout, field="spec.timeout")
        except DurationError as exc:
            error("timeout", msg.TIMEOUT_INVALID.format(detail=exc))
    retry_limit = int_or_none(spec.get("retryLimit"))
    if retry_limit is not None and retry_limit < 0:
        error("retryLimit", msg.RETRY_LIMIT_NEGATIVE.format(value=retry_limit))
    priority = int_or_none(spec.get("priority"))
    if priority is not None and not 0 <= priority <= 100:
        error("priority", msg.PRIORITY_RANGE.format(value=priority))
    _check_distributed(spec, error)
    _check_total_gpus(spec, error)
    _check_cpu_only_gpu_type(spec, error)
    _check_resources(spec.get("resources"), error)


def _check_enum(
    mapping: Mapping[str, Any], key: str, valid: tuple[str, ...], template: str, error: Report
) -> None:
    value = mapping.get(key)
    if value is not None and value not in valid:
        shown = ", ".join(v for v in valid if v)
        error(key, template.format(value=value, valid=shown))


def _check_distributed(spec: Mapping[str, Any], error: Report) -> None:
    dist = spec.get("distributed")
    if not isinstance(dist, Mapping):
        return

    def sub(path: str, text: str) -> None:
        error(f"distributed.{path}", text)

    enabled = dist.get("enabled") is True
    nodes = int_or_none(dist.get("nodes"))
    per_node = int_or_none(dist.get("gpusPerNode"))
    if per_node is not None and per_node < 0:
        sub("gpusPerNode", msg.DIST_GPUS_PER_NODE.format(value=per_node))
    _check_enum(dist, "framework", ("", *FRAMEWORKS), msg.DIST_FRAMEWORK_UNSUPPORTED, sub)
    _check_enum(dist, "backend", BACKENDS, msg.DIST_BACKEND_UNSUPPORTED, sub)
    if not enabled:
        return
    if dist.get("nodes") is None or (nodes is not None and nodes <= 0):
        sub("nodes", msg.DIST_NODES.format(value=nodes or 0))
    elastic = dist.get("elastic")
    if not isinstance(elastic, Mapping):
        return
    min_nodes = int_or_none(elastic.get("minNodes"))
    if min_nodes is not None and nodes is not None and nodes > 0 and not 1 <= min_nodes <= nodes:
        sub("elastic.minNodes", msg.ELASTIC_MIN_NODES.format(nodes=nodes, value=min_nodes))
    framework = dist.get("framework") or "pytorch"
    if framework != "pytorch":
        sub("elastic", msg.ELASTIC_FRAMEWORK.format(value=framework))
    kind = spec.get("workloadKind") or ("statefulset" if spec.get("type") == "inference" else "job")
    if kind != "job":
        sub("elastic", msg.ELASTIC_WORKLOAD_KIND.format(value=kind))


def _check_total_gpus(spec: Mapping[str, Any], error: Report) -> None:
    gpus = int_or_none(spec.get("gpus"))
    if gpus is None:
        return
    dist = spec.get("distributed")
    dist = dist if isinstance(dist, Mapping) else {}
    enabled = dist.get("enabled") is True
    pods = pod_count(distributed=enabled, nodes=int_or_none(dist.get("nodes")))
    per_pod = gpus_per_pod(
        gpus=gpus, distributed=enabled, gpus_per_node=int_or_none(dist.get("gpusPerNode"))
    )
    if pods * per_pod > MAX_TOTAL_GPUS:
        text = msg.TOTAL_GPUS.format(
            nodes=pods, per_node=per_pod, total=pods * per_pod, maximum=MAX_TOTAL_GPUS
        )
        error("distributed" if enabled else "gpus", text)


def _check_cpu_only_gpu_type(spec: Mapping[str, Any], error: Report) -> None:
    """`gpus: 0` (no GPU per pod) with a concrete `gpuType` contradicts itself: the job would
    be placed as CPU-only and never get that GPU type. `any` or empty stays allowed."""
    gpus = int_or_none(spec.get("gpus"))
    gpu_type = spec.get("gpuType")
    if gpus is None or not isinstance(gpu_type, str) or gpu_type_is_any(gpu_type):
        return
    dist = spec.get("distributed")
    dist = dist if isinstance(dist, Mapping) else {}
    per_pod = gpus_per_pod(
        gpus=gpus,
        distributed=dist.get("enabled") is True,
        gpus_per_node=int_or_none(dist.get("gpusPerNode")),
    )
    if per_pod == 0 and gpus == 0:  # negative gpus has its own message
        error("gpuType", msg.GPU_TYPE_WITHOUT_GPUS.format(gpu_type=gpu_type))


def _check_resources(resources: Any, error: Report) -> None:
    if not isinstance(resources, Mapping):
        return
    requests = resources.get("requests")
    limits = resources.get("limits")
    requests = requests if isinstance(requests, Mapping) else {}
    limits = limits if isinstance(limits, Mapping) else {}
    for name, positive, above in (
        ("cpu", msg.CPU_REQUEST, msg.CPU_LIMIT),
        ("memory", msg.MEMORY_REQUEST, msg.MEMORY_LIMIT),
    ):
        request, limit = _quantity(requests.get(name)), _quantity(limits.get(name))
        if request is not None and request <= 0:
            error(f"resources.requests.{name}", positive.format(value=requests[name]))
        if request is not None and limit is not None and limit < request:
            text = above.format(limit=limits[name], request=requests[name])
            error(f"resources.limits.{name}", text)


def _quantity(value: Any) -> Any:
    try:
        return parse_quantity(value) if value is not None else None
    except ValueError:
        return None  # reported by the model as an invalid quantity


def _gpu_type_warnings(spec: GryviaAIJobSpec) -> list[FieldError]:
    if not spec.gpu_type_constrained or spec.gpu_type is None:
        return []
    normal = normalize_gpu_type(spec.gpu_type)
    if normal == spec.gpu_type:
        return []
    label = LABEL_GPU_FAMILY if names_family(normal) else LABEL_GPU
    text = (
        f'spec.gpuType "{spec.gpu_type}" is not a normalised GPU type; nodes are labelled '
        f'{label}={normal}, so use "{normal}"'
    )
    return [FieldError("spec.gpuType", text)]


def _parse(model: Any, obj: Mapping[str, Any], result: ValidationResult) -> Any:
    """Validate `obj` into `model`; pydantic errors not already reported become errors."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        covered = [e.field for e in result.errors]
        result.errors.extend(FieldError(p, m) for p, m in pydantic_errors(exc, covered))
        return None
