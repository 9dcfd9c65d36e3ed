"""The registry's specs of events (polled, newest first), pods and reservations (both
watched), and where every spec is registered: tenants are in `kind_tenants.py`, budgets in
`kind_budgets.py`, hooks, priorities, checkpoint guards and GPU sharing policies in
`kind_policies.py`, workflows in `kind_workflows.py`, auto-tuners in `kind_autotuners.py`,
inference services in `kind_inference.py`, model registries in `kind_modelregistries.py`, idle
policies in `kind_idlepolicies.py`, storage backends in `kind_storage.py`, datasets in
`kind_datasets.py`. Cells only
format; the figures come from gryvia_cli/core."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gryvia_cli.core import timefmt
from gryvia_cli.core.events import event_time, sort_events
from gryvia_cli.core.nodes import pod_gpus
from gryvia_cli.core.reservations import reservation_details
from gryvia_cli.tui.kind_autotuners import TUNERS
from gryvia_cli.tui.kind_budgets import BUDGETS
from gryvia_cli.tui.kind_datasets import DATASETS
from gryvia_cli.tui.kind_idlepolicies import IDLE_POLICIES
from gryvia_cli.tui.kind_inference import SERVICES
from gryvia_cli.tui.kind_modelregistries import MODELS
from gryvia_cli.tui.kind_policies import CHECKPOINTS, GPU_SHARING, HOOKS, PRIORITIES
from gryvia_cli.tui.kind_storage import STORAGES
from gryvia_cli.tui.kind_tenants import (
    TENANTS,
    TenantRow,
    budget_cell,
    budgets_for,
    gpu_cell,
    quotas_of,
    tenant_rows,
)
from gryvia_cli.tui.kind_workflows import WORKFLOWS
from gryvia_cli.tui.kind_workspaces import WORKSPACES
from gryvia_cli.tui.kindnames import CONSOLE_KINDS
from gryvia_cli.tui.registry import Ctx, ObjectRef, ViewSpec, model_sections, register
from gryvia_cli.tui.source import ClusterSource, ObjectKind
from gryvia_cli.tui.widgets.rowtable import Cell, Column
from gryvia_operator.api import GryviaReservation
from gryvia_operator.api.names import LABEL_JOB

__all__ = [
    "BUDGETS",
    "CHECKPOINTS",
    "DATASETS",
    "EVENTS",
    "GPU_SHARING",
    "HOOKS",
    "IDLE_POLICIES",
    "MODELS",
    "PODS",
    "PRIORITIES",
    "RESERVATIONS",
    "SERVICES",
    "STORAGES",
    "TENANTS",
    "TUNERS",
    "WORKFLOWS",
    "WORKSPACES",
    "TenantRow",
    "budget_cell",
    "budgets_for",
    "event_key",
    "event_ref",
    "events_of",
    "gpu_cell",
    "quotas_of",
    "tenant_rows",
]

EVENT_KINDS: dict[str, ObjectKind] = {
    row.resource.kind: row.name for row in CONSOLE_KINDS if row.from_events
}
"""The object kinds an event's `involvedObject.kind` can be opened as."""
CLUSTER_SCOPED: frozenset[ObjectKind] = frozenset(
    row.name for row in CONSOLE_KINDS if not row.resource.namespaced
)
"""Kinds without a namespace: an event about one (recorded in some namespace) opens it by
name alone."""

# -- events ----------------------------------------------------------------------------------


def _target(event: dict[str, Any]) -> dict[str, Any]:
    return event.get("involvedObject") or event.get("regarding") or {}


def event_key(event: dict[str, Any]) -> str:
    """The event's uid, else `namespace/name`, else its object, reason and time."""
    meta = event.get("metadata") or {}
    if meta.get("uid"):
        return str(meta["uid"])
    if meta.get("name"):
        return f"{meta.get('namespace')}/{meta['name']}"
    target = _target(event)
    return f"{target.get('kind')}/{target.get('name')}/{event.get('reason')}/{event_time(event)}"


