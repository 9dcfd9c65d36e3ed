"""The pure decision of a GryviaDataset: check the source, stage a new version, share the
staged version read-only with the namespaces whose jobs name it, and the status
(docs/datasets.md; the Jobs and their logs: `reconcile.datasetjobs`).

One Job runs at a time. A check is due when nothing is staged yet, `cache.refreshSeconds`
after the last check, on a new `gryvia.io/stage` request, or when the declared
`source.version` is not the staged one. A check that finds a listing digest other than the
staged version's starts a copy into a new claim of that version. A finished Job is read (its
log) and deleted. Each consuming namespace gets a PersistentVolume copied from the staged
claim's volume (same source and node affinity, ReadOnlyMany, reclaim Retain: deleting the copy
never deletes data) pre-bound to a claim of the version's name there. Versions no live job
names are deleted once a newer one is staged (old claims stay while any job naming the dataset
has not ended, so a running job keeps its data).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from gryvia_operator.api.controlled import owner_reference
from gryvia_operator.api.dataset import (
    ANNOTATION_STAGE,
    LABEL_DATASET,
    LABEL_VERSION,
    DatasetProgress,
    GryviaDataset,
)
from gryvia_operator.api.storage import GryviaStorage
from gryvia_operator.reconcile import datasetjobs as dj
from gryvia_operator.reconcile.status import set_condition

RETRY_SECONDS = 60.0
"""Wait before checking again after a failed check or copy."""
VOLUME_SOURCES = ("hostPath", "local", "nfs", "csi", "iscsi", "cephfs", "glusterfs")
"""PersistentVolume sources a read-only copy keeps (Kubernetes' in-tree and CSI sources)."""


@dataclass(frozen=True)
class JobView:
    """A check or copy Job of the dataset: its role, state, the version it copies, its log."""

    name: str
    role: dj.Role
    state: Literal["Running", "Succeeded", "Failed"]
    version: str | None
    log: str


@dataclass(frozen=True)
class DatasetObserved:
    """What one dataset's reconcile reads: its cache backend (None: none of that name),
    whether its credentials Secret exists (None: none named), its Jobs, its cache claims by
    name as (version, phase, volume name), the bound volume of the staged version, the
    namespaces whose live jobs name it, and the read-only copies as {(namespace, claim):
    phase} and volume names."""

    staging_namespace: str
    storage: GryviaStorage | None
    storages: Sequence[str]
    secret_found: bool | None
    jobs: Sequence[JobView]
    claims: Mapping[str, tuple[str, str, str]]
    volume: Mapping[str, Any] | None
    consumers: Sequence[str]
    mirrors: Mapping[tuple[str, str], str]
    mirror_volumes: Sequence[str]


@dataclass
class DatasetPlan:
    """Creates, deletes as (kind, namespace, name), the status and the next look."""

    status: dict[str, Any]
    create: list[dict[str, Any]] = field(default_factory=list)
    delete: list[tuple[str, str, str]] = field(default_factory=list)
    requeue_after: float | None = None


def mirror_volume_name(dataset: GryviaDataset, version: str, namespace: str) -> str:
    """The read-only copy of `version`'s volume for `namespace` (a digest keeps it short)."""
    tag = hashlib.sha256(f"{dataset.name}/{version}/{namespace}".encode()).hexdigest()[:10]
    return f"gryvia-dataset-{dataset.name[:30]}-{tag}"


def _problems(dataset: GryviaDataset, seen: DatasetObserved) -> str | None:
    cache = dataset.spec.cache.storage
    if seen.storage is None:
        known = ", ".join(seen.storages) or "none yet"
        return (
            f'spec.cache.storage names no GryviaStorage "{cache}": create it (gryvia storage '
            f"create {cache} --backend ...) or name one that exists ({known})"
        )
    ref = dataset.spec.source.secret_ref
    if ref is not None and seen.secret_found is False:
        return (
            f'spec.source.secretRef: Secret "{ref.name}" not found in namespace '
            f"{seen.staging_namespace}: create it there with keys AWS_ACCESS_KEY_ID and "
            f"AWS_SECRET_ACCESS_KEY (kubectl create secret generic {ref.name} -n "
            f"{seen.staging_namespace} --from-literal=AWS_ACCESS_KEY_ID=... "
            "--from-literal=AWS_SECRET_ACCESS_KEY=...)"
        )
    return None


def _declared(dataset: GryviaDataset, digest: str) -> str:
    """The version name of `digest`: `<declared>-<digest>` when `source.version` is set."""
    declared = dataset.spec.source.version
    return f"{declared}-{digest}"[:63] if declared else digest


def _check_due(dataset: GryviaDataset, status: Mapping[str, Any], now: datetime) -> bool:
    asked = (dataset.metadata.annotations or {}).get(ANNOTATION_STAGE)
    if asked is not None and asked != status.get("lastStageRequest"):
        return True
    version = status.get("version")
    if not version:
        retry_at = _time(status.get("lastCheckAt"))
        return retry_at is None or now >= retry_at + timedelta(seconds=RETRY_SECONDS)
    declared = dataset.spec.source.version
    if declared and not str(version).startswith(f"{declared}-"):
        return True
    last = _time(status.get("lastCheckAt"))
    refresh = dataset.spec.cache.refresh_seconds
    return refresh > 0 and (last is None or now >= last + timedelta(seconds=refresh))


def _time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return None


def _stamp(now: datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%SZ")


def _finished_job(
    dataset: GryviaDataset, seen: DatasetObserved, job: JobView, status: dict[str, Any],
    now: datetime, plan: DatasetPlan,
) -> None:  # fmt: skip
    """Read a finished Job into `status` (and start the copy a changed source needs)."""
    plan.delete.append(("Job", seen.staging_namespace, job.name))
    status.pop("staging", None)
    version, files, size = dj.result_lines(job.log)
    if job.state == "Failed" or version is None:
        why = dj.log_error(job.log) or f"the {job.role} Job failed without a message"
        status["sourceError"] = why
        if job.role == "copy" and job.version:
            status.pop("stagingVersion", None)
            plan.delete.append(
                (
                    "PersistentVolumeClaim",
                    seen.staging_namespace,
                    dj.cache_claim_name(dataset, job.version),
                )
            )
        status["lastCheckAt"] = _stamp(now)
        return
    status.pop("sourceError", None)
    named = _declared(dataset, version)
    if job.role == "check":
        status["lastCheckAt"] = _stamp(now)
        status["sourceVersion"] = named
        if named != status.get("version") and seen.storage is not None:
            _start_copy(dataset, seen, seen.storage, named, version, status, now, plan)
        return
    status.update(
        {
            "version": job.version or named,
            "cacheClaim": dj.cache_claim_name(dataset, job.version or named),
            "files": files,
            "sizeBytes": size,
            "stagedAt": _stamp(now),
            "sourceVersion": job.version or named,
        }
    )
    stats = dj.last_stats(job.log)
    if stats is not None and stats.elapsed is not None:
        status["copySeconds"] = round(stats.elapsed, 3)
    status.pop("stagingVersion", None)
    status.pop("stagingStartedAt", None)
    status.pop("progress", None)


def _start_copy(
    dataset: GryviaDataset, seen: DatasetObserved, storage: GryviaStorage, named: str,
    digest: str, status: dict[str, Any], now: datetime, plan: DatasetPlan,
) -> None:  # fmt: skip
    claim = dj.cache_claim_name(dataset, named)
    name = dj.job_name(dataset, "copy", now)
    if claim not in seen.claims:
        plan.create.append(dj.build_cache_claim(dataset, storage, seen.staging_namespace, named))
    job = dj.build_job(dataset, "copy", name, seen.staging_namespace, digest=digest, claim=claim)
    job["metadata"]["labels"][LABEL_VERSION] = named
    plan.create.append(job)
    status.update(
        {
            "staging": name,
            "stagingVersion": named,
            "stagingStartedAt": _stamp(now),
            "stageRuns": int(status.get("stageRuns") or 0) + 1,
            "progress": DatasetProgress(updated_at=now).model_dump(
                mode="json", by_alias=True, exclude_none=True
            ),
        }
    )


def _progress(job: JobView, now: datetime) -> dict[str, Any] | None:
    stats = dj.last_stats(job.log)
    if stats is None:
        return None
    percent = None
    if stats.total_bytes:
        percent = round(min(100.0, 100.0 * stats.bytes / stats.total_bytes), 1)
    return DatasetProgress(
        bytes=stats.bytes,
        total_bytes=stats.total_bytes,
        files=stats.files,
        total_files=stats.total_files,
        percent=percent,
        bytes_per_second=stats.speed,
        eta_seconds=stats.eta,
        updated_at=now,
    ).model_dump(mode="json", by_alias=True, exclude_none=True)


def _mirrors(
    dataset: GryviaDataset, seen: DatasetObserved, version: str, plan: DatasetPlan
) -> list[str]:
    """Create the read-only copies the consumers lack; delete those no consumer needs."""
    claim = dj.cache_claim_name(dataset, version)
    volume = seen.volume
    wanted: set[tuple[str, str]] = set()
    if volume is not None:
        for ns in seen.consumers:
            wanted.add((ns, claim))
            if (ns, claim) not in seen.mirrors:
                plan.create.extend(_mirror_pair(dataset, volume, version, ns, claim))
    for ns, name in seen.mirrors:
        if (ns, name) not in wanted and ns not in seen.consumers:
            plan.delete.append(("PersistentVolumeClaim", ns, name))
    names = {mirror_volume_name(dataset, version, ns) for ns, _ in wanted}
    for pv in seen.mirror_volumes:
        if pv not in names and not any(ns in seen.consumers for ns, _ in seen.mirrors):
            plan.delete.append(("PersistentVolume", "", pv))
    return sorted({ns for ns, _ in wanted})


def _mirror_pair(
    dataset: GryviaDataset, volume: Mapping[str, Any], version: str, ns: str, claim: str
) -> list[dict[str, Any]]:
    spec = volume.get("spec") or {}
    capacity = dict(spec.get("capacity") or {"storage": str(dataset.spec.cache.size)})
    labels = {LABEL_DATASET: dataset.name, LABEL_VERSION: version}
    owner = [owner_reference(dataset, block_deletion=False)]
    pv_name = mirror_volume_name(dataset, version, ns)
    pv_spec: dict[str, Any] = {
        key: spec[key] for key in (*VOLUME_SOURCES, "nodeAffinity", "mountOptions") if key in spec
    }
    pv_spec.update(
        {
            "capacity": capacity,
            "accessModes": ["ReadOnlyMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "claimRef": {"namespace": ns, "name": claim},
        }
    )
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name, "labels": labels, "ownerReferences": owner},
        "spec": pv_spec,
    }
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim, "namespace": ns, "labels": labels, "ownerReferences": owner},
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "storageClassName": "",
            "volumeName": pv_name,
            "resources": {"requests": capacity},
        },
    }
    return [pv, pvc]


