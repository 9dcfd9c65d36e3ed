"""Priorities (`--enable-priorities`, chart `aiOperator.priorities.enabled`).

- GryviaPriority -> the PriorityClass of the same name, owned by it and re-applied when it
  drifts or is deleted (value and preemptionPolicy are immutable in Kubernetes: replaced by
  delete and create). The table's GryviaPriorities (`api.priority.PRIORITY_TABLE`) are created
  at startup when missing.
- Preemption inside a full quota: when the quota gate holds a job (QuotaExceeded) whose
  priority may preempt, the fewest lowest-priority running jobs of that quota are marked
  Preempted (`reconcile.priority.choose_victims`); their reconcile deletes their workloads and,
  once their pods are gone, puts them back in the queue with their retry count. The scheduler's
  own preemption (pods' PriorityClass) covers full nodes.

The rules are pure (`gryvia_operator.reconcile.priority`); this module reads the watches and
writes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION, GryviaAIJob, GryviaPriority
from gryvia_operator.api.names import LABEL_MANAGED_BY, LABEL_PRIORITY
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.api.priority import COND_PREEMPTED, PRIORITY_TABLE
from gryvia_operator.controller import policies
from gryvia_operator.controller.kubeapi import AlreadyExists, Conflict, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import PRIORITIES
from gryvia_operator.reconcile import priority as rules
from gryvia_operator.reconcile.admission import AdmissionDecision
from gryvia_operator.reconcile.quotas import budget_spent, governing, job_view
from gryvia_operator.reconcile.status import JobEvent, set_condition

log = logging.getLogger("gryvia.operator.priority")
PLURAL = "gryviapriorities"
PREEMPTING = "Preempting"
"""Reason of the preemptor's hold while its victims stop."""


def values(rt: Runtime) -> dict[str, int]:
    """GryviaPriority name -> value, from the watch (invalid objects skipped)."""
    found = parse_valid(GryviaPriority, rt.indices.all_values(PRIORITIES))
    return {p.name: p.spec.value for p in found}


def _policy_of(rt: Runtime, job: GryviaAIJob) -> str:
    """The job's preemptionPolicy (its GryviaPriority's; PreemptLowerPriority without one)."""
    name = rules.job_priority_class(job, True)
    if not name:
        return "Never"  # priority 0: nothing to preempt for
    body = rt.indices.first(PRIORITIES, name)
    if body is None:
        return "Never"
    return str((body.get("spec") or {}).get("preemptionPolicy") or "PreemptLowerPriority")


def _value_of(body: Mapping[str, Any], known: Mapping[str, int]) -> int:
    meta = body.get("metadata") or {}
    return rules.priority_value(body.get("spec") or {}, meta.get("annotations") or {}, known)


def preempts_below(rt: Runtime, job: GryviaAIJob, body: Mapping[str, Any]) -> int | None:
    """The priority below which `job`'s pods may preempt others on full nodes (the job's
    value), None without priorities, with policy Never, or for priority 0 or less."""
    if not rt.config.priorities or _policy_of(rt, job) == "Never":
        return None
    value = _value_of(body, values(rt))
    return value if value > 0 else None


