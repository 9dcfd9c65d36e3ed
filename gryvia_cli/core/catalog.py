"""The GPU price catalog as rows: SKU defaults applied, rates formatted, a summary line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gryvia_cli.core.cells import Marked


def sku_facts(item: Mapping[str, Any]) -> dict[str, Any]:
    """A SKU's fields with the defaults applied (1 GPU/unit, USD, no spot discount, enabled)."""
    spec = item.get("spec") or {}
    rate = spec.get("hourlyRate")
    return {
        "name": (item.get("metadata") or {}).get("name") or "",
        "gpuType": spec.get("gpuType") or "",
        "gpusPerUnit": spec.get("gpusPerUnit") or 1,
        "hourlyRate": float(rate) if isinstance(rate, int | float) else None,
        "currency": spec.get("currency") or "USD",
        "spotDiscount": spec.get("spotDiscount") or 0,
        "enabled": spec.get("enabled") is not False,
        "description": spec.get("description") or "",
    }


def sku_rows(items: Sequence[Mapping[str, Any]], *, wide: bool = False) -> list[list[Any]]:
    """Rows NAME, GPU TYPE, GPUs/UNIT, RATE/HOUR (`24.50 USD`), SPOT DISCOUNT (`60%` or -),
    ENABLED (yes/no), sorted by GPU type then name."""
    rows = []
    facts = sorted((sku_facts(i) for i in items), key=lambda f: (f["gpuType"].lower(), f["name"]))
    for f in facts:
        rate = "-" if f["hourlyRate"] is None else f"{f['hourlyRate']:.2f} {f['currency']}"
        spot = f"{f['spotDiscount']:g}%" if f["spotDiscount"] else "-"
        row: list[Any] = [
            f["name"],
            f["gpuType"],
            f["gpusPerUnit"],
            rate,
            spot,
            Marked("yes", "ok") if f["enabled"] else Marked("no", "disabled"),
        ]
        if wide:
            row.append(f["description"] or "-")
        rows.append(row)
    return rows


def sku_summary(items: Sequence[Mapping[str, Any]]) -> str:
    """`Total: N SKUs (M enabled)`."""
    enabled = sum(1 for i in items if sku_facts(i)["enabled"])
    return f"Total: {len(items)} SKUs ({enabled} enabled)"
