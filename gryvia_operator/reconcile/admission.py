"""The admission gate's verdict: may a Pending or Queued job go ahead, wait, or be rejected.

The handler computes the verdict from the quotas, tenants and catalog it watches
(`gryvia_operator.reconcile.quotas.decide`) and hands it to `reconcile_job` in `Observed`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Verdict = Literal["allow", "queue", "reject"]


@dataclass(frozen=True)
class AdmissionDecision:
    """The gate's verdict, with the condition reason and message for queue and reject."""

    verdict: Verdict
    reason: str = ""
    message: str = ""
    """For `allow`, a reason (e.g. QuotaReserved) means a quota governs the job and the
    reconciler records condition Admitted=True; no reason means no quota applies."""
    unchecked: str = ""
    """For `allow`: what the admission gate could not check (it fails open); the reconciler
    records condition AdmissionUnchecked=True with this message."""


ALLOW = AdmissionDecision("allow")
