"""GryviaDataset on the kind controller (always on): each pass lists the datasets' Jobs,
claims and read-only volumes once (`before_pass`), reads the log of each dataset's running or
finished Job, and `reconcile.dataset.reconcile_dataset` decides. A pass comes when a dataset
changes, every 2 s while a Job runs (its progress; batch Jobs are watched only with the
server-side selector `gryvia.io/job` of job children, `handlers.children`, so a dataset
Job's own events reach no handler), when a check falls due, and at least every
PASS_SECONDS. Jobs and cache claims live in the staging namespace:
a `pvc://` source's, else `GRYVIA_DATASET_NAMESPACE`, else the pod's (`POD_NAMESPACE`), else
`default`.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gryvia_operator.api.attribution import tenant_of
from gryvia_operator.api.dataset import (
    DATASET_KIND,
    LABEL_DATASET,
    LABEL_ROLE,
    LABEL_VERSION,
    GryviaDataset,
)
from gryvia_operator.api.helpers import TERMINAL_PHASES
from gryvia_operator.api.storage import GryviaStorage
from gryvia_operator.controller import policies
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.kubeapi import KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, DATASETS, STORAGES
from gryvia_operator.reconcile import datasetjobs as dj
from gryvia_operator.reconcile.dataset import DatasetObserved, JobView, reconcile_dataset

PASS_SECONDS = 30.0
LOG_LINES = 40
"""Lines of a Job's log read (its last stats line, its result lines, its last error)."""


def default_namespace() -> str:
    """The staging namespace of non-`pvc://` sources."""
    return os.environ.get("GRYVIA_DATASET_NAMESPACE") or os.environ.get("POD_NAMESPACE", "default")


@dataclass
class PassView:
    """What one pass read for every dataset, by dataset name."""

    jobs: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    claims: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    volumes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def _label(obj: dict[str, Any], key: str) -> str:
    return str(((obj.get("metadata") or {}).get("labels") or {}).get(key) or "")


def _job_state(job: dict[str, Any]) -> str:
    status = job.get("status") or {}
    for cond in status.get("conditions") or []:
        if cond.get("status") == "True" and cond.get("type") in ("Complete", "SuccessCriteriaMet"):
            return "Succeeded"
        if cond.get("status") == "True" and cond.get("type") in ("Failed", "FailureTarget"):
            return "Failed"
    return "Running"


def consumers(rt: Runtime, dataset: GryviaDataset) -> list[str]:
    """Namespaces with a job that has not ended, names the dataset and may mount it."""
    names = list(policies.tenants(rt))
    out: set[str] = set()
    for body in rt.indices.all_values(AIJOBS):
        spec, meta = body.get("spec") or {}, body.get("metadata") or {}
        if (body.get("status") or {}).get("phase") in TERMINAL_PHASES:
            continue
        if not any(d.get("name") == dataset.name for d in spec.get("datasets") or []):
            continue
        ns = str(meta.get("namespace") or "")
        tenant = tenant_of(ns, None, policies.namespace_labels(rt, ns), names)
        if dataset.allows(tenant if tenant in names else None, ns):
            out.add(ns)
    return sorted(out)


