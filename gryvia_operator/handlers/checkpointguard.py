"""GryviaCheckpointGuard on the kind controller (`--enable-checkpoint-guards`): each pass first
goes over every guarded job with pods (`GuardedJobs`, as `KindSpec.before_pass`: it records
the steps their trainers commit, restarts a non-elastic job as a whole after a pod loss, and
releases the gated pods once the job's ConfigMap holds the step they resume from; a job whose
guard is gone still has its pods released), then each guard's status is reconciled from its
jobs' records (`reconcile.checkpoint_status.reconcile_guard`) and written only when it
changed. Passes come at once after a guard changes or a guarded pod is gated or lost, else
every `--checkpoint-poll-seconds`. The pure rules are `reconcile.checkpoint`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

import kopf
from pydantic import ValidationError

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.checkpointguard import (
    CHECKPOINT_GUARD_KIND,
    GryviaCheckpointGuard,
    configmap_name,
)
from gryvia_operator.api.jobstorage import job_claim
from gryvia_operator.api.resources import POD
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.kubeapi import AlreadyExists, Invalid, KubeError, NotFound
from gryvia_operator.controller.podlogs import trainer_log
from gryvia_operator.controller.runtime import JobKey, Runtime
from gryvia_operator.controller.store import AIJOBS, CHECKPOINT_GUARDS, STORAGES
from gryvia_operator.reconcile.checkpointguard import (
    SCHEDULING_GATE,
    CheckpointPlan,
    GuardedPod,
    JobCheckpoints,
    build_configmap,
    is_guarded_pod,
    lost_pods,
    merge_commits,
    parse_commits,
    plan_for,
    pod_facts,
    pods_to_read,
    read_state,
    siblings_to_evict,
    state_data,
)
from gryvia_operator.reconcile.checkpointguard_status import GuardView, reconcile_guard
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.status import JobEvent

log = logging.getLogger("gryvia.operator.checkpoint")
_SEEN_LIMIT = 10_000


def guards(rt: Runtime) -> list[GryviaCheckpointGuard]:
    """Every valid guard the index holds (empty unless the feature is on)."""
    out = []
    for body in rt.indices.all_values(CHECKPOINT_GUARDS):
        with contextlib.suppress(ValidationError):
            out.append(GryviaCheckpointGuard.model_validate(body))
    return out


def config_for(
    rt: Runtime, job: GryviaAIJob, config: ReconcileConfig | None = None
) -> ReconcileConfig:
    """The reconcile config of one job: `config` (default `rt.config`) with the job's
    checkpoint plan, placed on the job's data claim (`config.data_claim`)."""
    config = config or rt.config
    if not rt.config.checkpoint_guards:
        return config
    plan = plan_for(job, guards(rt), config.data_claim)
    return config if plan is None else replace(config, checkpoint=plan)


def _stamp(rt: Runtime) -> str:
    return rt.clock().isoformat().replace("+00:00", "Z")


