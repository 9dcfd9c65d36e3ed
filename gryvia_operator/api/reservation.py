"""GryviaReservation: GPUs of a type held for an owner over a time window."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StrictBool, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    Conditions,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeInt32,
    PositiveInt32,
    PrinterColumn,
    Str63,
    Str253,
    cel_rules,
)
from gryvia_operator.api.helpers import DURATION_PATTERN

OwnerType = Literal["team", "namespace", "tenant"]
ScheduleType = Literal["immediate", "scheduled", "recurring"]
ReservationState = Literal["pending", "active", "expired"]

_SCHEDULE_RULES = [
    {
        "rule": "self.type != 'scheduled' || has(self.startTime)",
        "message": "schedule.startTime is required when schedule.type is scheduled",
    },
    {
        "rule": "self.type != 'recurring' || has(self.recurrence)",
        "message": "schedule.recurrence is required when schedule.type is recurring",
    },
    {
        "rule": "self.type == 'recurring' || has(self.endTime)",
        "message": "schedule.endTime is required unless schedule.type is recurring",
    },
    {
        "rule": "!has(self.startTime) || !has(self.endTime) || self.startTime < self.endTime",
        "message": "schedule.startTime must be before schedule.endTime",
    },
]


class ReservationOwner(GryviaModel):
    """Who may use the reservation."""

    type: OwnerType
    """team (job label gryvia.io/team), namespace, or tenant (tenant name or `tenant-<name>`)."""
    name: Annotated[str, StringConstraints(min_length=1, max_length=63)]
    """Owner name."""


class ReservationResources(GryviaModel):
    """What is reserved."""

    gpu_type: Str63 | None = None
    """GPU type (node label gryvia.io/gpu)."""
    gpu_count: PositiveInt32 | None = None
    """GPUs to cover; whole nodes are claimed until the count is reached."""
    nodes: list[Str253] | None = None
    """Exact nodes to claim instead of counting GPUs."""


class Recurrence(GryviaModel):
    """A repeating window."""

    cron: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    """Five-field cron expression in UTC (no names or macros; day-of-month and day-of-week
    are OR-ed)."""
    duration: Annotated[str, StringConstraints(max_length=64, pattern=DURATION_PATTERN)]
    """Length of each window, e.g. 8h, 90m, 2d."""


class ReservationSchedule(GryviaModel):
    """When the reservation holds its nodes."""

    model_config = ConfigDict(json_schema_extra=cel_rules(_SCHEDULE_RULES))

    type: ScheduleType
    """immediate (from creation), scheduled (from startTime) or recurring."""
    start_time: datetime | None = None
    """Start of the window (scheduled)."""
    end_time: datetime | None = None
    """End of the window (immediate and scheduled)."""
    recurrence: Recurrence | None = None
    """Repeating windows (recurring)."""


class ReservationGuarantees(GryviaModel):
    """How the reserved nodes are held."""

    exclusive: StrictBool | None = None
    """Label the nodes gryvia.io/exclusive=true."""


class GryviaReservationSpec(GryviaModel):
    """Owner, resources and time window."""

    owner: ReservationOwner
    """Who may use it; jobs opt in with the annotation `gryvia.io/reservation: <name>`."""
    resources: ReservationResources
    """What is held."""
    schedule: ReservationSchedule
    """When it is held."""
    guarantees: ReservationGuarantees | None = None
    """How it is held."""


class GryviaReservationStatus(GryviaModel):
    """Allocation and lifecycle."""

    state: ReservationState | None = None
    """pending, active or expired (deleting the object cancels it)."""
    allocated_nodes: list[str] | None = None
    """Nodes tainted `gryvia.io/reserved=<owner>:NoSchedule` and labelled
    `gryvia.io/reserved-for=<name>`."""
    allocated_gpus: NonNegativeInt32 | None = Field(default=None, alias="allocatedGPUs")
    """GPUs on the allocated nodes."""
    actual_start_time: datetime | None = None
    """When nodes were first claimed."""
    actual_end_time: datetime | None = None
    """When nodes were released."""
    message: str | None = None
    """Detail of the state."""
    conditions: Conditions | None = None
    """Standard conditions."""


class GryviaReservation(GryviaResource):
    """Reserved GPU nodes: tainted for everyone except jobs of the owner that opt in."""

    kind: Literal["GryviaReservation"] = "GryviaReservation"
    spec: GryviaReservationSpec
    status: GryviaReservationStatus | None = None


RESERVATION_KIND = KindInfo(
    resource=resources.RESERVATION,
    model=GryviaReservation,
    description=GryviaReservation.__doc__ or "",
    printer_columns=(
        PrinterColumn("Owner", ".spec.owner.name"),
        PrinterColumn("GPUs", ".spec.resources.gpuCount", "integer"),
        PrinterColumn("GPU-Type", ".spec.resources.gpuType"),
        PrinterColumn("State", ".status.state"),
        PrinterColumn("Start", ".status.actualStartTime", "date"),
        PrinterColumn("End", ".spec.schedule.endTime", "date"),
        AGE_COLUMN,
    ),
    omitted=(
        "owner types user and project: no job carries a user or project identity to match",
        "spec.schedule.autoExtend, spec.guarantees.preemptible and sla, spec.billing, "
        "spec.notifications, status.cost, status.utilizationMetrics: no controller acts on them",
    ),
)
GryviaReservation.kind_info = RESERVATION_KIND
