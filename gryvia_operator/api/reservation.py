"""GryviaReservation: GPUs of a type held for an owner over a time window."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

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
from gryvia_operator.api.names import LABEL_EXCLUSIVE as LABEL_EXCLUSIVE
from gryvia_operator.api.names import LABEL_RESERVED_BY as LABEL_RESERVED_BY
from gryvia_operator.api.names import LABEL_RESERVED_FOR as LABEL_RESERVED_FOR
from gryvia_operator.api.names import RESERVATION_FINALIZER as RESERVATION_FINALIZER
from gryvia_operator.api.names import TAINT_RESERVED as TAINT_RESERVED

_CRON_FIELD = re.compile(r"^[0-9*/,-]+$")

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
    """Detail of the state (or why the spec is invalid)."""
    phase: Literal["Invalid"] | None = None
    """Invalid while the spec does not validate (the problems are in `message`)."""
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


def cron_problem(expr: str) -> str | None:
    """None when `expr` is a five-field UTC cron expression of numbers, `*`, `/`, `,` and `-`
    (no names, no macros); else what is wrong, naming the field `schedule.recurrence.cron`."""
    from cronsim import CronSim, CronSimError

    fields = expr.split()
    if len(fields) != 5:
        return (
            f"schedule.recurrence.cron: {expr!r} has {len(fields)} fields; use 5 "
            "(minute hour day-of-month month day-of-week), e.g. '0 22 * * *'"
        )
    bad = [f for f in fields if not _CRON_FIELD.match(f)]
    if bad:
        return (
            f"schedule.recurrence.cron: {bad[0]!r} is not allowed; use numbers, *, /, - and , "
            "(no names such as MON or macros such as @daily)"
        )
    try:
        CronSim(expr, datetime(2026, 1, 1))
    except CronSimError as exc:
        return f"schedule.recurrence.cron: {expr!r}: {exc}"
    return None


def reserved_problem(labels: Mapping[str, str], node_selector: Mapping[str, str]) -> str | None:
    """Why a node held by a reservation does not take a pod (None when the node is not
    reserved, or the pod selects that reservation's nodes with `gryvia.io/reserved-for`)."""
    held_for = labels.get(LABEL_RESERVED_FOR)
    if not held_for or node_selector.get(LABEL_RESERVED_FOR) == held_for:
        return None
    owner = labels.get(LABEL_RESERVED_BY, "")
    return f"is reserved for {owner or 'another owner'} (reservation {held_for})"


def reserved_for_others(held: Sequence[tuple[str, Mapping[str, str]]]) -> tuple[str, str]:
    """(reservation, message) of the Reservation pending blocker, from the nodes
    `(name, labels)` that other owners' reservations hold and that would take the job: the
    first one's reservation (by node name) and `fits only on nodes reserved for others:
    <node> (reservation <r> for <owner>), ...` (at most 3 listed). The operator's status and
    `gryvia submit --explain` both word it here. `held` must not be empty."""
    ordered = sorted(held, key=lambda item: item[0])
    listed = ", ".join(
        f"{name} (reservation {labels[LABEL_RESERVED_FOR]} for "
        f"{labels.get(LABEL_RESERVED_BY, 'another owner')})"
        for name, labels in ordered[:3]
    )
    return ordered[0][1][LABEL_RESERVED_FOR], f"fits only on nodes reserved for others: {listed}"


def reservation_blocker(
    reservation: str, message: str, needed: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(status.pending, status.estimatedStart) of a job held by reservation `reservation`
    (`needed` GPUs): kind Reservation, resource `reservation <name>`, and no estimate (the
    reason instead). Shared by the operator and `gryvia submit --explain`."""
    pending = {"kind": "Reservation", "resource": f"reservation {reservation}", "needed": needed}
    return {**pending, "message": message}, {"unknownReason": message}
