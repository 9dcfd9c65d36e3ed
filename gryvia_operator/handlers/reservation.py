"""GryviaReservation on the kind controller (`--enable-reservations`): claim, taint and label
nodes while a reservation's window is open, release them when it closes, is deleted or is
orphaned; and the job side (`gryvia.io/reservation: <name>`: toleration and node selector, or
condition Reservation=False with a Warning event).

A pass runs at once when a reservation changes, else when a window opens or closes, at least
every PASS_SECONDS. Each reservation observes the node index, the other reservations and the
Nodes it touches (one GET each, for the resourceVersion that guards their merge patches: a
node changed meanwhile is a 409 Conflict, retried CONFLICT_SECONDS later);
`reconcile.reservation_pass.reconcile_reservation` decides, taking its turn after the older
ones. After the pass, any node labelled `gryvia.io/reserved-for` for a reservation that no
longer exists is released. The kind's finalizer keeps a deleted reservation until its nodes
are released. A reservation that appears, changes or goes wakes the jobs waiting for nodes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from gryvia_operator.api import GryviaAIJob, GryviaReservation
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.api.reservation import LABEL_RESERVED_FOR, RESERVATION_KIND
from gryvia_operator.api.reservation import RESERVATION_FINALIZER as FINALIZER
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.kubeapi import Conflict, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import NODES, RESERVATIONS
from gryvia_operator.reconcile.aijob import Observed
from gryvia_operator.reconcile.reservation import CONDITION, JobReservation, decide, steered
from gryvia_operator.reconcile.reservation import release_patch as release
from gryvia_operator.reconcile.reservation_pass import (
    ReservationObserved,
    orphans,
    reconcile_reservation,
    touched,
)
from gryvia_operator.reconcile.status import JobEvent, get_condition, set_condition

PASS_SECONDS = 5.0
"""Longest wait between two passes (a window opening or closing sooner wakes it earlier)."""
CONFLICT_SECONDS = 0.5
"""Wait before the next pass after a node changed under a patch."""


async def _read_nodes(rt: Runtime, names: list[str]) -> dict[str, dict[str, Any]]:
    out = {}
    for name in names:
        with contextlib.suppress(NotFound):
            out[name] = await rt.api.get("Node", name)
    return out


class ReservationSpec(KindSpec[GryviaReservation, ReservationObserved]):
    """A reservation observes the nodes and the other reservations; it owns no children
    (it patches Nodes, which it does not own), keeps a finalizer, and sweeps orphans."""

    info = RESERVATION_KIND
    controller = "reservation"
    index_id = RESERVATIONS
    children = ()
    idle_seconds = PASS_SECONDS
    finalizer = FINALIZER

    async def observe(self, rt: Runtime, obj: GryviaReservation) -> ReservationObserved:
        """The node index, the valid reservations, and the Nodes its pass touches."""
        seen = ReservationObserved(
            tuple(parse_valid(GryviaReservation, rt.indices.all_values(RESERVATIONS))),
            tuple(rt.indices.all_values(NODES)),
        )
        return replace(seen, bodies=await _read_nodes(rt, touched(obj, seen, rt.clock())))

    def reconcile(
        self, obj: GryviaReservation, observed: ReservationObserved, now: datetime
    ) -> Outcome:
        """The plan as an outcome: Node patches (cluster-scoped), status, the next window."""
        plan = reconcile_reservation(obj, observed, now)
        change = plan.next_change
        return Outcome(
            status=plan.status,
            patch_in=[("Node", "", name, patch) for name, patch in plan.node_patches],
            requeue_after=None
            if change is None
            else max((change - now).total_seconds(), 0.0) + 0.05,
        )

    async def after(self, rt: Runtime, obj: GryviaReservation, outcome: Outcome) -> None:
        """Wake the jobs waiting for nodes when the state or the nodes moved."""
        before = obj.status
        moved = (outcome.status.get("state"), outcome.status.get("allocatedNodes")) != (
            before.state if before else None,
            before.allocated_nodes if before else None,
        )
        if moved:
            rt.kick_waiting()

    async def after_pass(self, rt: Runtime) -> None:
        """Release the nodes labelled for a reservation that no longer exists."""
        names = [str(b["metadata"]["name"]) for b in rt.indices.all_values(RESERVATIONS)]
        found = orphans(rt.indices.all_values(NODES), names)
        for name, node in (await _read_nodes(rt, found)).items():
            patch = release(node)
            if patch is not None:
                rt.metrics.writes.labels(kind="Node", verb="patch").inc()
                await rt.api.patch("Node", name, patch)

    def retry_after(self, exc: KubeError | OSError) -> float | None:
        """Soon again after a node changed under a patch."""
        return CONFLICT_SECONDS if isinstance(exc, Conflict) else None

    def woken(self, rt: Runtime) -> None:
        """Jobs waiting for nodes look again."""
        rt.kick_waiting()


def controller(rt: Runtime) -> KindController[GryviaReservation, ReservationObserved]:
    """The reservation controller over `rt`."""
    return KindController(rt, ReservationSpec())


def _found(rt: Runtime, name: str) -> tuple[GryviaReservation | None, str | None]:
    """The reservation `name` and the state its controller wrote (pending until it wrote)."""
    body = rt.indices.first(RESERVATIONS, ("", name))
    parsed = parse_valid(GryviaReservation, [body]) if body else []
    if not parsed:
        return None, None
    return parsed[0], str((body.get("status") or {}).get("state") or "pending")


def for_job(
    rt: Runtime, job: GryviaAIJob, observed: Observed
) -> tuple[GryviaAIJob, JobReservation | None]:
    """The job as reconciled (steered onto its reservation's nodes when that applies) and
    the outcome of its annotation; the job unchanged and None while reservations are off."""
    if not rt.config.reservations:
        return job, None
    from gryvia_operator.api.names import ANNOTATION_RESERVATION

    name = (job.metadata.annotations or {}).get(ANNOTATION_RESERVATION, "").strip()
    if not name:
        return job, None
    found, state = _found(rt, name)
    conditions = [
        c.model_dump(mode="json") for c in (job.status.conditions if job.status else None) or []
    ]
    previous = get_condition(conditions, CONDITION)
    use = decide(
        job,
        found,
        state,
        placed=bool(observed.workloads),
        was_bound=(previous or {}).get("reason") == "Bound",
    )
    return steered(job, use), use


def wait_states(rt: Runtime, job: GryviaAIJob) -> dict[str, str] | None:
    """`WaitContext.reservations`: None while reservations are off; else the state of the
    reservation the (steered) job waits for, by name."""
    if not rt.config.reservations:
        return None
    name = (job.spec.node_selector or {}).get(LABEL_RESERVED_FOR)
    if not name:
        return {}
    _, state = _found(rt, name)
    return {name: state or "pending"}


def with_condition(
    rt: Runtime,
    body: Mapping[str, Any],
    use: JobReservation | None,
    before: Mapping[str, Any],
    status: dict[str, Any],
) -> dict[str, Any]:
    """`status` with condition Reservation (True: Bound or Waiting; False: OwnerMismatch,
    NotFound, Ended, Started); a Warning event when it turns False or changes its reason."""
    if use is None:
        return status
    now = rt.clock()
    gen = (body.get("metadata") or {}).get("generation")
    state = "True" if use.applies else "False"
    old = get_condition(before.get("conditions") or [], CONDITION) or {}
    status["conditions"] = set_condition(
        status.get("conditions") or [], CONDITION, state, use.verdict, use.message, now, gen
    )
    if state == "False" and old.get("reason") != use.verdict:
        rt.post_event(body, JobEvent("Warning", f"Reservation{use.verdict}", use.message))
    return status
