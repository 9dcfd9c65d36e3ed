"""Accounting loops: quota status every second, usage metering and tenant status every
`METERING_SECONDS` (and at once when a job ends or is deleted), the default catalog at start.

Each loop reads the indexes, calls the pure functions in `gryvia_operator.reconcile`, and
writes only what changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import time
import zlib
from collections.abc import Awaitable, Mapping
from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION, GryviaAIJob, GryviaGpuSku, GryviaTenant
from gryvia_operator.api.attribution import tenant_namespace, tenant_of
from gryvia_operator.api.gputype import names_family
from gryvia_operator.api.helpers import TERMINAL_PHASES
from gryvia_operator.api.names import LABEL_GPU, usage_record_name
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.api.periods import MeteredRun
from gryvia_operator.api.pricing import default_catalog, select_rate
from gryvia_operator.api.priority import requeue_pending, run_index
from gryvia_operator.api.timeslicing import replicas_of
from gryvia_operator.controller import policies
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, NODES, PODS_BY_JOB, USAGE
from gryvia_operator.reconcile.metering import (
    billed_physical_gpus,
    build_usage_record,
    needs_update,
    run_window,
    sealed_previous_run,
    spec_patch,
)
from gryvia_operator.reconcile.priority import job_run
from gryvia_operator.reconcile.quotas import job_view, quota_status
from gryvia_operator.reconcile.tenancy import tenant_status

log = logging.getLogger("gryvia.operator.accounting")
QUOTA_SECONDS = 1.0
REFRESH_SECONDS = 30.0
REFRESH_SPREAD_SECONDS = 25.0
"""An open record's running GPU-hours are rewritten after REFRESH_SECONDS plus a per-record
share of REFRESH_SPREAD_SECONDS (from a hash of its name), checked every METERING_SECONDS:
every record stays within a minute of the truth, and records created together do not all
fall due in the same pass."""
WRITE_CONCURRENCY = 16
METERING_SECONDS = 5.0
STATUS_REFRESH_SECONDS = 60.0


class Accounting:
    """The loops' state: what was last written, and the kick that runs metering early."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.kick = asyncio.Event()
        self.quota_written: dict[str, tuple[Any, float]] = {}
        self.tenant_written: dict[str, Any] = {}
        self.records: dict[tuple[str, str], dict[str, Any]] = {}  # written, until indexed
        self.written_at: dict[tuple[str, str], float] = {}  # monotonic time of our last write

    # -- quotas ---------------------------------------------------------------------------

    async def quota_loop(self) -> None:
        """Keep every GryviaQuota's status current; release held jobs when usage changes."""
        while True:
            try:
                await self.update_quotas()
            except (KubeError, OSError) as exc:
                log.warning("quota status: %s", exc)
            except Exception:  # a bug in one pass must not end quota status for good
                log.exception("quota pass failed; retrying in %.0f s", QUOTA_SECONDS)
            await asyncio.sleep(QUOTA_SECONDS)

    async def update_quotas(self) -> None:
        """One pass over all quotas."""
        rt = self.rt
        now = rt.clock()
        records = rt.indices.all_values(USAGE)
        for state in policies.quota_states(rt):
            name = state.quota.name
            hours, _ = policies.spend(records, state.quota.spec.namespaces, now)
            status = quota_status(state, now=now, gpu_hours=float(hours))
            key = _comparable(status)
            previous = self.quota_written.get(name)
            fresh = previous is not None and time.monotonic() - previous[1] < STATUS_REFRESH_SECONDS
            if previous is not None and previous[0] == key and fresh:
                continue
            if previous is not None and previous[0] != key:
                policies.requeue_held(rt, state.quota.spec.namespaces)
            await rt.api.patch("GryviaQuota", name, {"status": status}, subresource="status")
            self.quota_written[name] = (key, time.monotonic())

    # -- metering -------------------------------------------------------------------------

    async def metering_loop(self) -> None:
        """Refresh usage records and tenant status; run early when kicked. The default
        catalog is created by the first pass that can (a failure is logged and retried)."""
        catalog = False
        while True:
            started = time.perf_counter()
            self.kick.clear()  # before the pass: a job ending during it kicks the next one
            if not catalog:
                try:
                    await self.ensure_catalog()
                    catalog = True
                except KubeError as exc:  # metering goes on; the catalog is tried next pass
                    log.warning("could not create the default GPU price catalog: %s", exc)
            try:
                await self.meter()
                await self.update_tenants()
            except (KubeError, OSError) as exc:
                log.warning("metering: %s", exc)
            except Exception:  # a bug in one pass must not end metering for good
                log.exception("metering pass failed; retrying in %.0f s", METERING_SECONDS)
            self.rt.metrics.latency.labels(controller="metering").observe(
                time.perf_counter() - started
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.kick.wait(), METERING_SECONDS)

    def _billed_type(self, job: GryviaAIJob) -> str | None:
        if job.spec.cpu_only:
            return None
        if job.spec.gpu_type_constrained and not names_family(job.spec.gpu_type):
            return job.spec.gpu_type_key
        pods = self.rt.indices.values(PODS_BY_JOB, (job.namespace, job.name))
        nodes = {n.name: n for n in self.rt.indices.all_values(NODES)}
        for pod in pods:
            node = nodes.get(getattr(pod, "node_name", ""))
            if node is not None and node.labels.get(LABEL_GPU):
                return str(node.labels[LABEL_GPU])  # the variant a family's job landed on
        return job.spec.gpu_type_key or None

    def desired_record(
        self,
        job: GryviaAIJob,
        *,
        deleted: bool = False,
        catalog: tuple[dict[str, GryviaTenant], list[GryviaGpuSku]] | None = None,
    ) -> dict[str, Any] | None:
        """The usage record `job`'s run should have now (None when it never ran).

        `catalog` (tenants, SKUs) is read from the indexes when not given; a pass reads it once.
        """
        rt = self.rt
        if job.status is None or job.status.start_time is None:
            return None
        known, skus = catalog or (policies.tenants(rt), policies.skus(rt))
        labels = job.metadata.labels or {}
        tenant = tenant_of(
            job.namespace, labels, policies.namespace_labels(rt, job.namespace), set(known)
        )
        owner = known.get(tenant)
        gpu_type = self._billed_type(job)
        rate = select_rate(gpu_type, skus, owner.spec.allowed_skus if owner else None)
        now = rt.clock()
        key = (job.namespace, usage_record_name(job.metadata.uid or "", job_run(job)))
        stored = self.records.get(key) or rt.indices.first(USAGE, key)
        pods = rt.indices.values(PODS_BY_JOB, (job.namespace, job.name))
        replicas = {  # time-slicing of the nodes its pods ran on (label nvidia.com/gpu.replicas)
            node.name: replicas_of(node.labels)
            for node in (rt.indices.first(NODES, name) for name in {p.node_name for p in pods})
            if node is not None
        }
        physical = billed_physical_gpus(
            job.spec.total_gpus(), pods, replicas, recorded=_recorded_physical(stored)
        )
        return build_usage_record(
            job,
            tenant=tenant,
            rate=rate,
            gpu_type=gpu_type,
            now=now,
            deleted_at=now if deleted else None,
            window=run_window(pods) if pods else None,
            recorded_start=_recorded_start(stored),
            physical_gpus=physical,
        )

    async def write_record(self, desired: dict[str, Any]) -> None:
        """Create the record, or refresh it unless it is sealed."""
        meta = desired["metadata"]
        key = (meta["namespace"], meta["name"])
        existing = self.records.get(key) or self.rt.indices.first(USAGE, key)
        last = self.written_at.get(key)
        age = None if last is None else time.monotonic() - last
        refresh = REFRESH_SECONDS + zlib.crc32(meta["name"].encode()) % REFRESH_SPREAD_SECONDS
        if not needs_update(existing, desired, age_seconds=age, refresh_seconds=refresh):
            return
        try:
            if existing is None:
                try:
                    await self.rt.api.create(desired)
                except AlreadyExists:
                    found = await self.rt.api.get(
                        "GryviaUsageRecord", meta["name"], meta["namespace"]
                    )
                    if not needs_update(found, desired):
                        self.records[key] = found
                        return
                    await self.rt.api.patch(
                        "GryviaUsageRecord",
                        meta["name"],
                        {"spec": spec_patch(found, desired)},
                        meta["namespace"],
                    )
            else:
                patch = {"spec": spec_patch(existing, desired)}
                await self.rt.api.patch("GryviaUsageRecord", meta["name"], patch, meta["namespace"])
        except NotFound:
            return
        self.records[key] = desired
        self.written_at[key] = time.monotonic()
        if desired["spec"].get("final"):
            self.written_at.pop(key, None)
        self.rt.metrics.writes.labels(kind="GryviaUsageRecord", verb="apply").inc()

    async def meter(self) -> None:
        """One metering pass over every job that has run: records are written concurrently
        (at most WRITE_CONCURRENCY at once), the catalog is read once."""
        catalog = (policies.tenants(self.rt), policies.skus(self.rt))
        limit = asyncio.Semaphore(WRITE_CONCURRENCY)

        async def write(desired: dict[str, Any]) -> None:
            async with limit:
                await self.write_record(desired)

        wanted = []
        for body in self.rt.indices.all_values(AIJOBS):
            sealed = self.previous_run(body)  # requeued after a preemption
            if sealed is not None:
                wanted.append(sealed)
            if not _ran(body):
                continue
            for job in parse_valid(GryviaAIJob, [body]):  # one model alive at a time
                desired = self.desired_record(job, catalog=catalog)
                if desired is not None:
                    wanted.append(desired)
        await asyncio.gather(*(write(d) for d in wanted))
        for key in [k for k, rec in self.records.items() if _indexed(self.rt, k, rec)]:
            del self.records[key]  # the watch has caught up with our write

    def previous_run(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        """The sealed record of the run before a requeued job's last preemption, when that
        record is still open (`reconcile.metering.sealed_previous_run`)."""
        status = body.get("status") or {}
        run = run_index(status)
        if run == 0 or requeue_pending(status):
            return None
        meta = body.get("metadata") or {}
        key = (str(meta.get("namespace", "")), usage_record_name(str(meta.get("uid", "")), run - 1))
        stored = self.records.get(key) or self.rt.indices.first(USAGE, key)
        if stored is None or (stored.get("spec") or {}).get("final"):
            return None
        for job in parse_valid(GryviaAIJob, [body]):
            return sealed_previous_run(job, stored)
        return None

    async def on_job_deleted(self, body: Mapping[str, Any]) -> None:
        """Close the open record of a job deleted while it ran (billed up to now)."""
        meta = body.get("metadata") or {}
        run = run_index(body.get("status") or {})
        key = (str(meta.get("namespace", "")), usage_record_name(str(meta.get("uid", "")), run))
        existing = self.records.get(key) or self.rt.indices.first(USAGE, key)
        if existing is not None and (existing.get("spec") or {}).get("final"):
            return
        for job in parse_valid(GryviaAIJob, [body] if _ran(body) else []):
            desired = self.desired_record(job, deleted=True)
            if desired is not None:
                await self.write_record(desired)

    # -- tenants and catalog --------------------------------------------------------------

    async def update_tenants(self) -> None:
        """Refresh each tenant's usage, utilisation and health."""
        rt = self.rt
        now = rt.clock()
        records = rt.indices.all_values(USAGE)
        # the quota gate's own rule (`JobView.holds_gpus`): status and admission agree
        holding = [view for view in map(job_view, rt.indices.all_values(AIJOBS)) if view.holds_gpus]
        for name, tenant in policies.tenants(rt).items():
            ns = tenant_namespace(name)
            hours, cost = policies.spend(records, [ns], now)
            running = [view for view in holding if view.namespace == ns]
            used = sum(view.gpus for view in running)
            status = tenant_status(  # floats: usage and percentages shown in the status
                tenant,
                gpu_hours=float(hours),
                cost=float(cost),
                running_jobs=len(running),
                used_gpus=used,
            )
            if self.tenant_written.get(name) == status:
                continue
            try:
                await rt.api.patch("GryviaTenant", name, {"status": status}, subresource="status")
            except NotFound:
                continue
            self.tenant_written[name] = status

    async def ensure_catalog(self) -> None:
        """Create the default GPU price catalog when the cluster has no SKU at all."""
        if policies.skus(self.rt):
            return
        for sku in default_catalog():
            body = sku.model_dump(mode="json", by_alias=True, exclude_none=True)
            try:
                await self.rt.api.create(body)
            except AlreadyExists:
                continue
        log.info("created the default GPU price catalog")


def _recorded_start(record: Mapping[str, Any] | None) -> dt.datetime | None:
    """`spec.start` of a stored usage record (None when absent or unreadable)."""
    run = MeteredRun.of_raw(record) if record is not None else None
    return run.start if run is not None else None


def _recorded_physical(record: Mapping[str, Any] | None) -> float | None:
    """`spec.physicalGPUs` of a stored usage record (None when absent or unreadable)."""
    value = ((record or {}).get("spec") or {}).get("physicalGPUs")
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _ran(body: Mapping[str, Any]) -> bool:
    """True when a job body says its run started (only those are metered)."""
    return bool((body.get("status") or {}).get("startTime"))


def _indexed(rt: Runtime, key: tuple[str, str], written: Mapping[str, Any]) -> bool:
    """True when the usage index holds the spec this operator last wrote under `key`."""
    found = rt.indices.first(USAGE, key)
    return found is not None and found.get("spec") == written.get("spec")


def _comparable(status: Mapping[str, Any]) -> Any:
    """The status without timestamps, to tell real changes from refreshes."""
    out = {k: v for k, v in status.items() if k != "lastUpdated"}
    out["conditions"] = [
        {k: v for k, v in c.items() if k != "lastTransitionTime"}
        for c in status.get("conditions") or []
    ]
    return out


def register(registry: kopf.OperatorRegistry, rt: Runtime, acc: Accounting) -> None:
    """Kick metering when a job ends or is deleted."""

    def job_event(type: str, body: Mapping[str, Any]) -> Awaitable[None] | None:
        """A job ended or went away: meter now rather than at the next tick."""
        if type == "DELETED":
            return acc.on_job_deleted(dict(body))
        phase = (body.get("status") or {}).get("phase")
        meta = body.get("metadata") or {}
        run = run_index(body.get("status") or {})
        key = (str(meta.get("namespace", "")), usage_record_name(str(meta.get("uid", "")), run))
        started = phase == "Running" and rt.indices.first(USAGE, key) is None
        if phase in TERMINAL_PHASES or (started and key not in acc.records):
            acc.kick.set()  # a run began (open its record) or ended (seal it)
        return None

    rt.job_informer().add_listener("accounting", job_event)

    @kopf.on.event(
        GROUP, VERSION, "gryviatenants", id="gryvia_tenant_status_events", registry=registry
    )
    async def tenant_event(**_: Any) -> None:
        """A tenant changed: refresh statuses soon."""
        acc.kick.set()
