"""`gryvia catalog` (alias `skus`): the GPU price list (GryviaGpuSku)."""

from __future__ import annotations

import typer

from gryvia_cli.cli.options import OutputOpt
from gryvia_cli.views.catalog import show_catalog

app = typer.Typer()


@app.command("catalog", rich_help_panel="Cluster")
def catalog(ctx: typer.Context, output: OutputOpt = None) -> None:
    """The GPU price catalog (GryviaGpuSku).

    Columns: NAME, GPU TYPE, GPUs/UNIT, RATE/HOUR, SPOT DISCOUNT, ENABLED.

    Rates are per GPU-hour. Defaults when a field is absent: 1 GPU per unit, USD, no spot
    discount, enabled.

    Examples:
      gryvia catalog
      gryvia catalog -o json | jq '.items[] | {name: .metadata.name, rate: .spec.hourlyRate}'
    """
    show_catalog(ctx, output)
