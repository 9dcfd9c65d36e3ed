"""GryviaModelRegistry: one model's versions (artifacts, source, metrics), the stage of each
(`None`, `Staging`, `Production`, `Archived`), the promotion policy, and `autoServe`: a
GryviaInferenceService kept serving the Production version."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    GryviaModel,
    GryviaResource,
    KindInfo,
    PrinterColumn,
    Str253,
    Str1024,
)
from gryvia_operator.api.inference import GryviaInferenceServiceSpec

Stage = Literal["None", "Staging", "Production", "Archived"]
STAGES: tuple[Stage, ...] = ("None", "Staging", "Production", "Archived")
RegistryPhase = Literal["NoProduction", "Ready", "RollingOut", "Blocked", "Invalid"]
SourceKind = Literal["GryviaAIJob", "GryviaAutoTuner"]

LABEL_REGISTRY = "gryvia.io/model-registry"
"""On an inference service a registry created (autoServe with a template): the registry."""
VERSION_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$"
"""A version: 1 to 63 characters of letters, digits, `.`, `_`, `-`, alphanumeric at both ends
(it becomes the `gryvia.io/model-version` label of the serving pods)."""
PLACEHOLDER = re.compile(r"\$\(model\.(name|version|artifact)\)")
"""`$(model.name)`, `$(model.version)`, `$(model.artifact)` in autoServe.template's image,
command and env values, replaced by the Production version's."""
VersionName = Annotated[str, StringConstraints(pattern=VERSION_PATTERN)]


class PvcArtifact(GryviaModel):
    """A path on a PersistentVolumeClaim that a job wrote the model to."""

    claim_name: Str253
    """The PVC's name (same namespace as the registry)."""
    path: Annotated[str, StringConstraints(min_length=1, max_length=1024)]
    """Path inside the volume, e.g. /models/llm/3."""


class Artifacts(GryviaModel):
    """Where a version's files are: a URI (s3://, gs://, https://, ...) or a PVC path."""

    uri: Str1024 | None = None
    """The artifacts' URI."""
    pvc: PvcArtifact | None = None
    """The PVC path a job wrote."""

    @model_validator(mode="after")
    def _one(self) -> Artifacts:
        if (self.uri is None) == (self.pvc is None):
            raise ValueError("artifacts: set exactly one of uri and pvc")
        return self

    def ref(self) -> str:
        """One string for the artifacts: the URI, or `pvc://<claim>/<path>`."""
        if self.uri is not None:
            return self.uri
        assert self.pvc is not None
        return f"pvc://{self.pvc.claim_name}/{self.pvc.path.lstrip('/')}"


class VersionSource(GryviaModel):
    """What produced a version: a GryviaAIJob, or a trial of a GryviaAutoTuner."""

    kind: SourceKind
    """GryviaAIJob or GryviaAutoTuner."""
    name: Str253
    """The job's or tuner's name (same namespace)."""
    trial: Str253 | None = None
    """With a tuner: the trial (its job name, e.g. sweep-t3)."""

    def ref(self) -> str:
        """`job/NAME`, `tuner/NAME` or `tuner/NAME/TRIAL`."""
        if self.kind == "GryviaAIJob":
            return f"job/{self.name}"
        return f"tuner/{self.name}" + (f"/{self.trial}" if self.trial else "")


class ModelVersion(GryviaModel):
    """One registered version of the model."""

    version: VersionName
    """The version, e.g. 3 or 2026-12-01."""
    artifacts: Artifacts
    """Where its files are."""
    source: VersionSource | None = None
    """The job or tuner trial that produced it."""
    metrics: dict[str, Annotated[float, Field(allow_inf_nan=False)]] | None = None
    """Named evaluation results, e.g. {accuracy: 0.93}; the promotion policy reads them."""
    stage: Stage = "None"
    """None, Staging, Production or Archived; at most one version is Production. Change it
    with `gryvia model promote` (which applies the promotion policy) or `rollback`."""
    registered_at: str | None = None
    """When it was registered (RFC 3339, UTC)."""


class MetricRule(GryviaModel):
    """A metric a version must have, at least `min` and/or at most `max`, to reach Production."""

    metric: Annotated[str, StringConstraints(min_length=1, max_length=63)]
    """Name in the version's metrics."""
    min: Annotated[float, Field(allow_inf_nan=False)] | None = None
    """Least value allowed (inclusive)."""
    max: Annotated[float, Field(allow_inf_nan=False)] | None = None
    """Greatest value allowed (inclusive)."""

    @model_validator(mode="after")
    def _bound(self) -> MetricRule:
        if self.min is None and self.max is None:
            raise ValueError(
                f"promotionPolicy.metrics ({self.metric}): set min (above) or max (below)"
            )
        return self


