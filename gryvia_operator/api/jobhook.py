"""GryviaJobHook: a signed HTTP POST when a job in the namespace reaches chosen phases, or
gets an idle policy's warning or action, or becomes Stalled."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StrictBool, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    Conditions,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeInt64,
    PrinterColumn,
    SchemaExtra,
    Str253,
)
from gryvia_operator.api.core import LabelSelector

HookEvent = Literal[
    "Running",
    "Succeeded",
    "Failed",
    "Cancelled",
    "Preempted",
    "Rejected",
    "IdleWarning",
    "IdleJobSuspended",
    "IdleJobCancelled",
    "Stalled",
]
HookFormat = Literal["gryvia", "slack"]
HookKind = Literal["GryviaAIJob"]
HOOK_EVENTS: tuple[str, ...] = (
    "Running",
    "Succeeded",
    "Failed",
    "Cancelled",
    "Preempted",
    "Rejected",
    "IdleWarning",
    "IdleJobSuspended",
    "IdleJobCancelled",
    "Stalled",
)
"""Every event a hook can watch: the phases, an idle policy's warning and action (the job's
`IdleGPUs` and `IdleAction` conditions) and the `Stalled` condition (docs/hooks.md)."""
STATE_ANNOTATION = "gryvia.io/job-hooks"
"""Job annotation with the delivery state of every hook transition of that job (JSON)."""
DEFAULT_TIMEOUT_SECONDS = 10
DEFAULT_ATTEMPTS = 3
DEFAULT_BACKOFF_SECONDS = 10

_Int32 = SchemaExtra({"format": "int32"})


class SecretRef(GryviaModel):
    """A Secret in the hook's namespace."""

    name: Str253
    """Secret name; the HMAC key is its key `secret`."""


class HookWebhook(GryviaModel):
    """Where and how to deliver."""

    url: Annotated[str, StringConstraints(min_length=1, max_length=2048, pattern=r"^https?://")]
    """Target URL (private and metadata addresses are refused unless allowed by the chart)."""
    format: HookFormat = "gryvia"
    """gryvia (JSON event) or slack (`{"text": ...}`)."""
    headers: dict[str, str] | None = None
    """Extra request headers."""
    secret_ref: SecretRef | None = None
    """Signs deliveries (`X-Gryvia-Signature: sha256=HMAC(secret, "<timestamp>.<body>")`)."""
    timeout_seconds: Annotated[int, Field(ge=1, le=30, strict=True), _Int32] = (
        DEFAULT_TIMEOUT_SECONDS
    )
    """Request timeout, 1..30 seconds."""


class HookRetry(GryviaModel):
    """Retries of a failed delivery (backoff doubles, capped at one hour)."""

    attempts: Annotated[int, Field(ge=1, le=10, strict=True), _Int32] = DEFAULT_ATTEMPTS
    """Deliveries tried in total, 1..10."""
    backoff_seconds: Annotated[int, Field(ge=1, le=3600, strict=True), _Int32] = (
        DEFAULT_BACKOFF_SECONDS
    )
    """First wait between attempts."""


class GryviaJobHookSpec(GryviaModel):
    """Which transitions of which jobs to deliver, and where."""

    events: Annotated[
        list[HookEvent],
        Field(min_length=1, max_length=10),
        SchemaExtra({"x-kubernetes-list-type": "set"}),
    ]
    """Transitions that trigger a delivery: phases (Running, Succeeded, Failed, Cancelled,
    Preempted, Rejected), an idle policy's IdleWarning, IdleJobSuspended and
    IdleJobCancelled, and Stalled."""
    kinds: Annotated[
        list[HookKind] | None,
        Field(max_length=1),
        SchemaExtra({"x-kubernetes-list-type": "set"}),
    ] = None
    """Job kinds watched; unset or empty = every kind (GryviaAIJob is the only kind with
    phases)."""
    selector: LabelSelector | None = None
    """Jobs in the namespace to watch; unset = all."""
    webhook: HookWebhook
    """Delivery target."""
    retry: HookRetry | None = None
    """Retry policy (defaults when unset)."""
    suspend: StrictBool = False
    """Pause deliveries; transitions while suspended are not delivered later."""


class GryviaJobHookStatus(GryviaModel):
    """Delivery counters."""

    conditions: Conditions | None = None
    """Ready (Valid, Suspended, InvalidSpec, SecretMissing)."""
    deliveries: NonNegativeInt64 | None = None
    """Successful deliveries."""
    failures: NonNegativeInt64 | None = None
    """Deliveries that failed after all attempts."""
    last_delivery: datetime | None = None
    """When the last delivery succeeded."""
    last_error: Annotated[str, StringConstraints(max_length=1024)] | None = None
    """Why the last failed delivery failed (an SSRF refusal names the address and range)."""
    active_since: datetime | None = None
    """When the hook last became active (created or resumed); transitions before it are never
    delivered (no backfill)."""


class GryviaJobHook(GryviaResource):
    """A job hook: at-least-once delivery of job transitions (phases, idle warnings and
    actions, Stalled), no backfill."""

    kind: Literal["GryviaJobHook"] = "GryviaJobHook"
    spec: GryviaJobHookSpec
    status: GryviaJobHookStatus | None = None


JOBHOOK_KIND = KindInfo(
    resource=resources.JOBHOOK,
    model=GryviaJobHook,
    description=GryviaJobHook.__doc__ or "",
    printer_columns=(
        PrinterColumn("Events", ".spec.events"),
        PrinterColumn("Suspend", ".spec.suspend", "boolean"),
        PrinterColumn("Deliveries", ".status.deliveries", "integer"),
        PrinterColumn("Failures", ".status.failures", "integer"),
        AGE_COLUMN,
    ),
    omitted=("spec.kinds GryviaWorkflow: Gryvia has no workflow kind",),
)
GryviaJobHook.kind_info = JOBHOOK_KIND
