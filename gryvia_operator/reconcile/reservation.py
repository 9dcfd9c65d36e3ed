"""GryviaReservation decisions, pure: is the window open, which nodes to hold, the Node
patches that claim and release them, and what a job that opts in gets.

Times are timezone-aware UTC datetimes; GPU counts are whole GPUs (NodeView.total_gpus).
Every function is deterministic for the same inputs (nodes are taken held-first, then by
name), so two passes over the same cluster choose the same nodes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from cronsim import CronSim

from gryvia_operator.api import GryviaAIJob, GryviaReservation
from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.core import Toleration
from gryvia_operator.api.gputype import gpu_type_matches
from gryvia_operator.api.helpers import parse_duration
from gryvia_operator.api.names import ANNOTATION_RESERVATION, LABEL_GPU, LABEL_TEAM
from gryvia_operator.api.reservation import (
    LABEL_EXCLUSIVE,
    LABEL_RESERVED_BY,
    LABEL_RESERVED_FOR,
    TAINT_RESERVED,
    reserved_for_others,
)
from gryvia_operator.reconcile.placement import Requirements, evaluate_node
from gryvia_operator.reconcile.views import NodeView

State = Literal["pending", "active", "expired"]
Verdict = Literal["Bound", "Waiting", "OwnerMismatch", "NotFound", "Ended", "Started"]
CONDITION = "Reservation"
"""The job condition naming the outcome of its `gryvia.io/reservation` annotation."""


@dataclass(frozen=True)
class Window:
    """Where a reservation stands at one instant: its state, the current window (active) or
    the next one (pending; `start` None when no further window comes), and why."""

    state: State
    start: dt.datetime | None
    end: dt.datetime | None
    message: str

    @property
    def next_change(self) -> dt.datetime | None:
        """When the state changes next (end of an open window, start of a pending one)."""
        return self.end if self.state == "active" else self.start


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def _iso(value: dt.datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def window(res: GryviaReservation, now: dt.datetime) -> Window:
    """The window of `res` at `now` (UTC).

    immediate: from creation until `endTime`; scheduled: `startTime` to `endTime`;
    recurring: each cron fire (5-field, UTC) opens a window of `recurrence.duration`, no
    earlier than `startTime` and none after `endTime` (both optional). Raises ValueError
    (naming the field) for a bad cron expression or duration.
    """
    sched = res.spec.schedule
    start, end = _utc(sched.start_time), _utc(sched.end_time)
    if sched.type == "immediate":
        start = _utc(res.metadata.creation_timestamp) or now
    if sched.type != "recurring":
        if start is None or end is None:
            raise ValueError("schedule.startTime and schedule.endTime are required")
        if now >= end:
            return Window("expired", None, None, f"the window ended at {_iso(end)}")
        if now < start:
            return Window("pending", start, end, f"the window opens at {_iso(start)}")
        return Window("active", start, end, f"held until {_iso(end)}")
    return _recurring(res, now, start, end)


def _recurring(
    res: GryviaReservation, now: dt.datetime, first: dt.datetime | None, last: dt.datetime | None
) -> Window:
    from gryvia_operator.api.reservation import cron_problem

    rec = res.spec.schedule.recurrence
    if rec is None:
        raise ValueError("schedule.recurrence is required when schedule.type is recurring")
    problem = cron_problem(rec.cron)
    if problem:
        raise ValueError(problem)
    length = dt.timedelta(
        seconds=parse_duration(rec.duration, field="schedule.recurrence.duration")
    )
    naive = now.replace(tzinfo=None, microsecond=0)
    # the latest fire at or before now (CronSim's reverse iteration starts before its origin)
    latest = next(CronSim(rec.cron, naive + dt.timedelta(seconds=1), reverse=True)).replace(
        tzinfo=dt.UTC
    )
    if (first is None or latest >= first) and (last is None or latest < last):
        ends = min(latest + length, last) if last else latest + length
        if now < ends:
            return Window("active", latest, ends, f"held until {_iso(ends)} ({rec.cron})")
    origin = max(naive, first.replace(tzinfo=None) - dt.timedelta(seconds=1)) if first else naive
    upcoming = next(CronSim(rec.cron, origin)).replace(tzinfo=dt.UTC)
    if last is not None and upcoming >= last:
        return Window("expired", None, None, f"no window of {rec.cron} before {_iso(last)}")
    return Window(
        "pending",
        upcoming,
        upcoming + length,
        f"the next window opens at {_iso(upcoming)} ({rec.cron})",
    )


@dataclass(frozen=True)
class Claim:
    """The nodes a reservation should hold now, their GPUs, and (when short) why."""

    nodes: tuple[str, ...]
    gpus: int
    message: str = ""


def _eligible(node: NodeView, res: GryviaReservation) -> bool:
    wanted = res.spec.resources.gpu_type
    held_for = node.labels.get(LABEL_RESERVED_FOR)
    if held_for and held_for != res.name:
        return False
    if not node.ready or node.unschedulable:
        return False
    return not wanted or gpu_type_matches(wanted, node.labels.get(LABEL_GPU, ""))


def choose_nodes(
    res: GryviaReservation, nodes: Sequence[NodeView], held: Iterable[str] = ()
) -> Claim:
    """The nodes to hold: exactly `resources.nodes` (all of them eligible, else none), or
    Ready schedulable nodes of `resources.gpuType` not held by another reservation, nodes
    already held first then by name, until `gpuCount` GPUs are covered.

    All or nothing for a first claim: when the count cannot be covered and nothing is held
    yet, no node is taken (and `message` says what was found). A reservation that already
    holds nodes keeps those that are still eligible when the count is no longer covered.
    """
    spec = res.spec.resources
    held_set = set(held)
    by_name = {n.name: n for n in nodes}
    if spec.nodes:
        missing = [n for n in spec.nodes if n not in by_name]
        unfit = [n for n in spec.nodes if n in by_name and not _eligible(by_name[n], res)]
        if missing or unfit:
            why = [f"{n} does not exist" for n in missing]
            why += [f"{n} is not Ready, cordoned, of another type or held" for n in unfit]
            return Claim((), 0, "resources.nodes: " + "; ".join(why))
        chosen = tuple(sorted(spec.nodes))
        return Claim(chosen, sum(by_name[n].total_gpus for n in chosen))
    want = spec.gpu_count or 0
    ordered = sorted(
        (n for n in nodes if _eligible(n, res) and n.total_gpus > 0),
        key=lambda n: (n.name not in held_set, n.name),
    )
    taken: list[NodeView] = []
    for node in ordered:
        if sum(n.total_gpus for n in taken) >= want:
            break
        taken.append(node)
    gpus = sum(n.total_gpus for n in taken)
    shown = spec.gpu_type or "GPU"
    if gpus >= want:
        return Claim(tuple(n.name for n in taken), gpus)
    kept = [n for n in taken if n.name in held_set]
    text = f"needs {want} {shown} GPUs on Ready unreserved nodes, found {gpus}"
    if kept:
        return Claim(tuple(n.name for n in kept), sum(n.total_gpus for n in kept), text)
    return Claim((), 0, text)


def owner_label(res: GryviaReservation) -> str:
    """The taint value and `gryvia.io/reserved-by` label: the owner's name."""
    return res.spec.owner.name