def _event_rows(ctx: Ctx) -> dict[str, Any]:
    return {event_key(dict(e)): e for e in reversed(sort_events(ctx.polled))}


def _event_cells(event: dict[str, Any], ctx: Ctx) -> list[Cell]:
    target = _target(event)
    count = event.get("count") or (event.get("series") or {}).get("count") or 1
    kind = str(event.get("type") or "Normal")
    seen = timefmt.age(event_time(event), ctx.now)
    return [
        (f"{seen} (x{count})" if count > 1 else seen, ""),
        (kind, "warn" if kind == "Warning" else "info"),
        (str(event.get("reason") or ""), ""),
        (f"{str(target.get('kind') or '').lower()}/{target.get('name') or ''}", ""),
        (str(target.get("namespace") or (event.get("metadata") or {}).get("namespace") or ""), ""),
        (" ".join(str(event.get("message") or "").split()), ""),
    ]


def _event_search(event: dict[str, Any]) -> str:
    target = _target(event)
    parts = (event.get("type"), event.get("reason"), target.get("kind"), target.get("name"))
    return " ".join(str(p or "") for p in (*parts, event.get("message"))).lower()


def _event_age(event: dict[str, Any]) -> float | None:
    """Minus the event's time in epoch seconds (ascending: newest first); None: unknown."""
    when = event_time(event)
    return -when.timestamp() if when is not None else None


def event_ref(event: dict[str, Any]) -> ObjectRef | None:
    """The object the event is about, when the console can open that kind."""
    target = _target(event)
    kind = EVENT_KINDS.get(str(target.get("kind") or ""))
    if kind is None or not target.get("name"):
        return None
    namespace = None if kind in CLUSTER_SCOPED else target.get("namespace") or None
    return ObjectRef(kind, namespace, str(target["name"]))


def _all_events(source: ClusterSource, namespace: str | None) -> list[dict[str, Any]]:
    return source.list_events(namespace)


def events_of(namespace: str, names: Sequence[str]) -> Any:
    """A poll of the events about `names` in `namespace` (per-object Events views)."""

    def poll(source: ClusterSource, _: str | None) -> list[dict[str, Any]]:
        return source.events(namespace, names)

    return poll


EVENTS = register(
    ViewSpec(
        name="events",
        title="Events",
        columns=(
            Column("seen", "LAST SEEN", 10, 0),
            Column("type", "TYPE", 7, 1),
            Column("reason", "REASON", 16, 0),
            Column("object", "OBJECT", 26, 0),
            Column("namespace", "NAMESPACE", 14, 3),
            Column("message", "MESSAGE", 12, 2, flex=True, max_width=120),
        ),
        rows=_event_rows,
        cells=_event_cells,
        search=_event_search,
        ref=event_ref,
        poll=_all_events,
        empty="No events.",
        order="newest first",
        sort_values={"seen": _event_age},
        noun="event",
        placeholder="filter: words, e.g. warning backoff pod/llama",
    )
)

# -- pods -------------------------------------------------------------------------------------


def _pod_rows(ctx: Ctx) -> dict[str, Any]:
    pods = ctx.store.objects["pods"]
    return {key: pods[key] for key in sorted(pods)}


def _pod_cells(pod: dict[str, Any], ctx: Ctx) -> list[Cell]:
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    phase = str((pod.get("status") or {}).get("phase") or "?")
    marker = {"Running": "ok", "Pending": "warn", "Failed": "error"}.get(phase, "")
    return [
        (str(meta.get("namespace") or ""), ""),
        (str(meta.get("name") or ""), ""),
        (str((meta.get("labels") or {}).get(LABEL_JOB) or "-"), ""),
        (str(spec.get("nodeName") or "-"), ""),
        (str(pod_gpus(pod)), ""),
        (phase, marker),
    ]


