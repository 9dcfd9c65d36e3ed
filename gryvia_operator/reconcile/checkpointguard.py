"""Checkpoint guards, pure: which guard covers a job, what its pods get, the commits a trainer
printed, the per-job checkpoint ConfigMap, and which pods a loss restarts (the guard's status
is `reconcile.checkpoint_status`).

The contract with the trainer is docs/checkpoints.md. Pods of a guarded job are created with
the scheduling gate `gryvia.io/checkpoint-restore`: the operator lifts it only after the job's
ConfigMap `<job>-checkpoint` holds the last committed step, so a replacement pod always reads
the newest `GRYVIA_RESUME_STEP` (a batch Job's pod template is immutable; the env variable
comes from that ConfigMap through `configMapKeyRef`, read when the container starts).
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from gryvia_operator.api.aijob import GryviaAIJob
from gryvia_operator.api.checkpointguard import (
    KEY_CLAIM,
    KEY_DIRECTORY,
    KEY_LAST_COMMIT,
    KEY_RESTORES,
    KEY_RESUME,
    KEY_STEPS,
    KEY_STORAGE,
    MAX_LISTED_STEPS,
    GryviaCheckpointGuard,
    RestoreReason,
    configmap_name,
)
from gryvia_operator.api.core import selector_matches
from gryvia_operator.api.jobstorage import DataClaim
from gryvia_operator.api.names import (
    API_VERSION,
    CONTAINER_NAME,
    DATA_MOUNT,
    GATE_CHECKPOINT_RESTORE,
    LABEL_JOB,
)

ENV_DIR = "GRYVIA_CHECKPOINT_DIR"
ENV_INTERVAL = "GRYVIA_CHECKPOINT_INTERVAL_SECONDS"
ENV_RESUME = "GRYVIA_RESUME_STEP"
SCHEDULING_GATE = GATE_CHECKPOINT_RESTORE
"""Scheduling gate on every pod of a guarded job until its resume step is written."""
COMMIT_LINE = re.compile(r"^GRYVIA_CHECKPOINT_COMMITTED step=(\d{1,18})\s*$", re.MULTILINE)
"""The line a trainer prints once the checkpoint of a step is complete (stdout or stderr)."""
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"

_LOSS_REASONS: dict[str, RestoreReason] = {
    "EvictionByEvictionAPI": "PodEvicted",
    "PreemptionByScheduler": "PodEvicted",
    "TerminationByKubelet": "PodEvicted",
    "DeletionByTaintManager": "NodeLost",
    "DeletionByPodGC": "NodeLost",
}
"""DisruptionTarget condition reason -> restore reason (no condition: `PodDeleted`)."""


@dataclass(frozen=True)
class CheckpointPlan:
    """What a guarded job's pods get: the guard's name, save interval and folder (absolute),
    and where that folder lives: `claim` (mounted at /data) and `storage` (its GryviaStorage,
    "" for a plain StorageClass)."""

    guard: str
    interval_seconds: int
    directory: str
    claim: str = ""
    storage: str = ""
    restore: bool = True
    """Release replacement pods with the resume step (off: they start afresh)."""
    whole_job: bool = True
    """Evict the other pods of a non-elastic job after a loss."""


def guard_for(
    job: GryviaAIJob, guards: Iterable[GryviaCheckpointGuard]
) -> GryviaCheckpointGuard | None:
    """The guard of `job`: the first by name in its namespace whose selector matches."""
    labels = job.metadata.labels or {}
    mine = sorted(
        (g for g in guards if g.metadata.namespace == job.namespace and g.metadata.name),
        key=lambda g: g.name,
    )
    return next((g for g in mine if selector_matches(g.spec.job_selector, labels)), None)


def plan_for(
    job: GryviaAIJob, guards: Iterable[GryviaCheckpointGuard], claim: DataClaim | None = None
) -> CheckpointPlan | None:
    """The checkpoint plan of a job, or None: no guard, no `spec.storage` (the checkpoints
    live on the job's data claim), or a StatefulSet workload (it restarts pods in place).

    `claim` is the job's data claim (`api.jobstorage.data_claim`; None: spec.storage as a
    StorageClass). On a namespace's shared claim the folder is `/data/<directory>/<job>`, so
    the jobs sharing it never write each other's checkpoints, and they outlive the job;
    on the job's own claim it is `/data/<directory>`."""
    if not job.spec.storage or job.spec.effective_workload_kind() != "job":
        return None
    guard = guard_for(job, guards)
    if guard is None:
        return None
    policy = guard.spec.checkpoint_policy
    restore = guard.spec.restore
    claim = claim or DataClaim(job.spec.storage)
    folder = f"{DATA_MOUNT}/{policy.directory}"
    return CheckpointPlan(
        guard=guard.name,
        interval_seconds=policy.interval_seconds,
        directory=f"{folder}/{job.name}" if claim.shared else folder,
        claim=claim.claim_name(job.name),
        storage=claim.backend or "",
        restore=restore.enabled if restore else True,
        whole_job=restore.whole_job if restore else True,
    )


