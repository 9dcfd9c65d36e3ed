"""Metered usage as `gryvia usage` reads it: GPU-hours and cost per group in a window;
`usage_document` is its `-o json` document (also what the `usage` tool of `gryvia mcp`
returns)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gryvia_cli.errors import UsageError
from gryvia_cli.views.reads import read_billable_tenants, read_usage_records

if TYPE_CHECKING:
    import datetime as dt

    from gryvia_cli.connection import Connection
    from gryvia_cli.core.billing import UsageRow

ESTIMATE_NOTE = "costs are estimates from metered GPU time and catalog prices, not an invoice"


def usage_window(
    group_by: str, from_: str | None, to: str | None
) -> tuple[str, dt.datetime | None, dt.datetime | None]:
    """The grouping key and the window [--from, --to) (`core.billing.parse_group_by`,
    `parse_when`). Raises UsageError naming the option that is not understood, or when
    --from is not before --to."""
    from gryvia_cli.core.billing import parse_group_by, parse_when

    try:
        key = parse_group_by(group_by)
        start = parse_when(from_, option="--from") if from_ else None
        end = parse_when(to, option="--to", end=True) if to else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if start and end and start >= end:
        raise UsageError(f"--from {from_} is not before --to {to}")
    return key, start, end


def read_usage(
    state: Connection,
    tenant: str | None,
    key: str,
    start: dt.datetime | None,
    end: dt.datetime | None,
) -> tuple[list[UsageRow], UsageRow]:
    """Every usage record readable (only `tenant`'s when given), totalled per `key` inside
    the window: the rows and their total (`core.billing.aggregate`)."""
    from gryvia_cli.core.billing import aggregate

    access = state.access()
    records = read_usage_records(access, tenant)
    tenants = read_billable_tenants(access)
    return aggregate(records, key, start, end, tenant, tenants)


def usage_document(
    rows: list[UsageRow],
    total: UsageRow,
    key: str,
    start: dt.datetime | None,
    end: dt.datetime | None,
    tenant: str | None,
) -> dict[str, Any]:
    """`gryvia usage -o json`: {apiVersion: cli.gryvia.io/v1, kind: UsageReport, groupBy, from,
    to, tenant, items, total, note} (the shape the usage command's help documents)."""
    from gryvia_cli.core.billing import group_field
    from gryvia_operator.api.names import CLI_API_VERSION

    name = group_field(key)
    total_dict = total.as_dict(name)
    total_dict.pop(name)
    return {
        "apiVersion": CLI_API_VERSION,
        "kind": "UsageReport",
        "groupBy": key,
        "from": start.isoformat() if start else None,
        "to": end.isoformat() if end else None,
        "tenant": tenant,
        "items": [row.as_dict(name) for row in rows],
        "total": total_dict,
        "note": ESTIMATE_NOTE,
    }
