"""GryviaAutoTuner on the kind controller (`--enable-autotuners`): passes at once when a
tuner or one of its trial jobs changes, else every PASS_SECONDS while trials run. A tuner
observes its trial jobs (label gryvia.io/tuner) in the job index and the logs of their pods
(`controller.podlogs.trainer_log`); `reconcile.autotuner.reconcile_tuner` plans which
trial jobs to create, which to cancel early (annotation gryvia.io/cancel, as `gryvia cancel`
does) and the status. Trial jobs are owned by their tuner (deleting it deletes them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gryvia_operator.api.autotuner import (
    AUTOTUNER_KIND,
    LABEL_TRIAL,
    LABEL_TUNER,
    GryviaAutoTuner,
)
from gryvia_operator.api.controlled import MAX_MESSAGE, cancel_patch
from gryvia_operator.api.names import GROUP, VERSION
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.passes import ChildSource
from gryvia_operator.controller.podlogs import trainer_log
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, AUTOTUNERS, PODS_BY_JOB
from gryvia_operator.reconcile.autotuner import ENDED_STATES, TrialJob, reconcile_tuner
from gryvia_operator.reconcile.status import JobEvent

Observed = tuple[list[TrialJob], dict[str, str]]
"""A tuner's trial jobs, and the logs of those not ended by trial job name."""
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


async def trial_logs(
    rt: Runtime, ns: str, tuner: GryviaAutoTuner, jobs: list[TrialJob]
) -> dict[str, str]:
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
        for pod in rt.indices.values(PODS_BY_JOB, (ns, job.name)):
            if pod.phase in ("Running", "Succeeded", "Failed"):
                text = await trainer_log(rt, ns, pod.name)
                if text is not None:
                    texts.append(text)
        if texts:
            out[job.name] = "\n".join(texts)
    return out


class TunerSpec(KindSpec[GryviaAutoTuner, Observed]):
    """A tuner observes its trial jobs and their logs; its reconcile is `reconcile_tuner`."""

    info = AUTOTUNER_KIND
    controller = "autotuner"
    index_id = AUTOTUNERS
    children = (ChildSource(GROUP, VERSION, "gryviaaijobs", LABEL_TUNER, informed=True),)
    idle_seconds = IDLE_SECONDS
    child_word = "trial job"
    not_created_reason = "TrialNotCreated"

    async def observe(self, rt: Runtime, obj: GryviaAutoTuner) -> Observed:
        """The tuner's trial jobs and the logs of those not ended."""
        jobs = trial_jobs(rt, obj.namespace, obj.name)
        return jobs, await trial_logs(rt, obj.namespace, obj, jobs)

    def reconcile(self, obj: GryviaAutoTuner, observed: Observed, now: datetime) -> Outcome:
        """The plan as an outcome; looks again every PASS_SECONDS while trials run."""
        plan = reconcile_tuner(obj, *observed, now)
        return Outcome(
            status=plan.status,
            create=plan.create,
            patch=[("GryviaAIJob", name, cancel_patch()) for name in plan.stop],
            events=[
                JobEvent("Normal", "TrialEarlyStopped", f"trial {name} stopped")
                for name in plan.stop
            ],
            requeue_after=PASS_SECONDS if plan.status.get("phase") == "Running" else None,
        )

    def not_created(self, outcome: Outcome, child: dict[str, Any], text: str) -> bool:
        """Trials are numbered: the status keeps those before the refused one, none after
        it is created, and the next pass tries it again."""
        status = outcome.status
        status["message"] = text[:MAX_MESSAGE]
        failed = int(child["metadata"]["labels"][LABEL_TRIAL])
        status["trials"] = [t for t in status["trials"] if t["index"] < failed]
        status["trialsCreated"] = len(status["trials"])
        return True


def controller(rt: Runtime) -> KindController[GryviaAutoTuner, Observed]:
    """The auto-tuner controller over `rt`."""
    return KindController(rt, TunerSpec())