def checkpoint_env(job_name: str, plan: CheckpointPlan) -> list[dict[str, Any]]:
    """The trainer's checkpoint env: folder, interval, and the resume step from the job's
    ConfigMap (optional: unset until the first pod is released, empty on a fresh start)."""
    return [
        {"name": ENV_DIR, "value": plan.directory},
        {"name": ENV_INTERVAL, "value": str(plan.interval_seconds)},
        {
            "name": ENV_RESUME,
            "valueFrom": {
                "configMapKeyRef": {
                    "name": configmap_name(job_name),
                    "key": KEY_RESUME,
                    "optional": True,
                }
            },
        },
    ]


def with_checkpoint(
    pod_spec: dict[str, Any], job: GryviaAIJob, plan: CheckpointPlan | None
) -> dict[str, Any]:
    """`pod_spec` with the checkpoint env on the trainer and the scheduling gate (a copy);
    unchanged when `plan` is None."""
    if plan is None:
        return pod_spec
    out = dict(pod_spec)
    containers = []
    for container in out.get("containers") or []:
        if container.get("name") == CONTAINER_NAME:
            container = dict(container)
            container["env"] = [*(container.get("env") or []), *checkpoint_env(job.name, plan)]
        containers.append(container)
    out["containers"] = containers
    out["schedulingGates"] = [*(out.get("schedulingGates") or []), {"name": SCHEDULING_GATE}]
    return out


def parse_commits(log_text: str) -> list[int]:
    """Steps committed in a log (every `GRYVIA_CHECKPOINT_COMMITTED step=<n>` line, in order)."""
    return [int(m.group(1)) for m in COMMIT_LINE.finditer(log_text)]


@dataclass(frozen=True)
class JobCheckpoints:
    """A job's checkpoint record, as kept in its ConfigMap."""

    steps: tuple[int, ...] = ()
    """Newest committed steps, ascending (at most MAX_LISTED_STEPS)."""
    last_commit: str = ""
    """RFC 3339 time the newest step was seen, or empty."""
    restores: int = 0
    """Pods released with a resume step."""
    started: bool = False
    """A pod was released (the ConfigMap exists)."""

    @property
    def resume_step(self) -> int | None:
        """The last committed step, or None before any commit."""
        return self.steps[-1] if self.steps else None


def read_state(data: Mapping[str, str] | None) -> JobCheckpoints:
    """The record in a ConfigMap's data (None: no ConfigMap yet). Garbage reads as empty."""
    if data is None:
        return JobCheckpoints()
    steps = tuple(int(s) for s in str(data.get(KEY_STEPS, "")).split(",") if s.strip().isdigit())
    restores = str(data.get(KEY_RESTORES, "0"))
    return JobCheckpoints(
        steps=tuple(sorted(set(steps)))[-MAX_LISTED_STEPS:],
        last_commit=str(data.get(KEY_LAST_COMMIT, "")),
        restores=int(restores) if restores.isdigit() else 0,
        started=True,
    )


def merge_commits(state: JobCheckpoints, steps: Iterable[int], now: datetime) -> JobCheckpoints:
    """`state` with newly seen `steps` (older than the newest kept ones are still listed)."""
    merged = tuple(sorted(set(state.steps) | set(steps)))[-MAX_LISTED_STEPS:]
    if merged == state.steps:
        return state
    newest_changed = (merged[-1] if merged else None) != state.resume_step
    stamp = now.isoformat().replace("+00:00", "Z") if newest_changed else state.last_commit
    return replace(state, steps=merged, last_commit=stamp)


def state_data(
    state: JobCheckpoints, *, resume: bool = True, plan: CheckpointPlan | None = None
) -> dict[str, str]:
    """The ConfigMap data of a record; `resumeStep` is empty before the first commit, and
    always with `resume=False` (the guard's restore is off: pods start afresh). With `plan`,
    also where the checkpoints are (`directory`, `claim`, `storage`)."""
    step = state.resume_step if resume else None
    data = {
        KEY_RESUME: "" if step is None else str(step),
        KEY_STEPS: ",".join(str(s) for s in state.steps),
        KEY_LAST_COMMIT: state.last_commit,
        KEY_RESTORES: str(state.restores),
    }
    if plan is not None:
        data |= {KEY_DIRECTORY: plan.directory, KEY_CLAIM: plan.claim, KEY_STORAGE: plan.storage}
    return data


