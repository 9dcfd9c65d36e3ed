"""A job's datasets step (issue 41 point 2): the datasets its `spec.datasets` names, from the
GryviaDataset index; the ones that can be mounted go into the job's reconcile config (its pod
template mounts their read-only claims), and a job that must wait for one gets
`observed.dataset_wait` (Pending, nothing created) and `status.pending` kind `Dataset` with
the staging progress. `handlers.jobsteps` runs it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gryvia_operator.api import GryviaAIJob, JobPhase
from gryvia_operator.api.attribution import tenant_of
from gryvia_operator.api.datasetuse import dataset_blocker, dataset_use
from gryvia_operator.controller import policies
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import DATASETS
from gryvia_operator.reconcile.aijob import DATASET_RETRY_SECONDS, Observed
from gryvia_operator.reconcile.config import ReconcileConfig


def with_datasets(
    rt: Runtime, job: GryviaAIJob, observed: Observed, config: ReconcileConfig
) -> tuple[Observed, ReconcileConfig]:
    """(`observed` with `dataset_wait`, `config` with the job's mountable datasets)."""
    mounts = job.spec.datasets or []
    if not mounts:
        return observed, config
    ns = job.namespace
    names = list(policies.tenants(rt))
    tenant = tenant_of(ns, None, policies.namespace_labels(rt, ns), names)
    volumes, wait = dataset_use(
        mounts, rt.indices.all_values(DATASETS), ns, tenant if tenant in names else None
    )
    return replace(observed, dataset_wait=wait), replace(config, datasets=volumes)


def with_dataset_pending(
    job: GryviaAIJob, observed: Observed, status: dict[str, Any]
) -> dict[str, Any]:
    """`status` with the Dataset blocker while the job waits for its datasets."""
    phase = status.get("phase")
    if not observed.dataset_wait or phase != JobPhase.PENDING.value or status.get("startTime"):
        return status
    names = [m.name for m in job.spec.datasets or []]
    pending, start = dataset_blocker(observed.dataset_wait, names)
    return {**status, "pending": pending, "estimatedStart": start}


def retry(observed: Observed, status: Mapping[str, Any]) -> float | None:
    """DATASET_RETRY_SECONDS while the job waits for its datasets, else None."""
    pending = status.get("pending")
    waits = isinstance(pending, Mapping) and pending.get("kind") == "Dataset"
    return DATASET_RETRY_SECONDS if waits and observed.dataset_wait else None
