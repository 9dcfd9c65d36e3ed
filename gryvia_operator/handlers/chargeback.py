"""GryviaChargeback on the kind controller (always on): once a month has closed, its report
(`api.chargebacks.allocate` over the usage records, reservations and the GPU catalog in the
indexes) is appended to the object's status, once; a month already reported is never
computed again, so a report does not change when records or prices change later. The pass
after the next month closes comes by itself (`requeue_after`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gryvia_operator.api.chargeback import CHARGEBACK_KIND, GryviaChargeback
from gryvia_operator.api.gpusku import GryviaGpuSku
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.api.reservation import GryviaReservation
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import CHARGEBACKS, RESERVATIONS, SKUS, USAGE
from gryvia_operator.reconcile.chargeback import PASS_SECONDS, Observed, reconcile_chargeback


def _values(rt: Runtime, index_id: str) -> list[Any]:
    try:
        return rt.indices.all_values(index_id)
    except KeyError:  # the index of a feature that is off (reservations)
        return []


class ChargebackSpec(KindSpec[GryviaChargeback, Observed]):
    """A chargeback observes the usage records, reservations and SKUs; it owns no children."""

    info = CHARGEBACK_KIND
    controller = "chargeback"
    index_id = CHARGEBACKS
    children = ()
    idle_seconds = PASS_SECONDS

    async def observe(self, rt: Runtime, obj: GryviaChargeback) -> Observed:
        """The records, reservations and catalog as the indexes hold them."""
        return Observed(
            tuple(_values(rt, USAGE)),
            tuple(parse_valid(GryviaReservation, _values(rt, RESERVATIONS))),
            tuple(parse_valid(GryviaGpuSku, _values(rt, SKUS))),
        )

    def reconcile(self, obj: GryviaChargeback, observed: Observed, now: datetime) -> Outcome:
        """`reconcile.chargeback.reconcile_chargeback`: the status and the next pass."""
        status, later = reconcile_chargeback(obj, observed, now)
        return Outcome(status=status, requeue_after=later)


def controller(rt: Runtime) -> KindController[GryviaChargeback, Observed]:
    """The chargeback controller over `rt`."""
    return KindController(rt, ChargebackSpec())