def build_configmap(
    job: Mapping[str, Any],
    state: JobCheckpoints,
    *,
    resume: bool = True,
    plan: CheckpointPlan | None = None,
) -> dict[str, Any]:
    """The job's `<job>-checkpoint` ConfigMap, owned by the job (deleted with it); `plan`
    adds where the checkpoints are (`state_data`)."""
    meta = job["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": configmap_name(meta["name"]),
            "namespace": meta.get("namespace", ""),
            "labels": {LABEL_JOB: meta["name"]},
            "ownerReferences": [
                {
                    "apiVersion": job.get("apiVersion", API_VERSION),
                    "kind": "GryviaAIJob",
                    "name": meta["name"],
                    "uid": meta.get("uid", ""),
                    "controller": False,
                    "blockOwnerDeletion": False,
                }
            ],
        },
        "data": state_data(state, resume=resume, plan=plan),
    }


@dataclass(frozen=True)
class GuardedPod:
    """What the guard needs of one pod of a guarded job."""

    name: str
    uid: str
    job: str
    index: str
    phase: str
    gated: bool
    deleting: bool
    created: str = ""
    loss_reason: RestoreReason | None = None
    gate_index: int = -1
    """Position of the guard's scheduling gate in spec.schedulingGates (-1: none)."""

    @property
    def started(self) -> bool:
        """Released and past Pending (it may have a log)."""
        return not self.gated and self.phase in ("Running", "Succeeded", "Failed")

    @property
    def live(self) -> bool:
        """Released, not ended and not going away."""
        return not self.gated and not self.deleting and self.phase in ("Pending", "Running")


def pod_facts(pod: Mapping[str, Any]) -> GuardedPod:
    """The guard's view of a pod body."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    gates = [g.get("name") for g in spec.get("schedulingGates") or []]
    deleting = bool(meta.get("deletionTimestamp"))
    reason: RestoreReason | None = None
    for cond in status.get("conditions") or []:
        if cond.get("type") == "DisruptionTarget" and cond.get("status") == "True":
            reason = _LOSS_REASONS.get(str(cond.get("reason")), "PodEvicted")
    if reason is None and deleting:
        reason = "PodDeleted"
    return GuardedPod(
        name=str(meta.get("name", "")),
        uid=str(meta.get("uid", "")),
        job=str((meta.get("labels") or {}).get(LABEL_JOB, "")),
        index=str((meta.get("annotations") or {}).get(COMPLETION_INDEX, "")),
        phase=str(status.get("phase", "Pending")),
        gated=SCHEDULING_GATE in gates,
        gate_index=gates.index(SCHEDULING_GATE) if SCHEDULING_GATE in gates else -1,
        deleting=deleting,
        created=str(meta.get("creationTimestamp", "")),
        loss_reason=reason,
    )


def is_guarded_pod(pod: Mapping[str, Any]) -> bool:
    """True for a pod created from a guarded template: its trainer reads `GRYVIA_RESUME_STEP`
    from the job's checkpoint ConfigMap (pod specs are immutable, so this never changes)."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        if container.get("name") == CONTAINER_NAME:
            return any(e.get("name") == ENV_RESUME for e in container.get("env") or [])
    return False


def pods_to_read(pods: Iterable[GuardedPod], ended_read: Container[str]) -> list[GuardedPod]:
    """Pods whose log may hold commits not yet seen: running ones, ones going away, and ones
    that ended (Succeeded or Failed: a trainer that crashed may have committed after the last
    poll) and were not read since (`ended_read`: their uids)."""
    return [
        p
        for p in pods
        if p.phase == "Running"
        or p.deleting
        or (p.started and p.phase in ("Succeeded", "Failed") and p.uid not in ended_read)
    ]


def lost_pods(pods: Iterable[GuardedPod]) -> list[GuardedPod]:
    """Pods that started and are going away before they ended (deleted, evicted, node lost)."""
    return [p for p in pods if p.loss_reason is not None and not p.gated and p.deleting]


def siblings_to_evict(
    pods: Sequence[GuardedPod], lost: GuardedPod, plan: CheckpointPlan, *, elastic: bool
) -> list[str]:
    """Other released, live pods of the job to evict so every rank resumes from one step;
    none for an elastic job (it changes membership itself) or with `wholeJob: false`."""
    if elastic or not plan.whole_job or not plan.restore:
        return []
    return sorted(p.name for p in pods if p.uid != lost.uid and p.live)