def _pod_search(pod: dict[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    node = (pod.get("spec") or {}).get("nodeName") or ""
    return f"{meta.get('namespace')} {meta.get('name')} {node}".lower()


def _pod_ref(pod: dict[str, Any]) -> ObjectRef:
    meta = pod.get("metadata") or {}
    return ObjectRef("pods", str(meta.get("namespace") or ""), str(meta.get("name") or ""))


PODS = register(
    ViewSpec(
        name="pods",
        title="Pods",
        columns=(
            Column("namespace", "NAMESPACE", 16, 2),
            Column("name", "POD", 24, 0, flex=True),
            Column("job", "JOB", 18, 3),
            Column("node", "NODE", 16, 1),
            Column("gpus", "GPUS", 4, 4, justify="right"),
            Column("phase", "PHASE", 10, 0),
        ),
        rows=_pod_rows,
        cells=_pod_cells,
        search=_pod_search,
        ref=_pod_ref,
        kinds=frozenset({"pods"}),
        empty="No live pods.",
        table="live-pods",
        noun="pod",
        placeholder="filter: namespace, pod or node",
    ),
    "pods",
)

# -- reservations -----------------------------------------------------------------------------


def _reservation_rows(ctx: Ctx) -> dict[str, Any]:
    found = ctx.store.models("reservations", GryviaReservation)  # valid ones: describe shows all
    return {item.name: item for item in sorted(found, key=lambda r: r.name)}


def _when(value: Any) -> str:
    return f"{value:%m-%d %H:%M}" if value is not None else "-"


_STATES = {"active": "ok", "pending": "info", "expired": "dim"}


def _reservation_cells(item: GryviaReservation, ctx: Ctx) -> list[Cell]:
    spec, status = item.spec, item.status
    wanted = spec.resources.gpu_count
    held = status.allocated_gpus if status else None
    state = (status.state if status else None) or "-"
    start = (status.actual_start_time if status else None) or spec.schedule.start_time
    nodes = ", ".join((status.allocated_nodes if status else None) or [])
    return [
        (item.name, ""),
        (f"{spec.owner.type} {spec.owner.name}", ""),
        (f"{held if held is not None else '-'}/{wanted if wanted else '-'}", ""),
        (spec.resources.gpu_type or "any", ""),
        (spec.schedule.type, ""),
        (_when(start), ""),
        (_when(spec.schedule.end_time), ""),
        (str(state), _STATES.get(str(state), "")),
        (nodes or "-", "" if nodes else "dim"),
    ]


def _reservation_search(item: GryviaReservation) -> str:
    spec, status = item.spec, item.status
    nodes = " ".join((status.allocated_nodes if status else None) or [])
    return f"{item.name} {spec.owner.name} {spec.resources.gpu_type or ''} {nodes}".lower()


def _reservation_ref(item: GryviaReservation) -> ObjectRef:
    return ObjectRef("reservations", None, item.name)


RESERVATIONS = register(
    ViewSpec(
        name="reservations",
        title="Reservations",
        columns=(
            Column("name", "RESERVATION", 18, 0, flex=True, max_width=32),
            Column("owner", "OWNER", 16, 1),
            Column("gpus", "GPUS", 6, 1, justify="right"),
            Column("gpu_type", "GPU TYPE", 9, 2),
            Column("schedule", "SCHEDULE", 9, 5),
            Column("start", "START", 11, 4),
            Column("end", "END", 11, 4),
            Column("state", "STATE", 9, 0),
            Column("nodes", "NODES", 14, 3),
        ),
        rows=_reservation_rows,
        cells=_reservation_cells,
        search=_reservation_search,
        ref=_reservation_ref,
        kinds=frozenset({"reservations"}),
        sections=model_sections(
            GryviaReservation, "Reservation", lambda r, ctx: reservation_details(r)
        ),
        empty="No GryviaReservations.",
        noun="reservation",
        placeholder="filter: reservation, owner, GPU type or node",
    ),
    "reservations",
)
