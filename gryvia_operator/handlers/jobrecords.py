"""Job records (`gryvia sacct` history): one GryviaJobRecord per ended job, and the roll-up
of records older than the retention setting (docs/slurm.md, "sacct history").

No kopf handler or index watches the records (a high-cardinality kind: issue 42's start-up
cost grows with every object kopf indexes). The writer learns of ended jobs from the
GryviaAIJob events the operator already receives; the records themselves are read only by the
roll-up pass, one paged LIST (500 a page) every `job_record_rollup_seconds`, the first at
start, which also tells the writer which jobs already have a record. The decisions are in
`gryvia_operator.reconcile.jobrecords`; this module only does the I/O.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gryvia_operator.api import resources as api
from gryvia_operator.api.attribution import tenant_of
from gryvia_operator.api.helpers import TERMINAL_PHASES
from gryvia_operator.api.names import usage_record_name
from gryvia_operator.api.priority import run_index
from gryvia_operator.controller import policies
from gryvia_operator.controller.informer import Informer
from gryvia_operator.controller.kubeapi import AlreadyExists, Conflict, KubeApi, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import PODS_BY_JOB, USAGE
from gryvia_operator.reconcile.jobrecords import (
    STRIP_MANAGED_FIELDS,
    build_job_record,
    exit_code,
    plan_rollup,
)

log = logging.getLogger("gryvia.operator.jobrecords")
PASS_SECONDS = 2.0
"""How often ended jobs waiting for their exit code or sealed usage are looked at again."""
SETTLE_SECONDS = 30.0
"""The longest a record waits for the exit code and the sealed usage record before it is
written with what is known."""
PAGE = 500
DELETE_CONCURRENCY = 16


@dataclass
class Ended:
    """A job that ended or was deleted and has no record yet."""

    body: dict[str, Any]
    deleted: bool
    since: float
    """monotonic time it was first seen ended."""


class JobRecorder:
    """Writes job records and runs the roll-up; one per operator process."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.pending: dict[str, Ended] = {}
        self.known: set[str] | None = None
        """UIDs of the jobs that have a record (None until the first roll-up pass listed them)."""
        self.kick = asyncio.Event()
        self.next_rollup = 0.0

    def on_job(self, event: str, body: Mapping[str, Any]) -> None:
        """A GryviaAIJob event: remember an ended or deleted job without a record (never
        blocks, never raises)."""
        meta = body.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        phase = (body.get("status") or {}).get("phase")
        deleted = event == "DELETED"
        if not uid or (self.known is not None and uid in self.known):
            return
        if not deleted and phase not in TERMINAL_PHASES:
            return
        since = self.pending[uid].since if uid in self.pending else time.monotonic()
        self.pending[uid] = Ended(dict(body), deleted, since)
        self.kick.set()

    async def loop(self) -> None:
        """Write pending records every pass; roll up when due (first at start)."""
        while True:
            self.kick.clear()
            try:
                if self.known is None or time.monotonic() >= self.next_rollup:
                    await self.rollup()
                await self.write_pending()
            except (KubeError, OSError) as exc:
                log.warning("job records: %s", exc)
            except Exception:  # a bug in one pass must not end the records for good
                log.exception("job record pass failed; retrying")
            wait = PASS_SECONDS if self.pending or self.known is None else None
            wait = wait or max(self.next_rollup - time.monotonic(), PASS_SECONDS)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.kick.wait(), wait)

    def _ready(self, ended: Ended) -> tuple[bool, list[Any], list[dict[str, Any]]]:
        """(write now?, its pods, its usage records): a record waits up to SETTLE_SECONDS for
        replica 0's exit code (when a pod ran) and for its usage record to be sealed."""
        meta = ended.body.get("metadata") or {}
        ns, name, uid = str(meta.get("namespace")), str(meta.get("name")), str(meta.get("uid"))
        pods = self.rt.indices.values(PODS_BY_JOB, (ns, name))
        runs = run_index(ended.body.get("status") or {})
        usage = [
            found
            for run in range(runs + 1)
            if (found := self.rt.indices.first(USAGE, (ns, usage_record_name(uid, run))))
        ]
        sealed = all((u.get("spec") or {}).get("final") for u in usage)
        coded = exit_code(pods) is not None or not any(p.started_at for p in pods)
        late = time.monotonic() - ended.since >= SETTLE_SECONDS
        return (sealed and coded) or late, pods, usage

    async def write_pending(self) -> None:
        """Create the record of every pending job that is ready (`_ready`)."""
        if self.known is None:
            return
        rt, now = self.rt, self.rt.clock()
        known_tenants = set(policies.tenants(rt))
        for uid, ended in list(self.pending.items()):
            if uid in self.known:
                del self.pending[uid]
                continue
            ready, pods, usage = self._ready(ended)
            if not ready:
                continue
            meta = ended.body.get("metadata") or {}
            ns = str(meta.get("namespace", ""))
            labels = meta.get("labels") or {}
            tenant = tenant_of(ns, labels, policies.namespace_labels(rt, ns), known_tenants)
            body = build_job_record(
                ended.body, tenant=tenant, pods=pods, usage=usage, now=now, deleted=ended.deleted
            )
            if await write_record(rt.api, body):
                rt.metrics.writes.labels(kind="GryviaJobRecord", verb="create").inc()
            self.known.add(uid)
            self.pending.pop(uid, None)

    async def list_records(self) -> list[dict[str, Any]]:
        """Every GryviaJobRecord of the cluster, read a page of PAGE at a time."""
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            query = {"limit": str(PAGE), **({"continue": token} if token else {})}
            page = await self.rt.api.get_path(api.JOB_RECORD.path(), query)
            items += page.get("items") or []
            token = str((page.get("metadata") or {}).get("continue") or "")
            if not token:
                return items

    async def rollup(self) -> None:
        """One roll-up pass: fold the records older than the retention into their roll-ups,
        write those, then delete the records (none when a roll-up write failed)."""
        config = self.rt.config
        self.next_rollup = time.monotonic() + config.job_record_rollup_seconds
        started = time.perf_counter()
        records = await self.list_records()
        listed = {str(u) for r in records if (u := (r.get("spec") or {}).get("jobUID"))}
        self.known = listed | (self.known or set())
        cutoff = self.rt.clock() - dt.timedelta(days=config.job_record_retention_days)
        plan = plan_rollup(records, cutoff)
        try:
            for body in plan.writes:
                meta = body["metadata"]
                if meta.get("resourceVersion"):
                    await self.rt.api.replace(body)
                    await self.rt.api.patch(
                        "GryviaJobRecord", meta["name"], STRIP_MANAGED_FIELDS, meta["namespace"]
                    )
                elif not await write_record(self.rt.api, body):
                    raise AlreadyExists(409, "AlreadyExists", f"{meta['name']} exists")
        except (AlreadyExists, Conflict) as exc:  # another writer: the next pass redoes it
            log.warning("job record roll-up deferred: %s", exc)
            return
        limit = asyncio.Semaphore(DELETE_CONCURRENCY)

        async def delete(ns: str, name: str) -> None:
            async with limit:
                await self.rt.api.delete("GryviaJobRecord", name, ns)

        await asyncio.gather(*(delete(ns, name) for ns, name in plan.deletes))
        if plan.deletes:
            log.info(
                "rolled up %d job records into %d roll-ups in %.1f s",
                len(plan.deletes),
                len(plan.writes),
                time.perf_counter() - started,
            )


async def write_record(api: KubeApi, body: dict[str, Any]) -> bool:
    """Create a GryviaJobRecord, then clear the managedFields its create recorded
    (`STRIP_MANAGED_FIELDS`); False when it existed already or its namespace is gone."""
    meta = body["metadata"]
    try:
        await api.create(body)
        await api.patch("GryviaJobRecord", meta["name"], STRIP_MANAGED_FIELDS, meta["namespace"])
    except (AlreadyExists, NotFound):
        return False
    return True


def register(jobs: Informer, recorder: JobRecorder) -> None:
    """Hand every GryviaAIJob event to the recorder (the job kind's events, not the records')."""

    def job_event(type: str, body: Mapping[str, Any]) -> None:
        """A job ended or went away: record it."""
        recorder.on_job(type or "", body)

    jobs.add_listener("jobrecords", job_event)
