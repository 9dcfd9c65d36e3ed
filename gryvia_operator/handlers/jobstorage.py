"""A job's storage step (issue 41 point 5): the newest event of a data claim that keeps the
job's pods waiting, and `status.message` saying so. `handlers.jobsteps` runs it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.reconcile.aijob import Observed
from gryvia_operator.reconcile.jobstorage import claim_unbound


async def with_claim_event(rt: Runtime, observed: Observed) -> Observed:
    """`observed` with the data claim's newest event (one LIST of the claim's events), read
    only while the claim is unbound and the job's pods wait for a node."""
    pvc = observed.pvc
    if pvc is None or not claim_unbound(pvc, observed.pods):
        return observed
    events = await rt.api.list(
        "Event",
        pvc.namespace,
        field_selector=f"involvedObject.kind=PersistentVolumeClaim,involvedObject.name={pvc.name}",
    )
    if not events:
        return observed
    newest = max(events, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    text = str(newest.get("message") or newest.get("reason") or "") or None
    return replace(observed, claim_event=text)


def with_storage_message(status: dict[str, Any]) -> dict[str, Any]:
    """`status` whose `message` is the Storage blocker's, when the job waits for storage."""
    pending = status.get("pending")
    if isinstance(pending, Mapping) and pending.get("kind") == "Storage" and pending.get("message"):
        return {**status, "message": pending["message"]}
    return status


def retry(status: Mapping[str, Any], seconds: float) -> float | None:
    """`seconds` (`ReconcileConfig.storage_retry_seconds`) while the job waits for storage (a
    claim may bind, a quota free up), else None."""
    pending = status.get("pending")
    waits = isinstance(pending, Mapping) and pending.get("kind") == "Storage"
    return seconds if waits else None
