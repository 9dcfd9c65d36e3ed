"""A chargeback's pass, pure: the reports of the months that closed since the last one
(`api.chargebacks.allocate`), appended to the status once and never recomputed, and when to
look again (the handler is `handlers.chargeback`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gryvia_operator.api.chargeback import GryviaChargeback
from gryvia_operator.api.chargebacks import allocate, closed_months, next_close
from gryvia_operator.api.gpusku import GryviaGpuSku
from gryvia_operator.api.reservation import GryviaReservation

log = logging.getLogger("gryvia.operator.chargeback")
PASS_SECONDS = 300.0
"""The longest wait between two passes."""
MONTHS_PER_PASS = 3
"""Months a pass reports at most (a policy created with an old startMonth catches up over a
few passes instead of blocking one)."""


@dataclass(frozen=True)
class Observed:
    """What a chargeback reads: raw usage records, valid reservations, the catalog."""

    records: tuple[dict[str, Any], ...]
    reservations: tuple[GryviaReservation, ...]
    skus: tuple[GryviaGpuSku, ...]


def reconcile_chargeback(
    obj: GryviaChargeback, observed: Observed, now: datetime
) -> tuple[dict[str, Any], float]:
    """(status, seconds to the next pass): the status with the reports of the closed months
    not reported yet (oldest first, at most MONTHS_PER_PASS more) after the kept ones,
    unchanged; the next pass when the next month closes (soon while catching up)."""
    spec = obj.spec
    kept = [
        m.model_dump(by_alias=True, exclude_none=True)
        for m in (obj.status and obj.status.months) or []
    ]
    done = {m["month"] for m in kept}
    created = obj.metadata.creation_timestamp or now
    due = [m for m in closed_months(spec, created, now) if m not in done][:MONTHS_PER_PASS]
    for month in due:
        report = allocate(
            spec, month, observed.records, observed.reservations, observed.skus, now=now
        )
        kept.append(report.model_dump(by_alias=True, exclude_none=True))
        log.info("chargeback %s: %s reported, total %s", obj.metadata.name, month, report.total)
    kept = sorted(kept, key=lambda m: m["month"])[-spec.keep_months :]
    wait = (next_close(spec, now) - now).total_seconds()
    later = 1.0 if len(due) == MONTHS_PER_PASS else min(max(wait, 1.0), PASS_SECONDS)
    return {"months": kept}, later
