"""GryviaReservation controller (`--enable-reservations`): claim, taint and label nodes while
a reservation's window is open, release them when it closes, is deleted or is orphaned; and
the job side (`gryvia.io/reservation: <name>`: toleration and node selector, or condition
Reservation=False with a Warning event).

One loop, every PASS_SECONDS or at once when a reservation changes, over all reservations
(oldest first, so an older one keeps its nodes): window -> nodes to hold -> Node patches
(merge patches guarded by the node's resourceVersion: a node changed meanwhile is a 409
Conflict, retried on the next pass) -> status. Then the orphan sweep: any node labelled
`gryvia.io/reserved-for` that no live reservation holds is released. A finalizer keeps a
deleted reservation until its nodes are released.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION, GryviaAIJob, GryviaReservation
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.api.reservation import LABEL_RESERVED_FOR
from gryvia_operator.api.reservation import RESERVATION_FINALIZER as FINALIZER
from gryvia_operator.controller.kubeapi import Conflict, NotFound
from gryvia_operator.controller.passes import run_passes
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import NODES, RESERVATIONS
from gryvia_operator.reconcile.aijob import Observed
from gryvia_operator.reconcile.reservations import (
    CONDITION,
    JobReservation,
    Window,
    choose_nodes,
    claim_patch,
    decide,
    release_patch,
    steered,
    window,
)
from gryvia_operator.reconcile.status import JobEvent, get_condition, set_condition, timestamp
from gryvia_operator.reconcile.views import NodeView

log = logging.getLogger("gryvia.operator.reservation")
PLURAL = "gryviareservations"
PASS_SECONDS = 5.0
"""Longest wait between two passes (a window opening or closing sooner wakes it earlier)."""
CONFLICT_SECONDS = 0.5
"""Wait before the next pass after a node changed under a patch."""


class Reservations:
    """The loop's state: what was last written per reservation."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.kick = asyncio.Event()
        self.written: dict[str, dict[str, Any]] = {}

    async def loop(self) -> None:
        """Pass over every reservation until cancelled (soon again after a write conflict)."""
        await run_passes(
            self.rt,
            "reservation",
            self.kick,
            self.update,
            PASS_SECONDS,
            log,
            retry_after=lambda exc: CONFLICT_SECONDS if isinstance(exc, Conflict) else PASS_SECONDS,
        )

    async def update(self) -> float:
        """One pass; returns the seconds until the next window change (at most PASS_SECONDS)."""
        rt = self.rt
        now = rt.clock()
        views: dict[str, NodeView] = {n.name: n for n in rt.indices.all_values(NODES)}
        bodies = sorted(
            rt.indices.all_values(RESERVATIONS),
            key=lambda b: (str(b["metadata"].get("creationTimestamp", "")), b["metadata"]["name"]),
        )
        kept: set[str] = set()  # nodes some live reservation holds after this pass
        delay = PASS_SECONDS
        for body in bodies:
            found = parse_valid(GryviaReservation, [body])
            name = str(body["metadata"]["name"])
            if not found:
                continue  # invalid: the API server's schema refuses most; leave it alone
            res = found[0]
            held = sorted(n for n, v in views.items() if v.labels.get(LABEL_RESERVED_FOR) == name)
            if res.metadata.deletion_timestamp is not None:
                await self.release(held)
                await self.drop_finalizer(body)
                continue
            await self.ensure_finalizer(body)
            try:
                win = window(res, now)
            except ValueError as exc:
                await self.write(body, {"state": "pending", "message": str(exc)})
                continue
            claim = choose_nodes(res, list(views.values()), held) if win.state == "active" else None
            chosen = claim.nodes if claim else ()
            await self.release([n for n in held if n not in chosen])
            await self.claim(res, chosen)
            for node in chosen:  # later reservations of this pass see these nodes as taken
                labels = {**views[node].labels, LABEL_RESERVED_FOR: name}
                views[node] = replace(views[node], labels=labels)
            kept.update(chosen)
            await self.write(
                body, self.status(body, win, chosen, claim.gpus if claim else 0, claim)
            )
            change = win.next_change
            if change is not None:
                delay = min(delay, max((change - now).total_seconds(), 0.0) + 0.05)
        live = {str(b["metadata"]["name"]) for b in bodies}
        orphans = sorted(
            n
            for n, v in views.items()
            if v.labels.get(LABEL_RESERVED_FOR)
            and n not in kept
            and (v.labels[LABEL_RESERVED_FOR] not in live)
        )
        await self.release(orphans)
        for gone in set(self.written) - live:
            self.written.pop(gone, None)
        return delay

    def status(
        self,
        body: Mapping[str, Any],
        win: Window,
        chosen: tuple[str, ...],
        gpus: int,
        claim: Any,
    ) -> dict[str, Any]:
        """The status of one reservation after this pass."""
        before = dict(body.get("status") or {})
        before.update(self.written.get(str(body["metadata"]["name"])) or {})
        now = timestamp(self.rt.clock())
        out: dict[str, Any] = {
            "state": win.state,
            "allocatedNodes": list(chosen),
            "allocatedGPUs": gpus,
            "message": win.message,
        }
        if win.state == "active" and claim is not None and claim.message:
            out["message"] = claim.message if not chosen else f"{win.message}; {claim.message}"
        if win.state == "active" and not chosen:
            out["state"] = "pending"  # open, but nothing could be claimed (all or nothing)
        if chosen:
            out["actualStartTime"] = before.get("actualStartTime") or now
            out["actualEndTime"] = None
        else:
            if before.get("actualStartTime") and not before.get("actualEndTime"):
                out["actualEndTime"] = now
            else:
                out["actualEndTime"] = before.get("actualEndTime")
            out["actualStartTime"] = before.get("actualStartTime")
        return out

    async def write(self, body: Mapping[str, Any], status: dict[str, Any]) -> None:
        """Merge-patch the status when it differs from the stored (or last written) one; wake
        waiting jobs when the state or the nodes moved."""
        name = str(body["metadata"]["name"])
        stored = self.written.get(name) or dict(body.get("status") or {})
        if all(stored.get(k) == v for k, v in status.items()):
            return
        await self.rt.api.patch("GryviaReservation", name, {"status": status}, subresource="status")
        self.rt.metrics.writes.labels(kind="GryviaReservation", verb="status").inc()
        self.written[name] = {**stored, **status}
        self.rt.kick_waiting()

    async def _patch_node(self, name: str, build: Any) -> None:
        try:
            node = await self.rt.api.get("Node", name)
        except NotFound:
            return
        patch = build(node)
        if patch is None:
            return
        self.rt.metrics.writes.labels(kind="Node", verb="patch").inc()
        await self.rt.api.patch("Node", name, patch)  # Conflict: retried on the next pass

    async def claim(self, res: GryviaReservation, nodes: tuple[str, ...]) -> None:
        """Taint and label `nodes` for `res`."""
        for name in nodes:
            await self._patch_node(name, lambda node: claim_patch(node, res))

    async def release(self, nodes: list[str]) -> None:
        """Remove the reservation taint and labels from `nodes`."""
        for name in nodes:
            await self._patch_node(name, release_patch)

    async def ensure_finalizer(self, body: Mapping[str, Any]) -> None:
        """Add the finalizer (guarded by resourceVersion: a JSON merge patch replaces lists)."""
        meta = body["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if FINALIZER in finalizers:
            return
        patch = {
            "metadata": {
                "resourceVersion": meta.get("resourceVersion"),
                "finalizers": [*finalizers, FINALIZER],
            }
        }
        await self.rt.api.patch("GryviaReservation", meta["name"], patch)

    async def drop_finalizer(self, body: Mapping[str, Any]) -> None:
        """Let a deleted reservation go once its nodes are released."""
        meta = body["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if FINALIZER not in finalizers:
            return
        rest = [f for f in finalizers if f != FINALIZER]
        patch = {"metadata": {"resourceVersion": meta.get("resourceVersion"), "finalizers": rest}}
        with contextlib.suppress(NotFound):
            await self.rt.api.patch("GryviaReservation", meta["name"], patch)


def _found(rt: Runtime, name: str) -> tuple[GryviaReservation | None, str | None]:
    """The reservation `name` and the state its controller wrote (pending until it wrote)."""
    body = rt.indices.first(RESERVATIONS, name)
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


def register(registry: kopf.OperatorRegistry, rt: Runtime, loop: Reservations) -> None:
    """Register the reservation index and wake the loop when a reservation changes."""

    @kopf.index(GROUP, VERSION, PLURAL, id=RESERVATIONS, registry=registry)
    async def reservation_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each reservation's metadata, spec and status."""
        meta = body.get("metadata") or {}
        keys = ("name", "uid", "generation", "resourceVersion", "creationTimestamp")
        kept = {k: meta.get(k) for k in keys}
        kept["deletionTimestamp"] = meta.get("deletionTimestamp")
        kept["finalizers"] = list(meta.get("finalizers") or [])
        return {
            name: {
                "apiVersion": body.get("apiVersion"),
                "kind": body.get("kind"),
                "metadata": kept,
                "spec": dict(body.get("spec") or {}),
                "status": dict(body.get("status") or {}),
            }
        }

    @kopf.on.event(GROUP, VERSION, PLURAL, id="gryvia_reservation_events", registry=registry)
    async def reservation_event(type: str, body: kopf.Body, **_: Any) -> None:
        """A reservation appeared, changed or went: pass now; waiting jobs look again."""
        if type == "DELETED":
            loop.written.pop(str((body.get("metadata") or {}).get("name")), None)
        loop.kick.set()
        rt.kick_waiting()
