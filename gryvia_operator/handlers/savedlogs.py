"""Save a finished or deleted job pod's log tail, then let the pod go.

A job's pods carry the `gryvia.io/save-log` finalizer (pod template). When one finishes
(`Succeeded`/`Failed`) its log is saved and the finalizer removed at once, so finished pods
never hold it (nothing blocks a namespace deletion when the operator is gone). When one is
deleted while it runs (the Job controller stopping the other replicas of a failed job, the
operator deleting a cancelled job's workload, a pod deleted by hand), the pod event lands here:
once its containers have stopped (or `SHUTDOWN_SLACK_SECONDS` after its deletion time), the
operator reads the log, merges its tail into the job's saved-logs ConfigMap, and removes the
finalizer. The decisions are in
`gryvia_operator.reconcile.savedlogs`; this module only does the I/O.

The finalizer is always removed: after a save, after a failed save (logged), when the job is
gone; a failed removal is retried every `RETRY_SECONDS`; an operator that restarts (or a standby
that takes over) sees every deleted pod again in the pods' first list (`handlers.pod`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.names import LABEL_JOB, saved_logs_name
from gryvia_operator.api.savedlogs import parse_saved_logs
from gryvia_operator.controller.kubeapi import AlreadyExists, Conflict, Invalid, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS
from gryvia_operator.reconcile import savedlogs as rules

log = logging.getLogger("gryvia.operator.savedlogs")
RETRY_SECONDS = 5.0
"""Delay before trying again to remove a finalizer whose removal failed."""
RELEASE_ATTEMPTS = 5
CONCURRENT_SAVES = 8
"""Pods whose log is saved at once: a backlog (a new leader's first list, a burst of jobs
ending) then shares the API server with the job workers instead of flooding it (measured:
226 saves started together held a new leader's first reconcile back by 11 s)."""


class LogSaver:
    """Saves deleted pods' logs; one per operator process (holds the in-flight pods)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.busy: set[str] = set()
        self.timers: dict[str, asyncio.Task[None]] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.gate = asyncio.Semaphore(CONCURRENT_SAVES)

    def on_pod(self, pod: Mapping[str, Any]) -> None:
        """React to a pod event (never blocks, never raises): start saving a deleted pod's
        log in the background, or look again later while its containers stop."""
        meta = pod.get("metadata") or {}
        uid = str(meta.get("uid", ""))
        job = self.rt.indices.first(AIJOBS, (meta.get("namespace", ""), _job_name(pod)))
        decision = rules.decide(pod, job, self.rt.clock())
        if decision is None or uid in self.busy:
            return
        if decision.action == "wait":
            delay = (decision.until - self.rt.clock()).total_seconds() if decision.until else 1.0
            self._later(pod, max(delay, 0.5))
            return
        self.busy.add(uid)
        self._spawn(self._handle(pod, job, decision))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _later(self, pod: Mapping[str, Any], delay: float) -> None:
        """Read the pod again after `delay` seconds and handle it (one timer per pod)."""
        meta = pod["metadata"]
        uid = str(meta.get("uid", ""))
        if uid in self.timers and not self.timers[uid].done():
            return

        async def again() -> None:
            await asyncio.sleep(delay)
            self.timers.pop(uid, None)
            try:
                fresh = await self.rt.api.get("Pod", meta["name"], meta["namespace"])
            except NotFound:
                return
            except (KubeError, OSError) as exc:
                log.warning("pod %s/%s: %s; trying again", meta["namespace"], meta["name"], exc)
                self._later(pod, RETRY_SECONDS)
                return
            if str(fresh["metadata"].get("uid")) == uid:
                self.on_pod(fresh)

        task = asyncio.get_running_loop().create_task(again())
        self.timers[uid] = task

    async def _handle(
        self, pod: Mapping[str, Any], job: Mapping[str, Any] | None, decision: rules.LogDecision
    ) -> None:
        async with self.gate:
            meta = pod["metadata"]
            where = f"{meta['namespace']}/{meta['name']}"
            try:
                if decision.action == "save" and job is not None:
                    await self._save(pod, job, decision)
                else:
                    log.debug("pod %s: not saving its log (%s)", where, decision.why)
            except (KubeError, OSError, ValueError) as exc:
                log.warning("pod %s: could not save its log: %s", where, exc)
            except Exception:  # never keep a pod because of a bug here
                log.exception("pod %s: saving its log failed", where)
            try:
                released = await self._release(pod)
            finally:
                self.busy.discard(str(meta.get("uid", "")))
            if not released:
                self._later(pod, RETRY_SECONDS)

    async def _save(
        self, pod: Mapping[str, Any], job: Mapping[str, Any], decision: rules.LogDecision
    ) -> None:
        meta, api = pod["metadata"], self.rt.api
        ns, job_meta = meta["namespace"], job["metadata"]
        text = await api.pod_log(
            meta["name"], ns, container=decision.container, tail_lines=rules.MAX_LINES + 1
        )
        saved = rules.saved_entry(pod, decision, text, _replicas(job), self.rt.clock())
        name = saved_logs_name(job_meta["name"])
        try:
            existing: dict[str, Any] | None = await api.get("ConfigMap", name, ns)
        except NotFound:
            existing = None
        if existing is None:
            try:
                await api.create(rules.configmap_body(job, saved))
                log.info("saved the log of pod %s/%s in ConfigMap %s", ns, meta["name"], name)
                return
            except AlreadyExists:
                existing = await api.get("ConfigMap", name, ns)
        if not rules.owned_by(existing, str(job_meta.get("uid", ""))):
            log.warning("ConfigMap %s/%s is not this job's; not saving logs there", ns, name)
            return
        if not rules.should_replace(
            parse_saved_logs(existing).get(saved.replica), saved.pod_created
        ):
            return
        entry = rules.configmap_body(job, saved)["data"]
        await api.patch("ConfigMap", name, {"data": entry}, ns)
        log.info("saved the log of pod %s/%s in ConfigMap %s", ns, meta["name"], name)

    async def _release(self, pod: Mapping[str, Any]) -> bool:
        """Remove the finalizer (re-reading the pod when it changed meanwhile); True when it
        is gone, False when the API failed (try again later)."""
        meta = pod["metadata"]
        current: Mapping[str, Any] = pod
        for _ in range(RELEASE_ATTEMPTS):
            ops = rules.finalizer_removal(current)
            if ops is None:
                return True
            try:
                await self.rt.api.json_patch("Pod", meta["name"], ops, meta["namespace"])
                return True
            except NotFound:
                return True
            except (Invalid, Conflict):  # the finalizer list changed: read it again
                pass
            except (KubeError, OSError) as exc:
                log.warning(
                    "pod %s/%s: removing finalizer: %s", meta["namespace"], meta["name"], exc
                )
                return False
            try:
                current = await self.rt.api.get("Pod", meta["name"], meta["namespace"])
            except NotFound:
                return True
            except (KubeError, OSError):
                return False
            if current["metadata"].get("uid") != meta.get("uid"):
                return True
        return False

    def cancel(self) -> None:
        """Stop the timers and saves in flight (operator shutdown)."""
        for task in (*self.timers.values(), *self.tasks):
            task.cancel()


def _job_name(pod: Mapping[str, Any]) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(LABEL_JOB, ""))


def _replicas(job: Mapping[str, Any]) -> int:
    """The job's replica count (1 when its spec does not parse)."""
    try:
        return GryviaAIJob.model_validate(job).spec.pod_count()
    except ValidationError:
        return 1
