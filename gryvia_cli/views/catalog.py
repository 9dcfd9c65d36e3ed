"""The GPU price catalog (GryviaGpuSkus) as `catalog` and `list skus` print it."""

from __future__ import annotations

import typer

from gryvia_cli.cli.options import render_raw
from gryvia_cli.cli.session import session
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    OutputFormat,
    info,
    render_table,
)


def show_catalog(ctx: typer.Context, output: OutputFormat | None) -> None:
    """Print the SKUs as a table (or the GryviaGpuSkuList as JSON/YAML, or names)."""
    from gryvia_cli.core.catalog import sku_rows, sku_summary

    state = session(ctx)
    fmt = state.fmt(output)
    data = state.access().list_objects(r.GPUSKU)
    items = data.get("items") or []
    if render_raw(data, r.GPUSKU, fmt):
        return
    if not items:
        info("No SKUs published.")
        return
    columns = ["name", "gpu type", "gpus/unit", "rate/hour", "spot discount", "enabled"]
    if fmt is OutputFormat.wide:
        columns.append("description")
    render_table(columns, sku_rows(items, wide=fmt is OutputFormat.wide))
    info(sku_summary(items))
