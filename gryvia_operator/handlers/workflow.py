"""GryviaWorkflow on the kind controller (`--enable-workflows`): passes at once when a
workflow or one of its step jobs changes, else at its next cron time (at most every
PASS_SECONDS). A workflow observes its step jobs (label gryvia.io/workflow) in the job
index; `reconcile.workflow.reconcile_workflow` plans which step jobs to create, cancel
(annotation gryvia.io/cancel, as `gryvia cancel` does) and delete, and the status. Step jobs
are owned by their workflow (deleting it deletes them).
"""

from __future__ import annotations

from datetime import datetime

from gryvia_operator.api.controlled import cancel_patch
from gryvia_operator.api.names import GROUP, VERSION
from gryvia_operator.api.workflow import LABEL_RUN, LABEL_WORKFLOW, WORKFLOW_KIND, GryviaWorkflow
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.passes import ChildSource
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, WORKFLOWS
from gryvia_operator.reconcile.workflow import StepJob, reconcile_workflow

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


class WorkflowSpec(KindSpec[GryviaWorkflow, list[StepJob]]):
    """A workflow observes its step jobs; its reconcile is `reconcile_workflow`."""

    info = WORKFLOW_KIND
    controller = "workflow"
    index_id = WORKFLOWS
    children = (ChildSource(GROUP, VERSION, "gryviaaijobs", LABEL_WORKFLOW, informed=True),)
    idle_seconds = PASS_SECONDS
    child_word = "step job"
    not_created_reason = "StepNotCreated"

    async def observe(self, rt: Runtime, obj: GryviaWorkflow) -> list[StepJob]:
        """The workflow's step jobs."""
        return step_jobs(rt, obj.namespace, obj.name)

    def reconcile(self, obj: GryviaWorkflow, observed: list[StepJob], now: datetime) -> Outcome:
        """The plan as an outcome; looks again just after the next cron time."""
        plan = reconcile_workflow(obj, observed, now)
        wake = None if plan.wake_at is None else (plan.wake_at - now).total_seconds()
        return Outcome(
            status=plan.status,
            create=plan.create,
            patch=[("GryviaAIJob", name, cancel_patch()) for name in plan.cancel],
            delete=[("GryviaAIJob", name) for name in plan.delete],
            requeue_after=None if wake is None else max(wake, 0.0) + 0.2,
        )


def controller(rt: Runtime) -> KindController[GryviaWorkflow, list[StepJob]]:
    """The workflow controller over `rt`."""
    return KindController(rt, WorkflowSpec())
