"""GryviaWorkflow controller (`--enable-workflows`): one loop over every workflow, at once
when a workflow or one of its step jobs changes, else at its next cron time (at most every
PASS_SECONDS). Each pass reads the workflow and its step jobs (label gryvia.io/workflow)
from the indexes, asks `reconcile.workflow.reconcile_workflow` for the plan, creates,
cancels (annotation gryvia.io/cancel) and deletes step jobs, and writes the status.

Step jobs are owned by their workflow (deleting it deletes them). The index may lag behind
this loop's own writes, so the last status written per workflow is used until the watch
shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import kopf
from pydantic import ValidationError

from gryvia_operator.api.controlled import invalid_status, spec_problems
from gryvia_operator.api.names import ANNOTATION_CANCEL
from gryvia_operator.api.workflow import LABEL_RUN, LABEL_WORKFLOW, GryviaWorkflow
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, WORKFLOWS
from gryvia_operator.handlers.passloop import Key, StatusWriter, register_pass_loop, run_passes
from gryvia_operator.reconcile.status import JobEvent
from gryvia_operator.reconcile.workflow import StepJob, reconcile_workflow

log = logging.getLogger("gryvia.operator.workflow")
PLURAL = "gryviaworkflows"
KIND = "GryviaWorkflow"
PASS_SECONDS = 10.0
"""Longest wait between two passes."""


def step_jobs(rt: Runtime, namespace: str, name: str) -> list[StepJob]:
    """The step jobs of workflow `namespace/name` the job index holds."""
    out = []
    for body in rt.indices.all_values(AIJOBS):
        meta = body.get("metadata") or {}
        labels = meta.get("labels") or {}
        if meta.get("namespace") != namespace or labels.get(LABEL_WORKFLOW) != name:
            continue
        status = body.get("status") or {}
        run = str(labels.get(LABEL_RUN, "0"))
        out.append(
            StepJob(
                name=str(meta.get("name")),
                phase=str(status.get("phase") or ""),
                message=str(status.get("message") or ""),
                run=int(run) if run.isdigit() else 0,
            )
        )
    return out


class Workflows:
    """The loop's state: the last status written per workflow."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.kick = asyncio.Event()
        self.status = StatusWriter(rt, KIND)

    async def loop(self) -> None:
        """Pass over every workflow until cancelled."""
        await run_passes(self.rt, "workflow", self.kick, self.update, PASS_SECONDS, log)

    async def update(self) -> float:
        """One pass; returns the seconds until the earliest next cron time (at most
        PASS_SECONDS)."""
        now = self.rt.clock()
        delay = PASS_SECONDS
        live: set[Key] = set()
        for body in list(self.rt.indices.all_values(WORKFLOWS)):
            meta = body.get("metadata") or {}
            key = (str(meta.get("namespace") or ""), str(meta.get("name")))
            live.add(key)
            if meta.get("deletionTimestamp"):
                continue
            try:
                wake = await self.one(key, body, now)
            except (KubeError, OSError) as exc:
                log.warning("workflow %s/%s: %s", *key, exc)
                continue
            if wake is not None:
                delay = min(delay, max(wake, 0.0) + 0.2)
        self.status.keep_only(live)
        return delay

    async def one(self, key: Key, body: dict[str, Any], now: Any) -> float | None:
        """Reconcile one workflow; seconds until its next cron time (None: none)."""
        stored = dict(body.get("status") or {})
        before = self.status.last(key, stored)
        body = {**body, "status": before}
        try:
            wf = GryviaWorkflow.model_validate(body)
        except ValidationError as exc:
            await self.status.write(key, stored, invalid_status(before, spec_problems(exc)))
            return None
        plan = reconcile_workflow(wf, step_jobs(self.rt, *key), now)
        ns = key[0]
        for job in plan.create:
            try:
                await self.rt.api.create(job)
                self.rt.metrics.writes.labels(kind="GryviaAIJob", verb="create").inc()
            except AlreadyExists:
                pass
            except KubeError as exc:  # e.g. refused by the webhook: say so, try next pass
                text = f"step job {job['metadata']['name']} not created: {exc}"
                self.rt.post_event(body, JobEvent("Warning", "StepNotCreated", text))
                plan.status["message"] = text
        for name in plan.cancel:
            patch = {"metadata": {"annotations": {ANNOTATION_CANCEL: "true"}}}
            with contextlib.suppress(NotFound):
                await self.rt.api.patch("GryviaAIJob", name, patch, ns)
        for name in plan.delete:
            await self.rt.api.delete("GryviaAIJob", name, ns)
        await self.status.write(key, stored, plan.status)
        if plan.wake_at is None:
            return None
        return float((plan.wake_at - now).total_seconds())


def register(registry: kopf.OperatorRegistry, rt: Runtime, loop: Workflows) -> None:
    """Register the workflow index, and wake the loop when a workflow or a step job changes."""

    register_pass_loop(
        registry, PLURAL, WORKFLOWS, LABEL_WORKFLOW, "workflow", loop.kick, loop.status
    )
