"""GryviaPriority: a named job priority; the operator keeps one owned PriorityClass per object.

Jobs name one in `spec.priorityClassName`, or give `spec.priority` 0..100, which maps to a
built-in GryviaPriority through `PRIORITY_TABLE` (docs/priorities.md). Pure data and rules,
no I/O: the controller is `gryvia_operator.handlers.priority`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, Strict

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
)
from gryvia_operator.api.preemption import COND_PREEMPTED as COND_PREEMPTED
from gryvia_operator.api.preemption import REASON_BY_SCHEDULER as REASON_BY_SCHEDULER
from gryvia_operator.api.preemption import REASON_PREEMPTED as REASON_PREEMPTED
from gryvia_operator.api.preemption import REASON_REQUEUED as REASON_REQUEUED
from gryvia_operator.api.preemption import requeue_pending as requeue_pending
from gryvia_operator.api.preemption import run_index as run_index

PreemptionPolicy = Literal["PreemptLowerPriority", "Never"]
MAX_USER_VALUE = 1_000_000_000
"""Kubernetes refuses user PriorityClasses above one billion (higher is for system classes)."""
PriorityValue = Annotated[
    int,
    Strict(),
    Field(ge=-MAX_USER_VALUE, le=MAX_USER_VALUE),
    SchemaExtra({"format": "int32"}),
]


@dataclass(frozen=True)
class PriorityBand:
    """One row of the `spec.priority` table: priorities `low..high` use class `name`."""

    low: int
    high: int
    name: str
    value: int
    description: str


PRIORITY_TABLE: tuple[PriorityBand, ...] = (
    PriorityBand(
        1, 29, "gryvia-low", 1000, "spec.priority 1..29: background work, preempted first"
    ),
    PriorityBand(30, 69, "gryvia-normal", 5000, "spec.priority 30..69: ordinary jobs"),
    PriorityBand(70, 100, "gryvia-high", 10000, "spec.priority 70..100: urgent jobs"),
)
"""How `spec.priority` (0..100) maps to a GryviaPriority; 0 (the default) uses none, so such
pods get the cluster's default priority (0). The operator creates these three GryviaPriorities
when they are missing (and never changes one a person edited)."""


def band_for(priority: int) -> PriorityBand | None:
    """The table row of `spec.priority` (0..100), None for 0 or anything outside the table."""
    return next((b for b in PRIORITY_TABLE if b.low <= priority <= b.high), None)


class GryviaPrioritySpec(GryviaModel):
    """The priority value and whether its jobs may preempt lower ones."""

    value: PriorityValue
    """Priority of the jobs' pods (the PriorityClass value); higher wins. -1e9..1e9."""
    preemption_policy: PreemptionPolicy = "PreemptLowerPriority"
    """PreemptLowerPriority: its jobs may preempt lower-priority jobs of the same tenant (the
    quota gate) and the scheduler may preempt lower-priority pods for them; Never: they wait."""
    description: Str1024 | None = None
    """What the priority is for (copied to the PriorityClass)."""


class GryviaPriorityStatus(GryviaModel):
    """The owned PriorityClass."""

    priority_class_name: Str253 | None = None
    """Name of the owned PriorityClass (the GryviaPriority's own name)."""
    conditions: Conditions | None = None
    """Ready: True/Applied once the PriorityClass matches; False/Conflict when a PriorityClass
    of that name belongs to someone else."""


class GryviaPriority(GryviaResource):
    """A job priority: owns the PriorityClass of the same name that the job's pods use."""

    kind: Literal["GryviaPriority"] = "GryviaPriority"
    spec: GryviaPrioritySpec
    status: GryviaPriorityStatus | None = None


PRIORITY_KIND = KindInfo(
    resource=resources.PRIORITY,
    model=GryviaPriority,
    description=GryviaPriority.__doc__ or "",
    printer_columns=(
        PrinterColumn("Value", ".spec.value", "integer"),
        PrinterColumn("Preemption", ".spec.preemptionPolicy"),
        PrinterColumn("Ready", ".status.conditions[?(@.type=='Ready')].status"),
        AGE_COLUMN,
        PrinterColumn("Description", ".spec.description", priority=1),
    ),
    omitted=("spec.quotaOverride and spec.sla: no SLA controller exists",),
)
GryviaPriority.kind_info = PRIORITY_KIND
