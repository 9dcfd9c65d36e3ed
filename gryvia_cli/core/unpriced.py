"""Unpriced usage in reports and previews: how it is counted and the words for it (pure).

The rule (docs/billing.md, "Unpriced usage"): a run whose GPU type no enabled GryviaGpuSku
priced when it was metered is *unpriced* (`gryvia_operator.api.usagerecord.is_unpriced`).
Its rate and cost of 0 mean no price, not free, so no amount counts it: reports add up the
priced usage and say beside it how many GPU-hours are unpriced, a cell of only unpriced usage
reads `unpriced` (never `0.00`), JSON has `unpricedGpuHours` and null for an amount of only
unpriced usage, and stderr warns with the fix: add or enable a GryviaGpuSku for that type.
"""

from __future__ import annotations

from collections.abc import Iterable

UNPRICED = "unpriced"
"""What a cell or a line's SKU says where there is no price."""


def only_unpriced(gpu_hours: float, unpriced_gpu_hours: float) -> bool:
    """True when all of `gpu_hours` (GPU-hours of an item, some maybe unpriced) are unpriced:
    there is unpriced usage and no priced GPU-hour beside it, so the item's amount is not 0
    but unknown (`unpriced` in a cell, null in JSON)."""
    return unpriced_gpu_hours > 0 and gpu_hours <= unpriced_gpu_hours


def money_text(
    amount: float, currency: str, gpu_hours: float, unpriced_gpu_hours: float, places: int = 2
) -> str:
    """A money cell: `96.00 USD` (all priced), `96.00 USD + unpriced` (some GPU-hours have no
    price and are not in the amount) or `unpriced` (none has a price). `places`: decimals."""
    if only_unpriced(gpu_hours, unpriced_gpu_hours):
        return UNPRICED
    text = f"{amount:.{places}f} {currency}"
    return f"{text} + {UNPRICED}" if unpriced_gpu_hours > 0 else text


def types_text(gpu_types: Iterable[str]) -> str:
    """The GPU types named in a warning, sorted: `B200`, `B200, H100`; `unknown` for runs
    whose type is not known (empty names: a job of any type on nodes without the
    `gryvia.io/gpu` label)."""
    return ", ".join(sorted({t or "unknown" for t in gpu_types}))


def fix_text(gpu_types: Iterable[str]) -> str:
    """The fix for unpriced usage: `add or enable a GryviaGpuSku for B200 (see: gryvia
    catalog)`; for runs of unknown type, label their nodes' GPU type too."""
    names = sorted({t for t in gpu_types if t})
    if not names:
        return "label the nodes' GPU type (gryvia.io/gpu) and add or enable a GryviaGpuSku for it"
    return f"add or enable a GryviaGpuSku for {', '.join(names)} (see: gryvia catalog)"


def unpriced_warning(what: str, gpu_hours: float, gpu_types: Iterable[str], where: str) -> str:
    """The stderr warning of a report: `<what>: 16.0000 GPU-hours on GPU type B200 are
    unpriced (...) and not in <where>; add or enable a GryviaGpuSku for B200 ...`.

    `what`: the item (a team, an invoice number); `gpu_hours`: its unpriced GPU-hours;
    `where`: the amounts they are missing from (`its spend`, `the subtotal`)."""
    types = list(gpu_types)
    return (
        f"{what}: {gpu_hours:.4f} GPU-hours on GPU type {types_text(types)} are unpriced (no "
        f"enabled GryviaGpuSku priced them when they were metered) and not in {where}; "
        f"{fix_text(types)}; runs still metering then get its price, sealed ones stay unpriced"
    )