def claim_patch(node: Mapping[str, Any], res: GryviaReservation) -> dict[str, Any] | None:
    """The merge patch (guarded by the node's resourceVersion) that taints and labels `node`
    for `res`, or None when it already is. Other taints are kept as they are."""
    meta, spec = node.get("metadata") or {}, node.get("spec") or {}
    labels = meta.get("labels") or {}
    taints = [dict(t) for t in spec.get("taints") or []]
    owner = owner_label(res)
    mine = {"key": TAINT_RESERVED, "value": owner, "effect": "NoSchedule"}
    want_taints = [t for t in taints if t.get("key") != TAINT_RESERVED] + [mine]
    want_labels = {LABEL_RESERVED_FOR: res.name, LABEL_RESERVED_BY: owner}
    exclusive = bool(res.spec.guarantees and res.spec.guarantees.exclusive)
    if exclusive:
        want_labels[LABEL_EXCLUSIVE] = "true"
    label_patch: dict[str, Any] = {k: v for k, v in want_labels.items() if labels.get(k) != v}
    if not exclusive and LABEL_EXCLUSIVE in labels:
        label_patch[LABEL_EXCLUSIVE] = None
    same_taint = [t for t in taints if t.get("key") == TAINT_RESERVED] == [mine]
    if not label_patch and same_taint:
        return None
    out: dict[str, Any] = {"metadata": {"resourceVersion": meta.get("resourceVersion")}}
    if label_patch:
        out["metadata"]["labels"] = label_patch
    if not same_taint:
        out["spec"] = {"taints": want_taints}
    return out


def release_patch(node: Mapping[str, Any]) -> dict[str, Any] | None:
    """The merge patch (guarded by resourceVersion) that removes every trace of a reservation
    from `node` (its taint, `reserved-for`, `reserved-by`, `exclusive`), or None when clean."""
    meta, spec = node.get("metadata") or {}, node.get("spec") or {}
    labels = meta.get("labels") or {}
    taints = [dict(t) for t in spec.get("taints") or []]
    kept = [t for t in taints if t.get("key") != TAINT_RESERVED]
    ours = (LABEL_RESERVED_FOR, LABEL_RESERVED_BY, LABEL_EXCLUSIVE)
    held = LABEL_RESERVED_FOR in labels
    dropped = {k: None for k in ours if k in labels and (held or k != LABEL_EXCLUSIVE)}
    if not dropped and len(kept) == len(taints):
        return None
    out: dict[str, Any] = {"metadata": {"resourceVersion": meta.get("resourceVersion")}}
    if dropped:
        out["metadata"]["labels"] = dropped
    if len(kept) != len(taints):
        out["spec"] = {"taints": kept or None}
    return out


