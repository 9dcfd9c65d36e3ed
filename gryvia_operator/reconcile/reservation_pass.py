"""One GryviaReservation's reconcile, pure: its turn in a pass (oldest first, so an older one
keeps the nodes it claims), the guarded Node patches that claim and release its nodes, its
status, and the nodes no live reservation holds (the orphan sweep).

Each reservation's reconcile replays the turns of those older than it from the same node
index, so the reservations of one pass agree on who holds which node whatever order they run
in; the window, node choice and patches are `reconcile.reservation`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gryvia_operator.api import GryviaReservation
from gryvia_operator.api.reservation import LABEL_RESERVED_FOR
from gryvia_operator.reconcile.reservation import (
    Claim,
    Window,
    choose_nodes,
    claim_patch,
    release_patch,
    window,
)
from gryvia_operator.reconcile.status import timestamp
from gryvia_operator.reconcile.views import NodeView

NodePatch = tuple[str, dict[str, Any]]
"""(node name, merge patch guarded by its resourceVersion)."""


@dataclass(frozen=True)
class Turn:
    """One reservation's part of a pass: its window (None when `problem` says why it has
    none), the nodes labelled for it in the node index, and the nodes it should hold (None:
    the window is not open)."""

    window: Window | None
    problem: str
    held: tuple[str, ...]
    claim: Claim | None = None

    @property
    def chosen(self) -> tuple[str, ...]:
        """The nodes it should hold after this pass."""
        return self.claim.nodes if self.claim else ()


@dataclass(frozen=True)
class ReservationObserved:
    """What one reservation's reconcile reads: the valid reservations of the kind's index,
    the nodes as the node index holds them, and the Nodes its writes touch as read just now
    (the patches carry their resourceVersion; a node missing here is left alone)."""

    reservations: tuple[GryviaReservation, ...]
    nodes: tuple[NodeView, ...]
    bodies: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReservationPlan:
    """What one reservation's reconcile writes: Node patches (releases first) and its
    status; `next_change` is when its window opens or closes (None: no further change)."""

    status: dict[str, Any]
    node_patches: list[NodePatch]
    next_change: dt.datetime | None = None


def order(res: GryviaReservation) -> tuple[str, str]:
    """A reservation's place in a pass: by creation time, then name (oldest first)."""
    created = res.metadata.creation_timestamp
    return (timestamp(created) if created else "", res.name)


def _held(name: str, views: Iterable[NodeView]) -> tuple[str, ...]:
    return tuple(sorted(v.name for v in views if v.labels.get(LABEL_RESERVED_FOR) == name))


def take_turns(
    reservations: Iterable[GryviaReservation], nodes: Iterable[NodeView], now: dt.datetime
) -> dict[str, Turn]:
    """The turn of every reservation not being deleted, by name, oldest first: a node one
    claims is taken for those after it (a deleted one holds nothing more; its finalizer
    releases its nodes)."""
    views = {n.name: n for n in nodes}
    out: dict[str, Turn] = {}
    for res in sorted(reservations, key=order):
        if res.metadata.deletion_timestamp is not None:
            continue
        held = _held(res.name, views.values())
        try:
            win = window(res, now)
        except ValueError as exc:
            out[res.name] = Turn(None, str(exc), held)
            continue
        claim = choose_nodes(res, list(views.values()), held) if win.state == "active" else None
        turn = Turn(win, "", held, claim)
        for node in turn.chosen:
            views[node] = replace(
                views[node], labels={**views[node].labels, LABEL_RESERVED_FOR: res.name}
            )
        out[res.name] = turn
    return out


def turn_of(res: GryviaReservation, observed: ReservationObserved, now: dt.datetime) -> Turn:
    """The turn of `res` among the observed reservations (`res` stands for its own entry)."""
    if res.metadata.deletion_timestamp is not None:
        return Turn(None, "", _held(res.name, observed.nodes))
    others = [r for r in observed.reservations if r.name != res.name]
    return take_turns([*others, res], observed.nodes, now)[res.name]


def touched(res: GryviaReservation, observed: ReservationObserved, now: dt.datetime) -> list[str]:
    """The nodes the reconcile of `res` may patch: those it holds and those it claims."""
    turn = turn_of(res, observed, now)
    return sorted({*turn.held, *turn.chosen})


def previous_status(res: GryviaReservation) -> dict[str, Any]:
    """The status `res` carries, as its controller wrote it (times as Kubernetes writes
    them), without an Invalid phase its spec no longer earns."""
    if res.status is None:
        return {}
    out = res.status.model_dump(mode="json", exclude_none=True)
    out.pop("phase", None)
    for key, value in (
        ("actualStartTime", res.status.actual_start_time),
        ("actualEndTime", res.status.actual_end_time),
    ):
        if value is not None:
            out[key] = timestamp(value)
    return out


def reservation_status(
    before: Mapping[str, Any], win: Window, claim: Claim | None, now: dt.datetime
) -> dict[str, Any]:
    """The status after a pass: state, nodes and GPUs held, message, and when the nodes were
    first claimed (kept) and released. An open window that could claim nothing is pending
    (all or nothing)."""
    chosen = claim.nodes if claim else ()
    out: dict[str, Any] = {
        "state": win.state,
        "allocatedNodes": list(chosen),
        "allocatedGPUs": claim.gpus if claim else 0,
        "message": win.message,
    }
    if win.state == "active" and claim is not None and claim.message:
        out["message"] = claim.message if not chosen else f"{win.message}; {claim.message}"
    if win.state == "active" and not chosen:
        out["state"] = "pending"
    if chosen:
        out["actualStartTime"] = before.get("actualStartTime") or timestamp(now)
        out["actualEndTime"] = None
    else:
        if before.get("actualStartTime") and not before.get("actualEndTime"):
            out["actualEndTime"] = timestamp(now)
        else:
            out["actualEndTime"] = before.get("actualEndTime")
        out["actualStartTime"] = before.get("actualStartTime")
    return out


def _patches(
    bodies: Mapping[str, Mapping[str, Any]], names: Iterable[str], build: Any
) -> list[NodePatch]:
    out = []
    for name in names:
        patch = build(bodies[name]) if name in bodies else None
        if patch is not None:
            out.append((name, patch))
    return out


def reconcile_reservation(
    res: GryviaReservation, observed: ReservationObserved, now: dt.datetime
) -> ReservationPlan:
    """One reservation's pass: release the nodes it holds but should not, claim those it
    should (a deleted one releases all it holds), and its status. A window it cannot compute
    leaves its nodes as they are and says why (state pending)."""
    turn = turn_of(res, observed, now)
    before = previous_status(res)
    if turn.window is None:
        if res.metadata.deletion_timestamp is not None:
            return ReservationPlan(before, _patches(observed.bodies, turn.held, release_patch))
        return ReservationPlan({**before, "state": "pending", "message": turn.problem}, [])
    released = [n for n in turn.held if n not in turn.chosen]
    patches = _patches(observed.bodies, released, release_patch)
    patches += _patches(observed.bodies, turn.chosen, lambda node: claim_patch(node, res))
    status = reservation_status(before, turn.window, turn.claim, now)
    return ReservationPlan(status, patches, turn.window.next_change)


def orphans(nodes: Iterable[NodeView], names: Sequence[str]) -> list[str]:
    """The nodes labelled for a reservation that no longer exists (not in `names`, every
    reservation of the index, valid or not): the sweep releases them."""
    live = set(names)
    return sorted(
        v.name
        for v in nodes
        if v.labels.get(LABEL_RESERVED_FOR) and v.labels[LABEL_RESERVED_FOR] not in live
    )
