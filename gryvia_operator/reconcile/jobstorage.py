"""A job that waits for its storage (issue 41 point 5): the status of a job whose data claim
a ResourceQuota refused, and the `status.pending` of a job that waits for storage (refused,
or its claim not bound while its pods wait for it). Pure; the words come from
`gryvia_operator.api.jobstorage`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from gryvia_operator.api import GryviaAIJob, JobPhase
from gryvia_operator.api.blockers import Found
from gryvia_operator.api.jobstorage import storage_blocker, unbound_claim_text
from gryvia_operator.reconcile.names import Cond, Reason
from gryvia_operator.reconcile.status import set_condition
from gryvia_operator.reconcile.views import ChildView, PodView


def storage_refused_status(
    status: dict[str, Any],
    text: str,
    now: datetime,
    generation: int | None,
    reason: str = Reason.STORAGE_QUOTA_EXCEEDED,
) -> dict[str, Any]:
    """`status` of a job whose data claim a ResourceQuota refused, or whose datasets are not
    ready (`text`: why, and the fix): Pending with that message, Ready=False (`reason`);
    nothing placed."""
    out = dict(status)
    out["phase"], out["message"] = JobPhase.PENDING.value, text
    out.pop("nodesAllocated", None)
    out["conditions"] = set_condition(
        out.get("conditions") or [],
        Cond.READY,
        "False",
        reason,
        text,
        now,
        generation,
    )
    return out


def claim_unbound(pvc: ChildView | None, pods: Sequence[PodView]) -> bool:
    """Whether the job's data claim exists unbound and keeps some of its pods off every node:
    the scheduler picked a node for it (a WaitForFirstConsumer claim with `selectedNode`: its
    provisioner alone is awaited), or the scheduler says a pod waits for its volumes
    (`PodView.volume_wait`). A claim that is only unbound while the pods wait for GPUs is not
    the reason (a WaitForFirstConsumer claim binds after its pod is placed)."""
    if pvc is None or pvc.deleting or pvc.status.get("phase") == "Bound":
        return False
    waiting = [p for p in pods if not p.node_name and not p.terminal and not p.deleting]
    return bool(waiting) and (
        bool(pvc.status.get("selectedNode")) or any(p.volume_wait for p in waiting)
    )


def storage_wait(
    job: GryviaAIJob,
    status: dict[str, Any],
    refused: str | None,
    pvc: ChildView | None,
    pods: Sequence[PodView],
    event: str | None = None,
) -> Found | None:
    """The Storage blocker of a job (`status` its desired status), or None.

    A Pending job whose claim a quota refused (`refused`, the text); a job not started yet
    (Pending or Scheduling without startTime) whose claim `pvc` is not bound while its pods
    wait for a node (`claim_unbound`), with the claim's last `event` when known.
    """
    phase = status.get("phase") or JobPhase.PENDING.value
    resource = f"storage {job.spec.storage or ''}".strip()
    if refused and phase == JobPhase.PENDING.value:
        return storage_blocker(refused, resource)
    waiting = phase in (JobPhase.PENDING.value, JobPhase.SCHEDULING.value)
    if not waiting or status.get("startTime") or not claim_unbound(pvc, pods) or pvc is None:
        return None
    klass = str(pvc.spec.get("storageClassName") or job.spec.storage or "")
    return storage_blocker(unbound_claim_text(pvc.namespace, pvc.name, klass, event), resource)