def reconcile_dataset(dataset: GryviaDataset, seen: DatasetObserved, now: datetime) -> DatasetPlan:
    """The writes and status of one dataset at `now` (UTC)."""
    before = (
        dataset.status.model_dump(mode="json", by_alias=True, exclude_none=True)
        if dataset.status
        else {}
    )
    status: dict[str, Any] = {k: v for k, v in before.items() if k not in ("phase", "message")}
    plan = DatasetPlan(status=status)
    problem = _problems(dataset, seen)
    current = status.get("staging")
    mine = next((j for j in seen.jobs if j.name == current), None)
    for job in seen.jobs:
        if job is not mine:  # left by an earlier pass (read already) or by a lost status
            plan.delete.append(("Job", seen.staging_namespace, job.name))
    if current and mine is None:
        for key in ("staging", "stagingVersion", "stagingStartedAt", "progress"):
            status.pop(key, None)
        status["sourceError"] = f"the Job {current} is gone (deleted, or its creation refused)"
        status["lastCheckAt"] = _stamp(now)
    elif mine is not None and mine.state != "Running":
        _finished_job(dataset, seen, mine, status, now, plan)
    if mine is not None and mine.state == "Running":
        if mine.role == "copy":
            progress = _progress(mine, now)
            if progress is not None:
                status["progress"] = progress
        plan.requeue_after = 2.0
    elif problem is None and "staging" not in status and _check_due(dataset, status, now):
        name = dj.job_name(dataset, "check", now)
        plan.create.append(dj.build_job(dataset, "check", name, seen.staging_namespace))
        status["staging"] = name
        asked = (dataset.metadata.annotations or {}).get(ANNOTATION_STAGE)
        if asked is not None:
            status["lastStageRequest"] = asked
        plan.requeue_after = 2.0
    elif "staging" in status:
        plan.requeue_after = 2.0
    version = status.get("version")
    if version:
        status["namespaces"] = _mirrors(dataset, seen, str(version), plan)
        _old_versions(dataset, seen, str(version), plan)
    _phase(dataset, status, problem, now)
    if plan.requeue_after is None and dataset.spec.cache.refresh_seconds > 0:
        last = _time(status.get("lastCheckAt")) or now
        due = last + timedelta(seconds=dataset.spec.cache.refresh_seconds)
        plan.requeue_after = max((due - now).total_seconds(), 1.0)
    if plan.requeue_after is None and not version:
        plan.requeue_after = RETRY_SECONDS
    return plan