class PromotionPolicy(GryviaModel):
    """What a version needs to be promoted to Production (rules in api/modelpolicy.py)."""

    from_stages: list[Stage] | None = None
    """Stages a version may be promoted to Production from, e.g. [Staging]; unset: any."""
    metrics: list[MetricRule] | None = None
    """Metric thresholds the version must meet."""


class AutoServe(GryviaModel):
    """Keep a GryviaInferenceService serving the Production version.

    With `template`, the registry creates (and owns) the service and rewrites its spec from the
    template with `$(model.name|version|artifact)` replaced; without it, `serviceName` must
    name an existing service, whose version, model and GRYVIA_MODEL_* env are patched.
    Every served pod gets GRYVIA_MODEL_NAME, GRYVIA_MODEL_VERSION and GRYVIA_MODEL_ARTIFACT."""

    service_name: Str253 | None = None
    """The service (default: the registry's name)."""
    template: GryviaInferenceServiceSpec | None = None
    """Spec of the service to create; its version and model are set by the registry."""


class GryviaModelRegistrySpec(GryviaModel):
    """The model, its versions and how they are promoted and served."""

    model_name: Annotated[str, StringConstraints(min_length=1, max_length=253)]
    """The model's name, e.g. llama-support."""
    versions: list[ModelVersion] = Field(default_factory=list)
    """Registered versions, oldest first."""
    promotion_policy: PromotionPolicy | None = None
    """Rules a version must meet to be promoted to Production."""
    auto_serve: AutoServe | None = None
    """Serve the Production version with a GryviaInferenceService."""
    production_history: list[VersionName] | None = None
    """Versions in the order they reached Production (written by `gryvia model promote` and
    `rollback`); rollback returns to the entry before the current one."""

    @model_validator(mode="after")
    def _check(self) -> GryviaModelRegistrySpec:
        seen: set[str] = set()
        for v in self.versions:
            if v.version in seen:
                raise ValueError(f"spec.versions: version {v.version} is registered twice")
            seen.add(v.version)
        prod = [v.version for v in self.versions if v.stage == "Production"]
        if len(prod) > 1:
            raise ValueError(
                f"spec.versions: {', '.join(prod)} are all Production; keep one "
                "(archive the others)"
            )
        return self

    def find(self, version: str) -> ModelVersion | None:
        """The version named `version`, or None."""
        return next((v for v in self.versions if v.version == version), None)

    def production(self) -> ModelVersion | None:
        """The Production version, or None."""
        return next((v for v in self.versions if v.stage == "Production"), None)


class GryviaModelRegistryStatus(GryviaModel):
    """Written by the operator (`--enable-model-registry`)."""

    phase: RegistryPhase | None = None
    """NoProduction (no version is Production), Ready (the Production version is served, or
    nothing is to serve it), RollingOut (the service has not rolled it out yet), Blocked (the
    Production version breaks the promotion policy and is not served), Invalid."""
    production_version: str | None = None
    """The Production version."""
    serving_version: str | None = None
    """The version the autoServe service serves (its status.servingVersion)."""
    service: str | None = None
    """The autoServe GryviaInferenceService's name."""
    previous_production: str | None = None
    """The version `gryvia model rollback` would return to."""
    versions: int | None = None
    """Registered versions."""
    message: str | None = None
    """Detail of the phase."""


class GryviaModelRegistry(GryviaResource):
    """A model's versions, their stages and promotion rules, served on reaching Production."""

    kind: Literal["GryviaModelRegistry"] = "GryviaModelRegistry"
    spec: GryviaModelRegistrySpec
    status: GryviaModelRegistryStatus | None = None


MODEL_REGISTRY_KIND = KindInfo(
    resource=resources.MODEL_REGISTRY,
    model=GryviaModelRegistry,
    description=GryviaModelRegistry.__doc__ or "",
    printer_columns=(
        PrinterColumn("Model", ".spec.modelName"),
        PrinterColumn("Production", ".status.productionVersion"),
        PrinterColumn("Serving", ".status.servingVersion"),
        PrinterColumn("Phase", ".status.phase"),
        AGE_COLUMN,
        PrinterColumn("Service", ".status.service", priority=1),
        PrinterColumn("Versions", ".status.versions", "integer", priority=1),
        PrinterColumn("Message", ".status.message", priority=1),
    ),
    omitted=(
        "one object per version (reference: modelName, version, stage per object): here one "
        "object holds every version of a model, so promotion and rollback are one write",
        "rollbackPolicy (automatic rollback): rollback is `gryvia model rollback`",
        "servingConfig: autoServe.template is a GryviaInferenceService spec",
        "mounting a PVC artifact into the served pods: its path is passed as "
        "GRYVIA_MODEL_ARTIFACT (pvc://claim/path)",
    ),
)
GryviaModelRegistry.kind_info = MODEL_REGISTRY_KIND