class GuardedJobs:
    """The guarded jobs' side of the pass: pods of guarded jobs, each job's record, handled
    losses, and what each guard's status is made of (`views`, rebuilt every pass)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.pods: dict[JobKey, dict[str, GuardedPod]] = {}
        self.states: dict[JobKey, JobCheckpoints] = {}
        self.handled: set[str] = set()
        """UIDs of lost pods already acted on."""
        self.evicted: set[str] = set()
        """UIDs of pods this operator evicted (their loss restarts nothing more)."""
        self.ended_read: set[str] = set()
        """UIDs of ended pods whose log was read once after they ended."""
        self.reasons: dict[JobKey, str] = {}
        self.restores: dict[tuple[str, str], dict[str, Any]] = {}
        self.views: dict[tuple[str, str], GuardView] = {}
        """(namespace, guard) -> its jobs' records and newest restore, from the last pass."""
        self.pinned: dict[JobKey, int | None] = {}
        """Jobs restarting as a whole after a loss: no commits are merged until every pod
        was replaced and released."""

    def on_pod(self, type: str, body: Any) -> bool:
        """Track a pod of a guarded job; True when it needs a pass now (a release or a loss)."""
        if not is_guarded_pod(body):
            return False
        pod = pod_facts(body)
        key = (str(body["metadata"].get("namespace", "")), pod.job)
        if type == "DELETED":
            self.pods.get(key, {}).pop(pod.uid, None)
            return False
        self.pods.setdefault(key, {})[pod.uid] = pod
        return pod.gated or pod.loss_reason is not None

    async def run_pass(self) -> None:
        """One pass over every guarded job with pods; then `views` holds each valid guard's
        jobs' records and newest restore."""
        known = guards(self.rt)
        views: dict[tuple[str, str], GuardView] = {
            (g.namespace, g.name): GuardView() for g in known
        }
        for key in list(self.pods):
            body = self.rt.indices.first(AIJOBS, key)
            if body is None:
                self.pods.pop(key, None)
                self.states.pop(key, None)
                continue
            try:
                job = GryviaAIJob.model_validate(body)
            except ValidationError:
                continue
            storage = job.spec.storage
            claim = job_claim(storage, self.rt.indices.values(STORAGES, ("", storage or "")))
            plan = plan_for(job, known, claim)
            state = await self._job_pass(key, dict(body), job, plan)
            if plan is not None and (key[0], plan.guard) in views:
                views[(key[0], plan.guard)].jobs[key[1]] = state
        for (ns, name), view in views.items():
            view.last_restore = self.restores.get((ns, name))
        self.views = views

    async def _state(self, key: JobKey) -> JobCheckpoints:
        if key not in self.states:
            try:
                cm = await self.rt.api.get("ConfigMap", configmap_name(key[1]), key[0])
                self.states[key] = read_state(cm.get("data") or {})
            except NotFound:
                self.states[key] = JobCheckpoints()
        return self.states[key]

    async def _commits(self, key: JobKey, pods: list[GuardedPod]) -> list[int]:
        steps: list[int] = []
        for pod in pods:
            if not pod.started:
                continue
            text = await trainer_log(self.rt, key[0], pod.name)
            if text is not None:
                steps.extend(parse_commits(text))
        return steps

    async def _save(
        self,
        key: JobKey,
        body: dict[str, Any],
        state: JobCheckpoints,
        resume: bool,
        plan: CheckpointPlan | None,
    ) -> None:
        """Create or update the job's ConfigMap with `state` (before any pod is released) and
        where its checkpoints are (`plan`)."""
        state = replace(state, started=True)
        if not self.states.get(key, JobCheckpoints()).started:
            try:
                await self.rt.api.create(build_configmap(body, state, resume=resume, plan=plan))
                self.states[key] = state
                return
            except AlreadyExists:
                pass
        data = state_data(state, resume=resume, plan=plan)
        await self.rt.api.patch("ConfigMap", configmap_name(key[1]), {"data": data}, key[0])
        self.states[key] = state

    async def _job_pass(
        self, key: JobKey, body: dict[str, Any], job: GryviaAIJob, plan: CheckpointPlan | None
    ) -> JobCheckpoints:
        """Record commits, act on losses, release gated pods; returns the job's record."""
        pods = list(self.pods.get(key, {}).values())
        resume = plan is None or plan.restore
        before = await self._state(key)
        lost = [p for p in lost_pods(pods) if p.uid not in self.handled]
        gated = [p for p in pods if p.gated and not p.deleting]
        if key in self.pinned and not any(p.gated or p.deleting for p in pods):
            del self.pinned[key]  # the whole job restarted: record commits again
        state = before
        if key not in self.pinned:  # a restarting job resumes every rank from one step
            reading = pods_to_read(pods, self.ended_read)
            state = merge_commits(before, await self._commits(key, reading), self.rt.clock())
            for pod in reading:
                if pod.phase in ("Succeeded", "Failed"):
                    self._remember(self.ended_read, pod.uid)
        if gated or state != before:
            await self._save(key, body, state, resume, plan)
        state = self.states[key]
        for pod in lost:
            self._remember(self.handled, pod.uid)
            if pod.uid in self.evicted:
                continue
            self.reasons[key] = str(pod.loss_reason)
            log.info("job %s/%s lost pod %s (%s)", *key, pod.name, pod.loss_reason)
            if plan is not None:
                elastic = bool(job.spec.distributed and job.spec.distributed.elastic)
                for name in siblings_to_evict(pods, pod, plan, elastic=elastic):
                    self.pinned[key] = state.resume_step
                    await self._evict(key, name, pods)
        released = [p for p in gated if await self._release(key, p)]
        if released and state.resume_step is not None and resume:
            state = replace(state, restores=state.restores + len(released))
            await self._save(key, body, state, resume, plan)
            if plan is not None:
                self._record_restore(key, body, plan.guard, released[-1], state)
        return self.states[key]

    async def _evict(self, key: JobKey, name: str, pods: list[GuardedPod]) -> None:
        pod = next(p for p in pods if p.name == name)
        self._remember(self.evicted, pod.uid)
        try:
            await self.rt.api.evict(name, key[0])
            self.pods.get(key, {})[pod.uid] = replace(pod, deleting=True)
            log.info("job %s/%s: evicted %s so every rank resumes from one step", *key, name)
        except KubeError as exc:  # a disruption budget said no: that rank keeps running
            log.warning("job %s/%s: could not evict %s: %s", *key, name, exc)

    async def _release(self, key: JobKey, pod: GuardedPod) -> bool:
        """Remove the guard's scheduling gate from `pod` (False when it was already gone)."""
        ops = [
            {"op": "test", "path": f"/spec/schedulingGates/{pod.gate_index}/name",
             "value": SCHEDULING_GATE},
            {"op": "remove", "path": f"/spec/schedulingGates/{pod.gate_index}"},
        ]  # fmt: skip
        try:
            result = await self.rt.api.json_patch("Pod", pod.name, ops, key[0])
        except (NotFound, Invalid):
            return False
        self.on_pod("MODIFIED", result)
        return True

    def _record_restore(
        self,
        key: JobKey,
        body: dict[str, Any],
        guard: str,
        pod: GuardedPod,
        state: JobCheckpoints,
    ) -> None:
        reason = self.reasons.get(key, "PodDeleted")
        step = state.resume_step or 0
        self.restores[(key[0], guard)] = {
            "job": key[1],
            "pod": pod.name,
            "step": step,
            "reason": reason,
            "time": _stamp(self.rt),
        }
        message = f"pod {pod.name} resumes from committed step {step} ({reason})"
        log.info("job %s/%s: %s", *key, message)
        self.rt.post_event(body, JobEvent("Normal", "CheckpointRestored", message))

    @staticmethod
    def _remember(seen: set[str], uid: str) -> None:
        if len(seen) > _SEEN_LIMIT:
            seen.clear()
        seen.add(uid)