class DatasetKind(KindSpec[GryviaDataset, DatasetObserved]):
    """A dataset observes its backend, Secret, Jobs (with logs), claims and volumes."""

    info = DATASET_KIND
    controller = "dataset"
    index_id = DATASETS
    children = ()
    idle_seconds = PASS_SECONDS

    def __init__(self) -> None:
        self.view = PassView()
        self.namespace = default_namespace()

    async def before_pass(self, rt: Runtime) -> None:
        """One LIST each of the datasets' Jobs, claims and read-only volumes."""
        view = PassView()
        for job in await rt.api.list("Job", label_selector=LABEL_DATASET):
            view.jobs[_label(job, LABEL_DATASET)].append(job)
        for claim in await rt.api.list("PersistentVolumeClaim", label_selector=LABEL_DATASET):
            view.claims[_label(claim, LABEL_DATASET)].append(claim)
        for pv in await rt.api.list("PersistentVolume", label_selector=LABEL_DATASET):
            view.volumes[_label(pv, LABEL_DATASET)].append(str(pv["metadata"]["name"]))
        self.view = view

    async def observe(self, rt: Runtime, obj: GryviaDataset) -> DatasetObserved:
        """The pass's reads for this dataset, its Job's log, its Secret and staged volume."""
        ns = dj.staging_namespace(obj, self.namespace)
        storages = {str(s["metadata"]["name"]): s for s in rt.indices.all_values(STORAGES)}
        raw = storages.get(obj.spec.cache.storage)
        storage = GryviaStorage.model_validate(raw) if raw is not None else None
        current = obj.status.staging if obj.status else None
        jobs = []
        for job in self.view.jobs.get(obj.name, []):
            name = str(job["metadata"]["name"])
            log = await _job_log(rt, ns, name) if name == current else ""
            role = "copy" if _label(job, LABEL_ROLE) == "copy" else "check"
            version = _label(job, LABEL_VERSION) or None
            jobs.append(JobView(name, role, _job_state(job), version, log))  # type: ignore[arg-type]
        claims: dict[str, tuple[str, str, str]] = {}
        mirrors: dict[tuple[str, str], str] = {}
        for claim in self.view.claims.get(obj.name, []):
            meta, spec = claim["metadata"], claim.get("spec") or {}
            phase = str((claim.get("status") or {}).get("phase") or "Pending")
            if meta.get("namespace") == ns and spec.get("storageClassName"):
                bound = str(spec.get("volumeName") or "")
                claims[str(meta["name"])] = (_label(claim, LABEL_VERSION), phase, bound)
            else:
                mirrors[(str(meta["namespace"]), str(meta["name"]))] = phase
        staged = obj.status.cache_claim if obj.status else None
        volume = None
        if staged and staged in claims and claims[staged][2]:
            volume = await _get_or_none(rt, "PersistentVolume", claims[staged][2], None)
        secret = None
        if obj.spec.source.secret_ref is not None:
            found = await _get_or_none(rt, "Secret", obj.spec.source.secret_ref.name, ns)
            secret = found is not None
        return DatasetObserved(
            staging_namespace=ns,
            storage=storage,
            storages=sorted(storages),
            secret_found=secret,
            jobs=tuple(jobs),
            claims=claims,
            volume=volume,
            consumers=tuple(consumers(rt, obj)),
            mirrors=mirrors,
            mirror_volumes=tuple(self.view.volumes.get(obj.name, [])),
        )

    def reconcile(self, obj: GryviaDataset, observed: DatasetObserved, now: datetime) -> Outcome:
        """The plan as an outcome (everything goes by namespace)."""
        plan = reconcile_dataset(obj, observed, now)
        return Outcome(
            status=plan.status,
            create=plan.create,
            delete_in=plan.delete,
            requeue_after=plan.requeue_after,
        )


async def _get_or_none(
    rt: Runtime, kind: str, name: str, namespace: str | None
) -> dict[str, Any] | None:
    try:
        return await rt.api.get(kind, name, namespace)
    except NotFound:
        return None


async def _job_log(rt: Runtime, namespace: str, job: str) -> str:
    """The last LOG_LINES lines of the Job's newest pod ('' when it has none yet)."""
    pods = await rt.api.list("Pod", namespace, label_selector=f"job-name={job}")
    if not pods:
        return ""
    pod = max(pods, key=lambda p: str(p["metadata"].get("creationTimestamp") or ""))
    try:
        return await rt.api.pod_log(
            str(pod["metadata"]["name"]), namespace, container="copier", tail_lines=LOG_LINES
        )
    except KubeError:
        return ""


def controller(rt: Runtime) -> KindController[GryviaDataset, DatasetObserved]:
    """The dataset controller over `rt`."""
    return KindController(rt, DatasetKind())
