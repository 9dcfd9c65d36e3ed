"""CSV of estimate invoices (`core.billing.invoices`) and the catalog rate as written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gryvia_cli.core.csvexport import to_csv
from gryvia_cli.core.unpriced import UNPRICED


def rate_text(rate: float) -> str:
    """A catalog rate as written: at least 2 decimals, up to 4 (`8.00`, `2.50`, `0.355`)."""
    text = f"{rate:.4f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"{whole}.{frac.ljust(2, '0')}"


INVOICE_CSV_HEADER = (
    "invoice", "tenant", "period_from", "period_to", "sku", "gpuType", "jobs", "gpuHours",
    "rate", "amount", "currency",
)  # fmt: skip


def invoices_csv(items: Sequence[dict[str, Any]]) -> str:
    """CSV of invoices (as `invoices` returns them): one line per invoice line and a `TOTAL`
    line per invoice; amounts with 2 decimals (`4.00`, as the table and the finalized
    invoice's CSV), rates as `rate_text`; an unpriced line has no rate and the amount
    `unpriced`, as a subtotal of only unpriced lines; cells guarded against formula
    injection."""
    body: list[tuple[object, ...]] = []
    for inv in items:
        head = (inv["number"], inv["tenant"], inv["period"]["from"], inv["period"]["to"])
        for line in inv["lines"]:
            body.append(
                (
                    *head,
                    line["sku"],
                    line["gpuType"],
                    line["jobs"],
                    line["gpuHours"],
                    "" if line["rate"] is None else rate_text(line["rate"]),
                    _csv_amount(line["amount"]),
                    inv["currency"],
                )
            )
        hours = round(sum(line["gpuHours"] for line in inv["lines"]), 4)
        total = _csv_amount(inv["subtotal"])
        body.append((*head, "TOTAL", "", inv["jobs"], hours, "", total, inv["currency"]))
    return to_csv(INVOICE_CSV_HEADER, body)


def _csv_amount(value: float | None) -> str:
    return UNPRICED if value is None else f"{value:.2f}"
