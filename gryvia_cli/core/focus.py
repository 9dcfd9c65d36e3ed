"""Usage as FinOps FOCUS rows (`gryvia usage --format focus`): the FinOps Foundation's FinOps
Open Cost and Usage Specification, version 1.2 (focus.finops.org), which FinOps tools import.

One row per usage record and billing period (UTC calendar month, as invoices): the part of the
record's run in the report's range and in that month, split as invoices split it
(`api.periods.split_in_window` on the amounts the ledger writes). Every mandatory column of
FOCUS 1.2 is present, with the conditional ones this data has (consumption, prices, SKU,
resource, sub account, tags) and `x_`-prefixed columns of Gryvia's own (the FOCUS rule for
custom columns). Money and quantities are Decimal; times are UTC, `YYYY-MM-DDTHH:MM:SSZ`.

BilledCost is what the month's invoice bills: per tenant and month the rows' costs are rounded
to the cent by the invoice's largest-remainder rule (`api.invoice.line_amounts`), so a
tenant's BilledCost over a whole month sums to that month's invoice subtotal. ListCost,
ContractedCost and EffectiveCost are the unrounded cost (no negotiated discount and no
commitment to amortize). Only usage of existing tenants is billed, so only it is exported
(`core.billing.unbilled_usage` tells the rest).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from decimal import Decimal
from typing import Any

from gryvia_cli.core.billing import sku_key
from gryvia_cli.core.csvexport import to_csv
from gryvia_operator.api import GryviaUsageRecord
from gryvia_operator.api.attribution import billable
from gryvia_operator.api.invoice import line_amounts
from gryvia_operator.api.ledger import amount
from gryvia_operator.api.periods import MeteredRun, month_bounds, run_windows, split_in_window
from gryvia_operator.api.usagerecord import is_unpriced

FOCUS_VERSION = "1.2"
PROVIDER = "Gryvia"
"""ProviderName, PublisherName and InvoiceIssuerName: the platform that metered and bills."""
UNIT = "GPU-Hours"
"""ConsumedUnit and PricingUnit (FOCUS unit format: `<unit>-<time unit>`)."""

MANDATORY = (
    "BilledCost",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ContractedCost",
    "EffectiveCost",
    "InvoiceIssuerName",
    "ListCost",
    "PricingQuantity",
    "PricingUnit",
    "ProviderName",
    "PublisherName",
    "ServiceCategory",
    "ServiceName",
)
"""FOCUS 1.2's mandatory columns."""
CONDITIONAL = (
    "ChargeFrequency",
    "ConsumedQuantity",
    "ConsumedUnit",
    "ContractedUnitPrice",
    "ListUnitPrice",
    "PricingCategory",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "SkuId",
    "SkuPriceId",
    "SubAccountId",
    "SubAccountName",
    "Tags",
)
"""The conditional (and recommended) columns this data has."""
CUSTOM = ("x_User", "x_Project", "x_GpuType", "x_Gpus", "x_Unpriced")
"""Gryvia's own columns: submitter, project, GPU type, GPUs and whether the run had no price."""
COLUMNS = MANDATORY + CONDITIONAL + CUSTOM