def owner_matches(res: GryviaReservation, namespace: str, labels: Mapping[str, str]) -> bool:
    """True when a job in `namespace` with `labels` belongs to the reservation's owner: team
    (job label gryvia.io/team), namespace (its name), tenant (namespace `<name>` or
    `tenant-<name>`)."""
    owner = res.spec.owner
    if owner.type == "team":
        return labels.get(LABEL_TEAM) == owner.name
    if owner.type == "namespace":
        return namespace == owner.name
    return namespace in (owner.name, tenant_namespace(owner.name))


@dataclass(frozen=True)
class JobReservation:
    """What a job's `gryvia.io/reservation` annotation comes to.

    Bound: the reservation is active and the owner matches (the job's pods tolerate its taint
    and select its nodes); Waiting: the same, but the window has not opened (the job waits
    for it); Started: the job's workload existed before it was bound (its pods stay where
    they are); OwnerMismatch, NotFound, Ended: ignored (the job runs as any other)."""

    name: str
    verdict: Verdict
    message: str
    owner: str = ""

    @property
    def applies(self) -> bool:
        """True when the job's pods are steered onto the reservation's nodes."""
        return self.verdict in ("Bound", "Waiting")


def decide(
    job: GryviaAIJob,
    found: GryviaReservation | None,
    state: str | None,
    *,
    placed: bool = False,
    was_bound: bool = False,
) -> JobReservation | None:
    """The outcome for `job` (None without the annotation). `found` is the reservation of
    that name (None: none), `state` its window state; `placed` True once the job's workload
    exists, `was_bound` True when the job's condition says Bound: a placed job keeps what it
    had, so its pod template never changes under a running workload."""
    name = (job.metadata.annotations or {}).get(ANNOTATION_RESERVATION, "").strip()
    if not name:
        return None
    if placed and was_bound:
        held_by = owner_label(found) if found else ""
        return JobReservation(name, "Bound", f"runs on the nodes of reservation {name}", held_by)
    if found is None:
        return JobReservation(name, "NotFound", f"reservation {name} does not exist")
    owner = found.spec.owner
    labels = job.metadata.labels or {}
    if not owner_matches(found, job.namespace, labels):
        whose = (
            f"label {LABEL_TEAM}: {labels[LABEL_TEAM]}"
            if owner.type == "team" and labels.get(LABEL_TEAM)
            else f"no label {LABEL_TEAM}"
            if owner.type == "team"
            else f"namespace {job.namespace}"
        )
        fix = f" (a job of team {owner.name} has label {LABEL_TEAM}: {owner.name})"
        return JobReservation(
            name,
            "OwnerMismatch",
            f"reservation {name} is held for {owner.type} {owner.name}; this job "
            f"({whose}) is not theirs, so it runs outside the reservation"
            + (fix if owner.type == "team" else ""),
        )
    if found.metadata.deletion_timestamp is not None or state == "expired":
        return JobReservation(
            name, "Ended", f"reservation {name} has ended; the job runs outside it"
        )
    if placed:
        return JobReservation(name, "Started", f"the job started before reservation {name} held it")
    if state == "active":
        return JobReservation(
            name, "Bound", f"runs on the nodes of reservation {name}", owner_label(found)
        )
    return JobReservation(
        name, "Waiting", f"waits for reservation {name} to open", owner_label(found)
    )


def steered(job: GryviaAIJob, use: JobReservation | None) -> GryviaAIJob:
    """`job` as reconciled: with a toleration of the reservation's taint and the node
    selector `gryvia.io/reserved-for=<name>` when the reservation applies, else unchanged."""
    if use is None or not use.applies:
        return job
    spec = job.spec
    toleration = Toleration(
        key=TAINT_RESERVED, operator="Equal", value=use.owner, effect="NoSchedule"
    )
    tolerations = [t for t in spec.tolerations or [] if t.key != TAINT_RESERVED]
    selector = {**(spec.node_selector or {}), LABEL_RESERVED_FOR: use.name}
    new_spec = spec.model_copy(
        update={"tolerations": [*tolerations, toleration], "node_selector": selector}
    )
    return job.model_copy(update={"spec": new_spec})


def reserved_elsewhere(job: GryviaAIJob, nodes: Sequence[NodeView]) -> tuple[str, str] | None:
    """(reservation, message) when the job's pods would fit only on nodes held by
    reservations it does not use: fewer open nodes pass every filter but free GPUs than it
    needs, and reserved ones would make up the difference. None otherwise."""
    req = Requirements.of(job)
    open_nodes = [n for n in nodes if evaluate_node(n, req, 0).fits]
    if len(open_nodes) >= req.nodes:
        return None
    held: list[NodeView] = []
    for node in nodes:
        label = node.labels.get(LABEL_RESERVED_FOR)
        if not label or req.node_selector.get(LABEL_RESERVED_FOR) == label:
            continue
        unreserved = replace(req, node_selector={**req.node_selector, LABEL_RESERVED_FOR: label})
        if evaluate_node(node, unreserved, 0).fits:
            held.append(node)
    if not held or len(open_nodes) + len(held) < req.nodes:
        return None
    return reserved_for_others([(n.name, n.labels) for n in held])
