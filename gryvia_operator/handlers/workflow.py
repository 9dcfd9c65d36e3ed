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
import time
from typing import Any

import kopf
from pydantic import ValidationError

from gryvia_operator.api import GROUP, VERSION
from gryvia_operator.api.names import ANNOTATION_CANCEL
from gryvia_operator.api.workflow import LABEL_RUN, LABEL_WORKFLOW, GryviaWorkflow
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, WORKFLOWS
from gryvia_operator.reconcile.status import JobEvent
from gryvia_operator.reconcile.workflow import StepJob, invalid_status, reconcile_workflow

log = logging.getLogger("gryvia.operator.workflow")
PLURAL = "gryviaworkflows"
KIND = "GryviaWorkflow"
PASS_SECONDS = 10.0
"""Longest wait between two passes."""

Key = tuple[str, str]


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
        self.written: dict[Key, dict[str, Any]] = {}

    async def loop(self) -> None:
        """Pass over every workflow until cancelled."""
        while True:
            self.kick.clear()
            started = time.perf_counter()
            delay = PASS_SECONDS
            try:
                delay = await self.update()
            except (KubeError, OSError) as exc:
                log.warning("workflows: %s", exc)
            except Exception:  # a bug in one pass must not end workflows for good
                log.exception("workflow pass failed; retrying in %.0f s", PASS_SECONDS)
            self.rt.metrics.latency.labels(controller="workflow").observe(
                time.perf_counter() - started
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.kick.wait(), max(delay, 0.05))

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
        for gone in set(self.written) - live:
            self.written.pop(gone, None)
        return delay

    async def one(self, key: Key, body: dict[str, Any], now: Any) -> float | None:
        """Reconcile one workflow; seconds until its next cron time (None: none)."""
        stored = dict(body.get("status") or {})
        before = self.written.get(key) or stored
        body = {**body, "status": before}
        try:
            wf = GryviaWorkflow.model_validate(body)
        except ValidationError as exc:
            problems = [str(e["msg"]).removeprefix("Value error, ") for e in exc.errors()]
            await self.write(key, stored, invalid_status(before, problems))
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
        await self.write(key, stored, plan.status)
        if plan.wake_at is None:
            return None
        return float((plan.wake_at - now).total_seconds())

    async def write(self, key: Key, stored: dict[str, Any], status: dict[str, Any]) -> None:
        """Merge-patch the status when it differs from the last written (or stored) one;
        keys no longer set are removed (null)."""
        before = self.written.get(key) or stored
        if _same(before, status):
            if _same(stored, status):
                self.written.pop(key, None)  # the watch caught up
            return
        patch = {k: None for k in before if k not in status} | status
        await self.rt.api.patch(KIND, key[1], {"status": patch}, key[0], subresource="status")
        self.rt.metrics.writes.labels(kind=KIND, verb="status").inc()
        self.written[key] = {k: v for k, v in status.items() if v is not None}


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return {k: v for k, v in a.items() if v is not None} == {
        k: v for k, v in b.items() if v is not None
    }


def register(registry: kopf.OperatorRegistry, rt: Runtime, loop: Workflows) -> None:
    """Register the workflow index, and wake the loop when a workflow or a step job changes."""

    @kopf.index(GROUP, VERSION, PLURAL, id=WORKFLOWS, registry=registry)
    async def workflow_index(body: kopf.Body, namespace: str | None, name: str, **_: Any) -> Any:
        """Keep each workflow without managedFields."""
        meta = {k: v for k, v in (body.get("metadata") or {}).items() if k != "managedFields"}
        return {
            (namespace or "", name): {
                "apiVersion": body.get("apiVersion"),
                "kind": body.get("kind"),
                "metadata": meta,
                "spec": dict(body.get("spec") or {}),
                "status": dict(body.get("status") or {}),
            }
        }

    @kopf.on.event(GROUP, VERSION, PLURAL, id="gryvia_workflow_events", registry=registry)
    async def workflow_event(type: str, namespace: str | None, name: str, **_: Any) -> None:
        """A workflow appeared, changed or went: pass now."""
        if type == "DELETED":
            loop.written.pop((namespace or "", name), None)
        loop.kick.set()

    @kopf.on.event(
        GROUP,
        VERSION,
        "gryviaaijobs",
        id="gryvia_workflow_step_events",
        labels={LABEL_WORKFLOW: kopf.PRESENT},
        registry=registry,
    )
    async def step_event(**_: Any) -> None:
        """A step job changed: pass now."""
        loop.kick.set()