def _time(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _row(
    rec: GryviaUsageRecord,
    period: tuple[dt.datetime, dt.datetime],
    charge: tuple[dt.datetime, dt.datetime],
    hours: Decimal,
    cost: Decimal,
) -> dict[str, Any]:
    spec = rec.spec
    no_price = is_unpriced(spec)
    rate = None if no_price else Decimal(repr(spec.rate))
    sku = None if no_price else sku_key(rec)
    what = f"{spec.gpus} x {spec.gpu_type or 'GPU'}" if spec.gpus else "CPU only"
    price = "unpriced" if no_price else f"{spec.rate} {spec.currency}/GPU-hour"
    return {
        "BilledCost": cost,  # replaced by the cent amount in `focus_rows`
        "BillingAccountId": spec.tenant,
        "BillingAccountName": spec.tenant,
        "BillingCurrency": spec.currency,
        "BillingPeriodEnd": _time(period[1]),
        "BillingPeriodStart": _time(period[0]),
        "ChargeCategory": "Usage",
        "ChargeClass": None,
        "ChargeDescription": f"{what} for job {rec.namespace}/{spec.job} at {price}",
        "ChargePeriodEnd": _time(charge[1]),
        "ChargePeriodStart": _time(charge[0]),
        "ContractedCost": cost,
        "EffectiveCost": cost,
        "InvoiceIssuerName": PROVIDER,
        "ListCost": cost,
        "PricingQuantity": hours,
        "PricingUnit": UNIT,
        "ProviderName": PROVIDER,
        "PublisherName": PROVIDER,
        "ServiceCategory": "AI and Machine Learning",
        "ServiceName": "GPU jobs",
        "ChargeFrequency": "Usage-Based",
        "ConsumedQuantity": hours,
        "ConsumedUnit": UNIT,
        "ContractedUnitPrice": rate,
        "ListUnitPrice": rate,
        "PricingCategory": "Standard",
        "ResourceId": spec.job_uid,
        "ResourceName": f"{rec.namespace}/{spec.job}",
        "ResourceType": "GryviaAIJob",
        "SkuId": sku,
        "SkuPriceId": None if sku is None else f"{sku}:{spec.rate}:{spec.currency}",
        "SubAccountId": rec.namespace,
        "SubAccountName": rec.namespace,
        "Tags": json.dumps(spec.job_labels or {}, sort_keys=True),
        "x_User": spec.user,
        "x_Project": spec.project,
        "x_GpuType": spec.gpu_type,
        "x_Gpus": spec.gpus,
        "x_Unpriced": no_price,
    }


def focus_rows(
    records: Iterable[GryviaUsageRecord],
    start: dt.datetime | None,
    end: dt.datetime | None,
    tenants: Collection[str] | None,
) -> list[dict[str, Any]]:
    """The FOCUS rows (COLUMNS, values as Decimal, str, int, bool or None) of the usage in
    [start, end) (UTC; None: unbounded) of existing tenants (`tenants`: their names; None:
    unknown, every record's tenant), one per record and UTC month it has a part in, ordered
    by billing period, tenant and charge start. BilledCost per tenant and month sums to the
    month's metered cost rounded once to the cent, as the invoice's subtotal."""
    lo = start or dt.datetime(1, 1, 1, tzinfo=dt.UTC)
    hi = end or dt.datetime(9999, 1, 1, tzinfo=dt.UTC)
    groups: dict[tuple[dt.datetime, str], list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        if not billable(rec.spec.tenant, tenants):
            continue
        run = MeteredRun.of_record(rec).interval()
        metered = Decimal(amount(rec.spec.gpu_hours)), Decimal(amount(rec.spec.cost))
        for window in run_windows(*run, lo, hi, "month"):
            period = month_bounds(f"{window[0]:%Y-%m}")
            first = max(run[0], window[0])
            charge = (first, max(first, min(run[1], window[1])))
            hours, cost = (split_in_window(q, *run, *window) for q in metered)
            groups[(period[0], rec.spec.tenant)].append(_row(rec, period, charge, hours, cost))
    out: list[dict[str, Any]] = []
    for key in sorted(groups):
        rows = sorted(groups[key], key=lambda r: (r["ChargePeriodStart"], r["ResourceName"]))
        for row, cents in zip(rows, line_amounts([r["ListCost"] for r in rows]), strict=True):
            row["BilledCost"] = cents
            out.append(row)
    return out


def _cell(value: Any) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value else "0"
    return value


def focus_csv(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as CSV with a header of COLUMNS: null as an empty cell, Decimals in plain
    notation, booleans `true`/`false`; cells guarded against formula injection."""
    return to_csv(COLUMNS, [tuple(_cell(row[c]) for c in COLUMNS) for row in rows])


def focus_json(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows for JSON: Decimals as strings (exact), the rest as they are."""
    return [{k: (str(v) if isinstance(v, Decimal) else v) for k, v in row.items()} for row in rows]