def _old_versions(
    dataset: GryviaDataset, seen: DatasetObserved, version: str, plan: DatasetPlan
) -> None:
    """Delete the cache claims of versions older than the staged one while no job that
    names the dataset runs (a running job may still read an old version)."""
    if seen.consumers:
        return
    staging = {j.version for j in seen.jobs if j.state == "Running"}
    for claim, (claim_version, _, _) in seen.claims.items():
        if claim_version not in (version, *staging):
            plan.delete.append(("PersistentVolumeClaim", seen.staging_namespace, claim))


def _phase(
    dataset: GryviaDataset, status: dict[str, Any], problem: str | None, now: datetime
) -> None:
    gen = dataset.metadata.generation
    conds = list(status.get("conditions") or [])
    error = status.get("sourceError")
    version = status.get("version")
    if problem is not None:
        phase, message = "Pending", problem
    elif version:
        phase = "Ready"
        message = f"version {version}: {status.get('files')} files, {status.get('sizeBytes')} bytes"
        if status.get("stagingVersion"):
            message += f"; staging version {status['stagingVersion']}"
        if error:
            message += f"; the last check or copy failed: {error}"
    elif status.get("stagingVersion"):
        phase, message = "Staging", f"staging version {status['stagingVersion']}"
    elif error:
        phase, message = "Failed", f"{error} (spec.source.url {dataset.spec.source.url})"
    else:
        phase, message = "Pending", "checking the source"
    conds = set_condition(
        conds, "Staged", "True" if version else "False", "Staged" if version else "NotStaged",
        message, now, gen,
    )  # fmt: skip
    conds = set_condition(
        conds, "SourceReadable", "False" if error else "True",
        "SourceError" if error else "SourceListed", error or "the source was listed", now, gen,
    )  # fmt: skip
    status.update({"phase": phase, "message": message[:1024], "conditions": conds})
