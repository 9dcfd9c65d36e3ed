"""The kube-scheduler's preemption on full nodes, pure: who preempted a job's pods and what the
job's status records of it (no I/O, no clock).

When the scheduler preempts a pod it adds the condition `DisruptionTarget` (reason
`PreemptionByScheduler`) to the victim, deletes it, and records an Event on it with reason
`Preempted` and the note `Preempted by pod <preemptor uid> on node <node>` (Kubernetes
pkg/scheduler/framework/preemption). The job is not stopped: its Job controller replaces the
pod. The job gets condition `Preempted=True` (reason `PreemptedByScheduler`) naming the
preemptor, and `status.preemptions` and `status.schedulerPreemptions` go up by one per
preemption:

- a preemption is one preemptor (a Gryvia job, else a pod) taking pods of the job; more pods
  of the job taken by the preemptor the condition already names are the same preemption;
- only victims preempted after the condition's lastTransitionTime count (it is set to the
  newest victim's time), so a pass that sees the same pods again, or an operator restart,
  counts nothing twice.

docs/priorities.md describes the rules for people.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gryvia_operator.api.preemption import COND_PREEMPTED, REASON_BY_SCHEDULER, requeue_pending
from gryvia_operator.reconcile.jobhooks import parse_time
from gryvia_operator.reconcile.status import get_condition, set_condition

EVENT_REASON = "Preempted"
"""Reason of the scheduler's Event on a preempted pod."""
_NOTE = re.compile(r"^Preempted by (pod|podgroup) (\S+) on node (\S+)")
_ENDED = frozenset({"Succeeded", "Failed", "Cancelled", "Rejected", "Preempted"})


@dataclass(frozen=True)
class SchedulerNote:
    """What the scheduler's `Preempted` Event on a victim pod says."""

    kind: str
    """`pod` (or `podgroup` with gang scheduling)."""
    uid: str
    """The preemptor's uid."""
    node: str
    related: str = ""
    """`namespace/name` of the Event's related object (the preemptor) when it names one."""


def parse_note(event: Mapping[str, Any]) -> SchedulerNote | None:
    """The scheduler's preemption Event (core/v1 `message` or events.k8s.io `note`), else
    None (another reason, or a preemption only in the scheduler's memory of a pod that was
    not bound: nothing was evicted)."""
    if event.get("reason") != EVENT_REASON:
        return None
    text = str(event.get("message") or event.get("note") or "")
    found = _NOTE.match(text)
    if found is None or "in kube-scheduler memory" in text:
        return None
    related = event.get("related") or {}
    name = str(related.get("name") or "") if isinstance(related, Mapping) else ""
    where = str(related.get("namespace") or "") if name else ""
    return SchedulerNote(
        found.group(1), found.group(2), found.group(3), f"{where}/{name}" if name else ""
    )


@dataclass(frozen=True)
class Victim:
    """One pod of the job the scheduler preempted, and by whom."""

    pod: str
    time: str
    """RFC 3339: lastTransitionTime of its DisruptionTarget condition."""
    preemptor: str
    """`ns/job` for a Gryvia job, `ns/pod` for another pod, else the preemptor's uid."""
    node: str = ""
    gryvia_job: bool = True
    """False when the preemptor is not a pod of a Gryvia job."""
    value: int | None = None
    """The preemptor's priority, when known."""
    victim_value: int = 0


def preemptor_label(
    note: SchedulerNote,
    gryvia_pods: Mapping[str, tuple[str, int]],
    other_pods: Mapping[str, str],
) -> tuple[str, bool, int | None]:
    """(name, is a Gryvia job, priority) of the preemptor of `note`: the job of a Gryvia pod
    with its uid (`gryvia_pods`: uid -> (`ns/job`, priority)), else the pod's `ns/name`
    (`other_pods`: uid -> `ns/name`, or the Event's related object), else its uid."""
    if note.uid in gryvia_pods:
        job, value = gryvia_pods[note.uid]
        return job, True, value
    name = other_pods.get(note.uid) or note.related
    return (name or note.uid), False, None


def victim_message(victim: Victim) -> str:
    """`preempted by ns/urgent (priority 10000 > 1000): the kube-scheduler evicted pod
    fill-0-x on node n for it; the Job replaces the pod, which waits for room`."""
    what = "" if victim.gryvia_job else "a pod, not a Gryvia job; "
    prio = f"priority {victim.value} > {victim.victim_value}" if victim.value is not None else ""
    detail = f" ({what}{prio})".replace("; )", ")") if what or prio else ""
    node = f" on node {victim.node}" if victim.node else ""
    return (
        f"preempted by {victim.preemptor}{detail}: the kube-scheduler evicted pod "
        f"{victim.pod}{node} for it; the Job replaces the pod, which waits for room"
    )


def named_preemptor(cond: Mapping[str, Any] | None) -> str:
    """The preemptor a Preempted condition by the scheduler names ("" for any other)."""
    if cond is None or cond.get("reason") != REASON_BY_SCHEDULER:
        return ""
    text = str(cond.get("message") or "")
    return text.split("preempted by ", 1)[1].split(" ", 1)[0] if "preempted by " in text else ""


def scheduler_preempted_status(
    status: Mapping[str, Any], victims: Iterable[Victim], generation: int | None = None
) -> tuple[dict[str, Any], Victim] | None:
    """The job's status after the scheduler preempted `victims` (pods of its current run),
    and the victim it names; None when nothing new is to be recorded.

    Nothing for a job that ended or is stopping after the quota gate's preemption. Victims not
    after the Preempted condition's time are already recorded; among the rest each preemptor
    counts once, and not at all when it is the one the condition names. The condition
    (`Preempted=True`, reason PreemptedByScheduler) names the newest victim's preemptor, at
    that victim's time. Phase, message and retries are left as they are: not a failure.
    """
    if str(status.get("phase") or "") in _ENDED or requeue_pending(status):
        return None
    conditions = list(status.get("conditions") or [])
    cond = get_condition(conditions, COND_PREEMPTED)
    since = parse_time(cond.get("lastTransitionTime")) if cond else None
    fresh = []
    for victim in victims:
        when = parse_time(victim.time)
        if when is not None and (since is None or when > since):
            fresh.append((when, victim))
    if not fresh:
        return None
    fresh.sort(key=lambda pair: (pair[0], pair[1].preemptor, pair[1].pod))
    new = {v.preemptor for _, v in fresh} - {named_preemptor(cond)}
    if not new:
        return None
    when, newest = fresh[-1]
    out = dict(status)
    for key in ("preemptions", "schedulerPreemptions"):
        out[key] = int(out.get(key) or 0) + len(new)
    kept = [c for c in conditions if c.get("type") != COND_PREEMPTED]
    out["conditions"] = set_condition(
        kept,
        COND_PREEMPTED,
        "True",
        REASON_BY_SCHEDULER,
        victim_message(newest),
        when,
        generation,
    )
    return out, newest