async def preempt(
    rt: Runtime, job: GryviaAIJob, body: Mapping[str, Any], decision: AdmissionDecision
) -> AdmissionDecision:
    """The gate's decision for `job`, after preempting lower-priority jobs of its full quota.

    Applies only with priorities enabled, to a job held for QuotaExceeded whose priority may
    preempt. Victims are chosen per governing quota that lacks room; when any such quota cannot
    be freed by lower-priority jobs, nobody is preempted. Returns a hold (reason Preempting)
    naming the victims, or `decision` unchanged.
    """
    if not rt.config.priorities or decision.verdict != "queue":
        return decision
    if decision.reason != "QuotaExceeded" or _policy_of(rt, job) == "Never":
        return decision
    known = values(rt)
    value = _value_of(body, known)
    view = job_view(body)
    governed = governing(job.namespace, policies.quotas(rt))
    states = policies.quota_states(rt, governed)
    bodies = policies.known_jobs(rt)
    victims: dict[str, tuple[rules.RunningJob, Mapping[str, Any]]] = {}
    for state in states:
        first = state.held[0].key if state.held else view.key
        if first != view.key or budget_spent(state):  # it waits behind others or for money
            return decision
        limits = state.quota.spec.gpu_quota
        need_gpus, need_slots = rules.need_for(
            view.gpus,
            state.allocated_gpus,
            limits.max_gpus,
            state.running_jobs,
            limits.max_running_jobs,
        )
        if need_gpus <= 0 and need_slots <= 0:
            continue
        candidates: dict[str, tuple[rules.RunningJob, Mapping[str, Any]]] = {}
        for other in bodies:
            seen = job_view(other)
            if seen.namespace not in state.quota.spec.namespaces or not seen.holds_gpus:
                continue
            if seen.key == view.key or seen.gpus == 0:
                continue
            started = str((other.get("status") or {}).get("startTime") or "")
            run = rules.RunningJob(
                seen.namespace, seen.name, _value_of(other, known), seen.gpus, started
            )
            candidates[run.key] = (run, other)
        chosen = rules.choose_victims(
            value, need_gpus, need_slots, [c for c, _ in candidates.values()]
        )
        if not chosen:
            return decision
        for run in chosen:
            victims[run.key] = candidates[run.key]
    if not victims:
        return decision
    preemptor = view.key
    for run, other in victims.values():
        message = rules.preemption_message(preemptor, value, run.value)
        await _mark_preempted(rt, other, message)
    names = ", ".join(sorted(victims))
    rt.post_event(body, JobEvent("Normal", PREEMPTING, f"preempting {names} (priority {value})"))
    rt.jobs.add_after((job.namespace, job.name), 0.5)
    return AdmissionDecision(
        "queue", PREEMPTING, f"preempting {names} to make room (priority {value})"
    )


async def _mark_preempted(rt: Runtime, body: Mapping[str, Any], message: str) -> None:
    """Write phase Preempted (guarded by the body's resourceVersion) and queue the victim."""
    meta = body.get("metadata") or {}
    key = (str(meta.get("namespace", "")), str(meta.get("name", "")))
    before = dict(body.get("status") or {})
    after = rules.preempted_status(before, message, rt.clock(), meta.get("generation"))
    patch = {k: after[k] for k in ("phase", "message", "preemptions", "conditions")}
    try:
        result = await rt.api.patch(
            "GryviaAIJob",
            key[1],
            {"metadata": {"resourceVersion": meta.get("resourceVersion")}, "status": patch},
            key[0],
            subresource="status",
        )
    except (Conflict, NotFound):  # it changed or went: the next decision chooses again
        rt.jobs.add(key)
        return
    slim = {k: v for k, v in result.items() if k != "metadata"}
    slim["metadata"] = {k: v for k, v in result["metadata"].items() if k != "managedFields"}
    rt.recent_jobs.note(key, str(result["metadata"].get("resourceVersion", "")), slim)
    rt.post_event(result, JobEvent("Warning", COND_PREEMPTED, message))
    log.info("job %s/%s: %s", key[0], key[1], message)
    rt.jobs.add(key)


async def apply_priority(rt: Runtime, body: Mapping[str, Any]) -> None:
    """Make the PriorityClass of one GryviaPriority match it, and write its status."""
    try:
        prio = GryviaPriority.model_validate(body)
    except ValueError:
        return
    desired = rules.desired_priority_class(prio)
    ready, reason, text = (
        "True",
        "Applied",
        f"PriorityClass {prio.name} has value {prio.spec.value}",
    )
    try:
        have = await rt.api.get("PriorityClass", prio.name)
    except NotFound:
        have = None
    if have is None:
        await _create(rt, desired)
    elif rules.owned_by_other(have, prio.metadata.uid or ""):
        ready, reason = "False", "Conflict"
        text = f"PriorityClass {prio.name} exists and is not Gryvia's: delete it or rename this"
    else:
        drift = rules.class_drift(desired, have)
        if drift == "replace":
            await rt.api.delete("PriorityClass", prio.name)
            await _create(rt, desired)
        elif drift == "patch":
            patch = {
                "metadata": {k: desired["metadata"][k] for k in ("labels", "ownerReferences")},
                "description": desired["description"],
            }
            await rt.api.patch("PriorityClass", prio.name, patch)
    await _write_status(rt, prio, ready, reason, text)