class GuardSpec(KindSpec[GryviaCheckpointGuard, GuardView]):
    """A guard observes its jobs' records, kept by the guarded jobs' pass (`before_pass`) over
    the pods its pod handler tracks (`watch`); its reconcile is `reconcile_guard`."""

    info = CHECKPOINT_GUARD_KIND
    controller = "checkpointguard"
    index_id = CHECKPOINT_GUARDS
    children = ()

    def __init__(self, rt: Runtime) -> None:
        self.idle_seconds = rt.config.checkpoint_poll_seconds
        self.jobs = GuardedJobs(rt)

    def watch(self, registry: kopf.OperatorRegistry, rt: Runtime, kick: asyncio.Event) -> None:
        """Track the pods of guarded jobs (from the pods' list-and-watch, `handlers.pod`);
        pass now when one is gated or lost."""
        del registry  # pods are not kopf's

        def checkpoint_pod_event(type: str, body: Mapping[str, Any]) -> None:
            if self.jobs.on_pod(type, body):
                kick.set()

        rt.informer(POD.path()).add_listener("checkpointguard", checkpoint_pod_event)

    async def before_pass(self, rt: Runtime) -> None:
        """Record commits, act on losses and release gated pods of every guarded job."""
        await self.jobs.run_pass()

    async def observe(self, rt: Runtime, obj: GryviaCheckpointGuard) -> GuardView:
        """Its jobs' records and newest restore from this pass (none yet: empty)."""
        return self.jobs.views.get((obj.namespace, obj.name)) or GuardView()

    def reconcile(self, obj: GryviaCheckpointGuard, observed: GuardView, now: datetime) -> Outcome:
        """The status: its jobs' committed steps and the newest restore."""
        status = obj.status
        previous = (
            {}
            if status is None
            else status.model_dump(mode="json", by_alias=True, exclude_none=True)
        )
        return Outcome(status=reconcile_guard(previous, observed, now))


def controller(rt: Runtime) -> KindController[GryviaCheckpointGuard, GuardView]:
    """The checkpoint guard controller over `rt`."""
    return KindController(rt, GuardSpec(rt))
