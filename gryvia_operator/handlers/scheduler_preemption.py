"""Jobs whose pods the kube-scheduler preempted on full nodes (with `--enable-priorities`).

The pod watch (`handlers.pod`) hands over every pod of a Gryvia job that carries condition
DisruptionTarget with reason PreemptionByScheduler. For its job this module reads the
scheduler's `Preempted` Event on each such pod (the preemptor's uid), finds the preemptor (a
Gryvia job's pod from the pod index, else a pod on the Event's node), and writes what
`reconcile.scheduler_preemption` decides: condition Preempted naming the preemptor,
`status.preemptions` + 1 per preemption (the job hooks' Preempted event follows from it), and a
Warning Event on the job. The job keeps running: its Job controller replaces the pod.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from gryvia_operator.api.priority import COND_PREEMPTED
from gryvia_operator.controller.kubeapi import Conflict, KubeError, NotFound
from gryvia_operator.controller.runtime import JobKey, Runtime
from gryvia_operator.controller.store import PODS_BY_JOB
from gryvia_operator.reconcile import scheduler_preemption as rules
from gryvia_operator.reconcile.status import JobEvent
from gryvia_operator.reconcile.views import PodView

log = logging.getLogger("gryvia.operator.preemption")
EVENT_WAIT_SECONDS = 30.0
"""How long a victim's Event is waited for (the scheduler records it after the deletion)."""
_RETRY_SECONDS = 1.0
_KEEP = 2000


class SchedulerPreemptions:
    """Marks jobs whose pods the scheduler preempted; one task per job at a time."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.notes: dict[str, rules.SchedulerNote | None] = {}
        """Victim pod uid -> the scheduler's note, None when none came in time (Events are
        waited for once per pod)."""
        self.busy: dict[JobKey, asyncio.Task[None]] = {}
        self.again: set[JobKey] = set()

    def on_pod(self, pod: PodView) -> None:
        """A pod event: start marking its job when the scheduler preempted the pod."""
        if not pod.preempted_at or not pod.job or not self.rt.config.priorities:
            return
        key = (pod.namespace, pod.job)
        if key in self.busy:
            self.again.add(key)  # the running task looks once more when it is done
            return
        self.busy[key] = asyncio.get_running_loop().create_task(self._run(key, pod))

    async def _run(self, key: JobKey, pod: PodView) -> None:
        try:
            while True:
                self.again.discard(key)
                await self.mark(key, pod)
                if key not in self.again:
                    return
        except KubeError as exc:
            log.warning("job %s/%s: cannot record its pods' preemption: %s", *key, exc)
        finally:
            self.busy.pop(key, None)

    async def mark(self, key: JobKey, trigger: PodView) -> None:
        """Record the scheduler's preemptions of `key`'s pods (retried on a write conflict)."""
        pods = {p.uid: p for p in self.rt.indices.values(PODS_BY_JOB, key) if p.preempted_at}
        pods.setdefault(trigger.uid, trigger)
        victims = [v for p in pods.values() if (v := await self._victim(p)) is not None]
        if not victims:
            return
        for _ in range(5):
            try:
                body = await self.rt.api.get("GryviaAIJob", key[1], key[0])
            except NotFound:
                return
            if await self._write(key, body, victims):
                return

    async def _write(self, key: JobKey, body: Mapping[str, Any], victims: list[Any]) -> bool:
        meta = body.get("metadata") or {}
        decided = rules.scheduler_preempted_status(
            body.get("status") or {}, victims, meta.get("generation")
        )
        if decided is None:
            return True
        after, newest = decided
        keys = ("preemptions", "schedulerPreemptions", "conditions")
        patch = {"metadata": {"resourceVersion": meta.get("resourceVersion")}}
        try:
            result = await self.rt.api.patch(
                "GryviaAIJob",
                key[1],
                {**patch, "status": {k: after[k] for k in keys}},
                key[0],
                subresource="status",
            )
        except Conflict:
            return False
        except NotFound:
            return True
        message = rules.victim_message(newest)
        slim = {k: v for k, v in result.items() if k != "metadata"}
        slim["metadata"] = {k: v for k, v in result["metadata"].items() if k != "managedFields"}
        self.rt.recent_jobs.note(key, str(result["metadata"].get("resourceVersion", "")), slim)
        self.rt.post_event(result, JobEvent("Warning", COND_PREEMPTED, message))
        log.info("job %s/%s: %s", key[0], key[1], message)
        self.rt.jobs.add(key)
        return True

    async def _victim(self, pod: PodView) -> rules.Victim | None:
        note = await self._note(pod)
        if note is None:
            return None
        gryvia = {
            p.uid: (f"{p.namespace}/{p.job}", p.priority)
            for p in self.rt.indices.all_values(PODS_BY_JOB)
            if p.uid == note.uid
        }
        others = {} if gryvia or note.related else await self._pods_on(note)
        name, is_job, value = rules.preemptor_label(note, gryvia, others)
        return rules.Victim(
            pod=pod.name,
            time=pod.preempted_at,
            preemptor=name,
            node=note.node,
            gryvia_job=is_job,
            value=value,
            victim_value=pod.priority,
        )

    async def _note(self, pod: PodView) -> rules.SchedulerNote | None:
        """The scheduler's Event on `pod`, waited for up to EVENT_WAIT_SECONDS."""
        if pod.uid in self.notes:
            return self.notes[pod.uid]
        selector = f"involvedObject.uid={pod.uid},reason={rules.EVENT_REASON}"
        deadline = asyncio.get_running_loop().time() + EVENT_WAIT_SECONDS
        while True:
            events = await self.rt.api.list("Event", pod.namespace, field_selector=selector)
            found = next((n for e in events if (n := rules.parse_note(e)) is not None), None)
            late = asyncio.get_running_loop().time() > deadline
            if found is not None or late:
                if late and found is None:
                    log.info("pod %s/%s: no preemption Event from the scheduler", *_ns(pod))
                if len(self.notes) > _KEEP:
                    self.notes.clear()
                self.notes[pod.uid] = found
                return found
            await asyncio.sleep(_RETRY_SECONDS)

    async def _pods_on(self, note: rules.SchedulerNote) -> dict[str, str]:
        """uid -> `ns/name` of the pods nominated for or bound to the note's node."""
        found: dict[str, str] = {}
        for field in ("status.nominatedNodeName", "spec.nodeName"):
            try:
                items = await self.rt.api.list("Pod", field_selector=f"{field}={note.node}")
            except KubeError:
                continue
            for item in items:
                meta = item.get("metadata") or {}
                found[str(meta.get("uid"))] = f"{meta.get('namespace')}/{meta.get('name')}"
            if note.uid in found:
                break
        return found


def _ns(pod: PodView) -> tuple[str, str]:
    return pod.namespace, pod.name
