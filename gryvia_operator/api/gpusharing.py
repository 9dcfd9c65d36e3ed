"""GryviaGPUSharingPolicy: time-slicing or MIG for the GPU nodes a selector matches, through
the NVIDIA device plugin's configuration (the ConfigMap NVIDIA's GPU Operator reads)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StrictBool, StringConstraints, model_validator

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    Conditions,
    GryviaModel,
    GryviaResource,
    KindInfo,
    PrinterColumn,
    SchemaExtra,
    Str253,
    Str1024,
    cel_rules,
)
from gryvia_operator.api.core import LabelSelector

SharingStrategy = Literal["time-slicing", "mig"]
MigStrategy = Literal["single", "mixed"]
_Int32 = SchemaExtra({"format": "int32"})


class TimeSlicing(GryviaModel):
    """Each physical GPU advertised as `replicas` shared `nvidia.com/gpu` units."""

    replicas: Annotated[int, Field(ge=2, le=64, strict=True), _Int32]
    """Shared units per physical GPU, 2..64."""
    rename_by_default: StrictBool = False
    """Advertise `nvidia.com/gpu.shared` instead of `nvidia.com/gpu`."""
    fail_requests_greater_than_one: StrictBool = False
    """Refuse pods asking for more than one shared unit (they would get no more compute)."""


class MigSharing(GryviaModel):
    """MIG partitioning: the device plugin's MIG strategy and the MIG manager's layout."""

    strategy: MigStrategy = "mixed"
    """single (every slice as `nvidia.com/gpu`) or mixed (`nvidia.com/mig-<profile>`)."""
    config: Annotated[
        str, StringConstraints(min_length=1, max_length=63, pattern=r"^[a-z0-9][a-z0-9.-]*$")
    ] = "all-1g.10gb"
    """The MIG manager's layout (`nvidia.com/mig.config`), e.g. all-1g.10gb, all-balanced."""


_RULE = "strategy time-slicing needs timeSlicing.replicas"


class GPUSharingSpec(GryviaModel):
    """Which nodes share their GPUs, and how."""

    model_config = ConfigDict(
        json_schema_extra=cel_rules(
            [{"rule": "self.strategy != 'time-slicing' || has(self.timeSlicing)", "message": _RULE}]
        )
    )

    strategy: SharingStrategy
    """time-slicing or mig."""
    node_selector: LabelSelector
    """GPU nodes by label (`{}`: every GPU node)."""
    time_slicing: TimeSlicing | None = None
    """Required with strategy time-slicing."""
    mig: MigSharing | None = None
    """Settings of strategy mig (defaults when unset)."""

    @model_validator(mode="after")
    def _needs_replicas(self) -> GPUSharingSpec:
        if self.strategy == "time-slicing" and self.time_slicing is None:
            raise ValueError(_RULE)
        return self


class GPUSharingStatus(GryviaModel):
    """What the operator applied."""

    conditions: Conditions | None = None
    """Ready (Applied, ConfigMapFailed)."""
    config_name: Str253 | None = None
    """Key of this policy's configuration in the device plugin ConfigMap (the node label)."""
    nodes: Annotated[list[Str253], Field(max_length=5000)] | None = None
    """Nodes labelled with it."""
    phase: Literal["Invalid"] | None = None
    """Invalid while the spec does not validate (the problems are in `message`)."""
    message: Str1024 | None = None
    """Why the spec is invalid."""


class GryviaGPUSharingPolicy(GryviaResource):
    """A GPU sharing policy: time-slicing or MIG for the GPU nodes a selector matches."""

    kind: Literal["GryviaGPUSharingPolicy"] = "GryviaGPUSharingPolicy"
    spec: GPUSharingSpec
    status: GPUSharingStatus | None = None


GPU_SHARING_KIND = KindInfo(
    resource=resources.GPU_SHARING_POLICY,
    model=GryviaGPUSharingPolicy,
    description=GryviaGPUSharingPolicy.__doc__ or "",
    printer_columns=(
        PrinterColumn("Strategy", ".spec.strategy"),
        PrinterColumn("Replicas", ".spec.timeSlicing.replicas", "integer"),
        PrinterColumn("Config", ".status.configName"),
        AGE_COLUMN,
    ),
    omitted=("spec.fractionalGPU, spec.priority, spec.qos, spec.tenantQuotas: not built",),
)
GryviaGPUSharingPolicy.kind_info = GPU_SHARING_KIND
