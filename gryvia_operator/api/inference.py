"""GryviaInferenceService: a model served from an image as a Deployment behind a Service,
with readiness from a health check, fixed replicas or an HPA, and an optional canary."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StringConstraints, model_validator

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeInt32,
    PositiveInt32,
    PrinterColumn,
    Str63,
    Str253,
)

LABEL_SERVICE = "gryvia.io/inference-service"
"""On both Deployments and their pods: the service's name (the Service selects on it)."""
LABEL_TRACK = "gryvia.io/inference-track"
"""On each Deployment and its pods: `stable` or `canary`."""
LABEL_VERSION = "gryvia.io/model-version"
"""On each Deployment and its pods: the version it serves."""
ANNOTATION_HASH = "gryvia.io/spec-hash"
"""On each child: a hash of the spec the controller last wrote (rewritten when it differs)."""
ServicePhase = Literal["Pending", "Ready", "NotReady", "Invalid"]


def stable_name(service: str) -> str:
    """The stable Deployment (and the Service and HPA) of inference service `service`."""
    return service


def canary_name(service: str) -> str:
    """The canary Deployment of inference service `service`."""
    return f"{service}-canary"


class HealthCheck(GryviaModel):
    """Readiness: an HTTP GET of `path` on the serving port (200-399 passes), or a command
    exiting 0. Exactly one of path and command."""

    path: Str253 | None = None
    """HTTP path, e.g. /healthz."""
    command: list[str] | None = None
    """Command run in the container."""
    initial_delay_seconds: NonNegativeInt32 = 0
    """Seconds before the first check."""
    period_seconds: PositiveInt32 = 2
    """Seconds between checks."""

    @model_validator(mode="after")
    def _one(self) -> HealthCheck:
        if (self.path is None) == (self.command is None):
            raise ValueError("spec.healthCheck: set exactly one of path and command")
        if self.path is not None and not self.path.startswith("/"):
            raise ValueError("spec.healthCheck.path must start with / (e.g. /healthz)")
        return self


class Autoscaling(GryviaModel):
    """An HPA on the stable Deployment: on CPU utilisation, or on a custom per-pod metric
    (needs a metrics adapter serving custom.metrics.k8s.io)."""

    min_replicas: PositiveInt32 = 1
    """Least replicas; at least 1 (scale to zero needs an activator Gryvia does not run)."""
    max_replicas: PositiveInt32
    """Most replicas."""
    target_cpu_utilization: Annotated[int, Field(ge=1, le=100)] | None = None
    """Target average CPU utilisation, percent of the request (default 80 when no metric)."""
    metric: Str253 | None = None
    """Custom per-pod metric name (instead of CPU)."""
    target_average_value: Str63 | None = None
    """Target average value of `metric` per pod (a quantity, e.g. `10` or `500m`)."""
    scale_to_zero: StrictBool | None = None
    """Refused when true: scaling to zero needs an activator that holds requests while a pod
    starts (Knative, KEDA's HTTP add-on), which Gryvia does not run."""

    @model_validator(mode="after")
    def _check(self) -> Autoscaling:
        if self.scale_to_zero:
            raise ValueError(
                "spec.autoscaling.scaleToZero needs an activator (Knative or KEDA's HTTP "
                "add-on) that Gryvia does not run; remove it and keep minReplicas >= 1"
            )
        if self.max_replicas < self.min_replicas:
            raise ValueError("spec.autoscaling.maxReplicas must be >= minReplicas")
        if (self.metric is None) != (self.target_average_value is None):
            raise ValueError(
                "spec.autoscaling: set metric and targetAverageValue together (or neither, for CPU)"
            )
        if self.metric is not None and self.target_cpu_utilization is not None:
            raise ValueError("spec.autoscaling: set targetCpuUtilization or metric, not both")
        return self