async def _create(rt: Runtime, desired: Mapping[str, Any]) -> None:
    try:
        await rt.api.create(desired)
    except AlreadyExists:  # a replace raced the old object's removal: retried on its event
        raise kopf.TemporaryError("PriorityClass still being deleted", delay=1.0) from None


async def _write_status(
    rt: Runtime, prio: GryviaPriority, ready: str, reason: str, text: str
) -> None:
    current = prio.status.model_dump(mode="json", by_alias=True) if prio.status else {}
    conditions = set_condition(
        current.get("conditions") or [],
        "Ready",
        ready,
        reason,
        text,
        rt.clock(),
        prio.metadata.generation,
    )
    status = {"priorityClassName": prio.name, "conditions": conditions}
    if current.get("priorityClassName") == prio.name and _same(
        current.get("conditions"), conditions
    ):
        return
    await rt.api.patch("GryviaPriority", prio.name, {"status": status}, subresource="status")


def _same(old: Any, new: list[dict[str, Any]]) -> bool:
    keys = ("type", "status", "reason", "message")
    before = [{k: c.get(k) for k in keys} for c in old or []]
    return before == [{k: c.get(k) for k in keys} for c in new]


async def ensure_table(rt: Runtime) -> None:
    """Create the GryviaPriorities of `PRIORITY_TABLE` that do not exist (never changed)."""
    for band in PRIORITY_TABLE:
        body = {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "GryviaPriority",
            "metadata": {"name": band.name, "labels": {LABEL_MANAGED_BY: rules.MANAGED_BY}},
            "spec": {
                "value": band.value,
                "preemptionPolicy": "PreemptLowerPriority",
                "description": band.description,
            },
        }
        try:
            await rt.api.create(body)
        except AlreadyExists:
            continue
        except KubeError as exc:
            log.warning("cannot create GryviaPriority %s: %s", band.name, exc)


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """With priorities enabled: index GryviaPriorities, keep their PriorityClasses, create the
    table's priorities. Disabled: nothing is registered (no watch)."""
    if not rt.config.priorities:
        return

    @kopf.index(GROUP, VERSION, PLURAL, id=PRIORITIES, registry=registry)
    async def priority_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each priority's metadata and spec."""
        meta = body.get("metadata") or {}
        return {
            name: {
                "metadata": {k: meta.get(k) for k in ("name", "uid", "generation")},
                "spec": dict(body.get("spec") or {}),
                "status": dict(body.get("status") or {}),
            }
        }

    @kopf.on.event(GROUP, VERSION, PLURAL, id="gryvia_priority_events", registry=registry)
    async def priority_event(type: str, body: kopf.Body, **_: Any) -> None:
        """Apply the PriorityClass (its deletion follows the owner reference)."""
        if type != "DELETED":
            await apply_priority(rt, dict(body))

    @kopf.on.event(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        id="gryvia_priorityclass_events",
        labels={LABEL_MANAGED_BY: rules.MANAGED_BY},
        registry=registry,
    )
    async def class_event(body: kopf.Body, **_: Any) -> None:
        """A managed PriorityClass changed or went: re-apply its GryviaPriority."""
        owner = (body.get("metadata", {}).get("labels") or {}).get(LABEL_PRIORITY)
        found = rt.indices.first(PRIORITIES, owner) if owner else None
        if found is not None:
            try:
                fresh = await rt.api.get("GryviaPriority", str(owner))
            except NotFound:
                return
            await apply_priority(rt, fresh)

    @kopf.on.startup(registry=registry)
    async def create_table(**_: Any) -> None:
        """The table's priorities exist from the start."""
        await ensure_table(rt)
