"""The admission gate seam: may a Pending job go ahead, wait in a queue, or be rejected."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gryvia_operator.api import GryviaAIJob

Verdict = Literal["allow", "queue", "reject"]


@dataclass(frozen=True)
class AdmissionDecision:
    """The gate's verdict, with the condition reason and message for queue and reject."""

    verdict: Verdict
    reason: str = ""
    message: str = ""


ALLOW = AdmissionDecision("allow")


def admission_gate(job: GryviaAIJob) -> AdmissionDecision:
    """Decide whether a Pending job may be placed.

    Quotas, budgets and tenancy (phases Queued and Rejected) come with a later issue; until
    then every job is allowed. The reconciler already handles `queue` (phase Queued) and
    `reject` (phase Rejected, sticky) so the policy can be dropped in here.
    """
    del job  # no policy yet
    return ALLOW
