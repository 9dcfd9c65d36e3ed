"""GryviaAutoTuner controller (`--enable-autotuners`): one loop over every tuner, at once when
a tuner or one of its trial jobs changes, else every PASS_SECONDS while trials run. Each pass
reads the tuner and its trial jobs (label gryvia.io/tuner) from the indexes, the logs of the
trials' pods (the checkpoint guard's `trainer_log`), asks `reconcile.autotuner` for the plan,
creates trial jobs, cancels early-stopped ones (annotation gryvia.io/cancel, as
`gryvia cancel` does) and writes the status.

Trial jobs are owned by their tuner (deleting it deletes them). The index may lag behind this
loop's own writes, so the last status written per tuner is used until the watch shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime
from typing import Any

import kopf
from pydantic import ValidationError

from gryvia_operator.api.autotuner import LABEL_TRIAL, LABEL_TUNER, GryviaAutoTuner
from gryvia_operator.api.controlled import invalid_status, spec_problems
from gryvia_operator.api.names import ANNOTATION_CANCEL
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, AUTOTUNERS, PODS_BY_JOB
from gryvia_operator.handlers.checkpoint import trainer_log
from gryvia_operator.handlers.passloop import Key, StatusWriter, register_pass_loop, run_passes
from gryvia_operator.reconcile.autotuner import (
    ENDED_STATES,
    TrialJob,
    reconcile_tuner,
)
from gryvia_operator.reconcile.status import JobEvent

log = logging.getLogger("gryvia.operator.autotuner")
PLURAL = "gryviaautotuners"
KIND = "GryviaAutoTuner"
PASS_SECONDS = 3.0
"""Longest wait between two passes while a tuner has trials not ended (log polling)."""
IDLE_SECONDS = 30.0


def trial_jobs(rt: Runtime, namespace: str, name: str) -> list[TrialJob]:
    """The trial jobs of tuner `namespace/name` the job index holds."""
    out = []
    for body in rt.indices.all_values(AIJOBS):
        meta = body.get("metadata") or {}
        labels = meta.get("labels") or {}
        index = str(labels.get(LABEL_TRIAL, ""))
        if meta.get("namespace") != namespace or labels.get(LABEL_TUNER) != name:
            continue
        if not index.isdigit():
            continue
        status = body.get("status") or {}
        out.append(
            TrialJob(
                name=str(meta.get("name")),
                index=int(index),
                phase=str(status.get("phase") or ""),
                message=str(status.get("message") or ""),
                created=str(meta.get("creationTimestamp") or ""),
                completed=str(status.get("completionTime") or ""),
            )
        )
    return out


class AutoTuners:
    """The loop's state: the last status written per tuner."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.kick = asyncio.Event()
        self.status = StatusWriter(rt, KIND)

    async def loop(self) -> None:
        """Pass over every tuner until cancelled."""
        await run_passes(self.rt, "autotuner", self.kick, self.update, PASS_SECONDS, log)

    async def update(self) -> float:
        """One pass over every tuner; the seconds to wait before the next."""
        now = self.rt.clock()
        delay = IDLE_SECONDS
        live: set[Key] = set()
        for body in list(self.rt.indices.all_values(AUTOTUNERS)):
            meta = body.get("metadata") or {}
            key = (str(meta.get("namespace") or ""), str(meta.get("name")))
            live.add(key)
            if meta.get("deletionTimestamp"):
                continue
            try:
                if await self.one(key, body, now):
                    delay = PASS_SECONDS
            except (KubeError, OSError) as exc:
                log.warning("tuner %s/%s: %s", *key, exc)
        self.status.keep_only(live)
        return delay

    async def _logs(self, ns: str, tuner: GryviaAutoTuner, jobs: list[TrialJob]) -> dict[str, str]:
        """The logs of the trials not ended in status whose pods started."""
        ended = {
            t.name
            for t in (tuner.status.trials if tuner.status else None) or []
            if t.state in ENDED_STATES
        }
        out: dict[str, str] = {}
        for job in jobs:
            if job.name in ended:
                continue
            texts = []
            for pod in self.rt.indices.values(PODS_BY_JOB, (ns, job.name)):
                if pod.phase in ("Running", "Succeeded", "Failed"):
                    text = await trainer_log(self.rt, ns, pod.name)
                    if text is not None:
                        texts.append(text)
            if texts:
                out[job.name] = "\n".join(texts)
        return out

    async def one(self, key: Key, body: dict[str, Any], now: datetime) -> bool:
        """Reconcile one tuner; True while it has trials not ended."""
        stored = dict(body.get("status") or {})
        before = self.status.last(key, stored)
        body = {**body, "status": before}
        try:
            tuner = GryviaAutoTuner.model_validate(body)
        except ValidationError as exc:
            await self.status.write(key, stored, invalid_status(before, spec_problems(exc)))
            return False
        ns = key[0]
        jobs = trial_jobs(self.rt, *key)
        plan = reconcile_tuner(tuner, jobs, await self._logs(ns, tuner, jobs), now)
        for name in plan.stop:
            patch = {"metadata": {"annotations": {ANNOTATION_CANCEL: "true"}}}
            with contextlib.suppress(NotFound):
                await self.rt.api.patch("GryviaAIJob", name, patch, ns)
            log.info("tuner %s/%s: early-stopped trial %s", *key, name)
            self.rt.post_event(
                body, JobEvent("Normal", "TrialEarlyStopped", f"trial {name} stopped")
            )
        for job in plan.create:
            try:
                await self.rt.api.create(job)
                self.rt.metrics.writes.labels(kind="GryviaAIJob", verb="create").inc()
            except AlreadyExists:
                pass
            except KubeError as exc:  # e.g. refused by the webhook: say so, try next pass
                text = f"trial job {job['metadata']['name']} not created: {exc}"
                self.rt.post_event(body, JobEvent("Warning", "TrialNotCreated", text))
                plan.status["message"] = text[:1024]
                failed = int(job["metadata"]["labels"][LABEL_TRIAL])
                plan.status["trials"] = [t for t in plan.status["trials"] if t["index"] < failed]
                plan.status["trialsCreated"] = len(plan.status["trials"])
                break
        await self.status.write(key, stored, plan.status)
        return plan.status.get("phase") == "Running"


def register(registry: kopf.OperatorRegistry, rt: Runtime, loop: AutoTuners) -> None:
    """Register the tuner index, and wake the loop when a tuner or a trial job changes."""

    register_pass_loop(
        registry, PLURAL, AUTOTUNERS, LABEL_TUNER, "autotuner", loop.kick, loop.status
    )
