"""What one reconcile of a GryviaAIJob observes (`Observed`) and asks for (`ChildAction`,
`Blocker`): the inputs and outputs of `reconcile.aijob.reconcile_job`, apart from it so the
reconciler stays small."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gryvia_operator.api.jobstorage import DataClaim
from gryvia_operator.reconcile.admission import ALLOW, AdmissionDecision
from gryvia_operator.reconcile.views import ChildView, NodeView, PodView

Verb = Literal["create", "patch", "delete"]


@dataclass(frozen=True)
class Blocker:
    """A child name taken by an object this job does not own.

    `previous_owner` is True when a deleted job of the same name still owns it (wait for
    garbage collection); False when something else owns it (a user error to report).
    """

    kind: str
    name: str
    previous_owner: bool


@dataclass(frozen=True)
class Observed:
    """What the watches know about one job: its children, pods, and the nodes."""

    workloads: tuple[ChildView, ...] = ()
    """batch Jobs and StatefulSets controlled by this job (by UID)."""
    service: ChildView | None = None
    pvc: ChildView | None = None
    pods: tuple[PodView, ...] = ()
    """This job's pods."""
    nodes: tuple[NodeView, ...] = ()
    node_pods: tuple[PodView, ...] = ()
    """Every pod bound to a node (GPU accounting for placement)."""
    blocked: tuple[Blocker, ...] = ()
    refused: tuple[str, ...] = ()
    """API server refusals (422) of children this job asked for: its spec cannot run."""
    data_claim: DataClaim | None = None
    """What the data claim is made of (`api.jobstorage.data_claim`: its name, the backend
    `spec.storage` names, else that name as a StorageClass); None: the job has no storage, or
    the handler did not resolve it (then `spec.storage` is the class, ReadWriteMany)."""
    storage_refused: str | None = None
    """Why a ResourceQuota refused the data claim's creation (`api.jobstorage.
    quota_refusal_text`): the job waits as Pending (kind Storage) and is tried again."""
    dataset_wait: str | None = None
    """Why the datasets the job names cannot be mounted yet (`api.datasetuse.dataset_use`):
    a job not started waits as Pending (kind Dataset), nothing created."""
    claim_event: str | None = None
    """The newest event of the data claim, read only while it is unbound and the job's pods
    wait for it (`reconcile.jobstorage.claim_unbound`)."""
    admission: AdmissionDecision = ALLOW
    """The quota gate's verdict for this job while it is Pending or Queued."""
    preempts_below: int | None = None
    """With priorities: the job's pods may preempt pods of a lower priority than this (their
    GPUs count as free for placement; the kube-scheduler preempts them). None: no preemption."""
    kueue_queue: str | None = None
    """The Kueue LocalQueue of the job (`reconcile.kueue.resolve_queue`), None when Gryvia's own
    gate admits it: a queued job skips the gate and placement, its batch Job is created
    suspended with Kueue's labels and Kueue alone suspends and resumes it."""
    kueue_workload: Mapping[str, Any] | None = None
    """The Kueue Workload of the job's batch Job (None: not created yet)."""
    kueue_cluster_queue: Mapping[str, Any] | None = None
    """The ClusterQueue that admitted the job's Workload, read only while the job's
    `status.kueue` lacks its borrowed GPUs (`kueuejob.needs_cluster_queue`)."""
    kueue_queue_workloads: tuple[Mapping[str, Any], ...] = ()
    """The Workloads of the job's namespace, read with `kueue_cluster_queue` (what it holds)."""
    kueue_preemptor: str | None = None
    """`namespace/name` of the GryviaAIJob whose Workload preempted this job's (None: not
    preempted, or unknown)."""


@dataclass(frozen=True)
class ChildAction:
    """Create a child, merge-patch it, or delete it (`body` is the object or the patch)."""

    verb: Verb
    kind: str
    name: str
    body: Mapping[str, Any] = field(default_factory=dict)