class Canary(GryviaModel):
    """A second Deployment taking about `weight` percent of the traffic: the Service selects
    both, so the split is the ratio of ready replicas (kube-proxy spreads connections evenly
    over endpoints), not a per-request weight."""

    image: Annotated[str, StringConstraints(min_length=1, max_length=1024)]
    """Image of the canary."""
    version: Str63 | None = None
    """Version it serves (default: the image's tag)."""
    weight: Annotated[int, Field(ge=0, le=100)] = 10
    """Percent of replicas (so of endpoints) given to the canary."""
    command: list[str] | None = None
    """Command (default: the service's)."""


class GryviaInferenceServiceSpec(GryviaModel):
    """What to serve and how."""

    image: Annotated[str, StringConstraints(min_length=1, max_length=1024)]
    """Serving image."""
    version: Str63 | None = None
    """The version served (default: the image's tag); shown in status.servingVersion."""
    model: Str253 | None = None
    """Model name (informational; a registry entry's name when it created this service)."""
    command: list[str] | None = None
    """Command (default: the image's entrypoint)."""
    env: dict[str, str] | None = None
    """Environment variables."""
    port: Annotated[int, Field(ge=1, le=65535)] = 8080
    """Port the server listens on; the Service exposes it under the same number."""
    gpus: NonNegativeInt32 = 0
    """GPUs per replica (nvidia.com/gpu)."""
    cpu: Str63 | None = None
    """CPU request per replica (e.g. 500m); needed for CPU autoscaling."""
    memory: Str63 | None = None
    """Memory request per replica (e.g. 1Gi)."""
    health_check: HealthCheck | None = None
    """Readiness check; without it a replica is ready once it runs."""
    replicas: NonNegativeInt32 = 1
    """Replicas when autoscaling is not set."""
    autoscaling: Autoscaling | None = None
    """An HPA instead of fixed replicas."""
    canary: Canary | None = None
    """A canary Deployment."""


class GryviaInferenceServiceStatus(GryviaModel):
    """Written by the operator from the Deployments."""

    phase: ServicePhase | None = None
    """Pending (no replica ready yet), Ready (every wanted replica ready), NotReady (some),
    Invalid (message says why)."""
    url: str | None = None
    """In-cluster URL: http://<name>.<namespace>.svc:<port>."""
    replicas: NonNegativeInt32 | None = None
    """Replicas wanted (stable + canary)."""
    ready_replicas: NonNegativeInt32 | None = None
    """Replicas ready (stable + canary)."""
    serving_version: str | None = None
    """The stable version."""
    canary_version: str | None = None
    """The canary's version, when there is one."""
    canary_replicas: NonNegativeInt32 | None = None
    """Replicas of the canary."""
    message: str | None = None
    """Detail of the phase."""


class GryviaInferenceService(GryviaResource):
    """A model server: a Deployment and a Service, readiness, replicas or an HPA, a canary."""

    kind: Literal["GryviaInferenceService"] = "GryviaInferenceService"
    spec: GryviaInferenceServiceSpec
    status: GryviaInferenceServiceStatus | None = None


INFERENCE_SERVICE_KIND = KindInfo(
    resource=resources.INFERENCE_SERVICE,
    model=GryviaInferenceService,
    description=GryviaInferenceService.__doc__ or "",
    printer_columns=(
        PrinterColumn("Phase", ".status.phase"),
        PrinterColumn("Ready", ".status.readyReplicas", "integer"),
        PrinterColumn("Replicas", ".status.replicas", "integer"),
        PrinterColumn("Version", ".status.servingVersion"),
        AGE_COLUMN,
        PrinterColumn("URL", ".status.url", priority=1),
        PrinterColumn("Canary", ".status.canaryVersion", priority=1),
        PrinterColumn("Message", ".status.message", priority=1),
    ),
    omitted=(
        "per-request traffic weights: the canary's share is its share of the endpoints",
        "scale to zero: needs an activator; refused",
        "serving from a registry entry directly: spec.image is required",
    ),
)
GryviaInferenceService.kind_info = INFERENCE_SERVICE_KIND
