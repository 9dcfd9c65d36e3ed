"""A month's chargeback as `gryvia chargeback show|export` read it: the report the operator
wrote for a closed month, else a preview computed by the same rule
(`gryvia_operator.api.chargebacks.allocate`) from the usage records, reservations and the
catalog; the per-record rows behind it, and whether they still match the written report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gryvia_cli.errors import NotFoundError, UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.views.reads import read_optional

if TYPE_CHECKING:
    from gryvia_cli.connection import Connection
    from gryvia_operator.api.chargeback import ChargebackMonth, GryviaChargeback
    from gryvia_operator.api.chargebacks import RecordPart


@dataclass(frozen=True)
class MonthChargeback:
    """One policy's month: its report (`written`: the operator's, else a preview), the
    per-record rows recomputed now, and whether their digest is the report's."""

    policy: str
    report: ChargebackMonth
    written: bool
    parts: list[RecordPart]
    digest_matches: bool

    def as_dict(self) -> dict[str, Any]:
        """`-o json` of `chargeback show`: the report with the policy and `written`."""
        from gryvia_operator.api.names import CLI_API_VERSION

        return {
            "apiVersion": CLI_API_VERSION,
            "kind": "ChargebackReport",
            "chargeback": self.policy,
            "written": self.written,
            "recordsMatch": self.digest_matches,
            **self.report.model_dump(by_alias=True, mode="json"),
        }


def pick_policy(conn: Connection, name: str | None) -> GryviaChargeback:
    """The GryviaChargeback `name`, else the only one. Raises NotFoundError when there is
    none (or not that one), UsageError when there are several and no name."""
    from gryvia_operator.api.chargeback import GryviaChargeback
    from gryvia_operator.api.parse import parse_valid

    found = parse_valid(GryviaChargeback, read_optional(conn.access(), r.CHARGEBACK))
    if name is not None:
        found = [c for c in found if c.metadata.name == name]
    if not found:
        raise NotFoundError(
            "no GryviaChargeback" + (f" named {name}" if name else ""),
            hint="create one (docs/billing.md, Chargeback): kubectl apply -f chargeback.yaml",
        )
    if len(found) > 1:
        names = ", ".join(sorted(c.metadata.name or "" for c in found))
        raise UsageError(f"several chargebacks ({names}); pick one with --name")
    return found[0]


def month_chargeback(conn: Connection, name: str | None, month: str) -> MonthChargeback:
    """The policy's report of `month` (`YYYY-MM`): the written one, else a preview; with the
    per-record rows. Raises UsageError for a month not written `YYYY-MM`."""
    from gryvia_operator.api.chargebacks import allocate, digest, record_parts
    from gryvia_operator.api.gpusku import GryviaGpuSku
    from gryvia_operator.api.parse import parse_valid
    from gryvia_operator.api.periods import month_bounds
    from gryvia_operator.api.reservation import GryviaReservation

    try:
        month_bounds(month)
    except ValueError:
        raise UsageError(f"MONTH: expected YYYY-MM, not {month!r}", hint="e.g. 2026-11") from None
    policy = pick_policy(conn, name)
    access = conn.access()
    records = access.items(r.USAGE_RECORD, None)
    parts = record_parts(policy.spec, month, records)
    stored = next(
        (m for m in (policy.status and policy.status.months) or [] if m.month == month), None
    )
    if stored is None:
        reservations = parse_valid(GryviaReservation, read_optional(access, r.RESERVATION))
        skus = parse_valid(GryviaGpuSku, read_optional(access, r.GPUSKU))
        stored = allocate(policy.spec, month, records, reservations, skus, now=conn.now())
        return MonthChargeback(policy.metadata.name or "", stored, False, parts, True)
    same = [p for p in parts if p.currency == stored.currency]
    matches = digest(same) == stored.records_digest
    return MonthChargeback(policy.metadata.name or "", stored, True, parts, matches)


EXPORT_COLUMNS = (
    "month",
    "costCenter",
    "tenant",
    "project",
    "usageRecord",
    "job",
    "gpuHours",
    "cost",
    "currency",
    "sealed",
)


def export_rows(month: str, parts: list[RecordPart]) -> list[list[object]]:
    """One CSV row per usage record part (EXPORT_COLUMNS), by cost center, tenant, record."""
    ordered = sorted(parts, key=lambda p: (p.cost_center, p.tenant, p.record))
    return [
        [
            month,
            p.cost_center,
            p.tenant,
            p.project,
            p.record,
            p.job,
            p.gpu_hours,
            p.cost,
            p.currency,
            str(p.sealed).lower(),
        ]
        for p in ordered
    ]
