"""`gryvia sinfo`: GPU nodes in Slurm's sinfo layout, GPU types as partitions."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.session import session
from gryvia_cli.errors import UsageError
from gryvia_cli.output import emit

app = typer.Typer()


@app.command("sinfo", rich_help_panel="Cluster")
def sinfo(
    ctx: typer.Context,
    partition: Annotated[
        list[str] | None, typer.Option("-p", "--partition", help="Only these GPU types.")
    ] = None,
    fmt: Annotated[
        str | None, typer.Option("-o", "--format", help='sinfo format, e.g. "%P %D %t %G".')
    ] = None,
    noheader: Annotated[bool, typer.Option("-h", "--noheader", help="No header line.")] = False,
) -> None:
    """GPU nodes in Slurm's sinfo layout: GPU types as partitions.

    GPU nodes as Slurm's sinfo shows them: PARTITION AVAIL TIMELIMIT NODES STATE NODELIST,
    one line per GPU type (the partition) and node state.

    States: idle (no GPU held), mix (some), alloc (all), drain (cordoned), down (NotReady or
    gone). -o takes the field letters P a l D t T N G (GRES).

    Examples:
      gryvia sinfo
      gryvia sinfo -p H100 -o "%P %D %t %G"
    """
    from gryvia_cli.core.sinfoview import SINFO_FORMAT, SINFO_HEADERS, sinfo_rows
    from gryvia_cli.core.slurmfmt import parse_percent_format, render_percent
    from gryvia_cli.views.reads import read_supply

    parts, unknown = parse_percent_format(fmt or SINFO_FORMAT, SINFO_HEADERS)
    if unknown:
        raise UsageError(
            f"-o/--format: unknown field letter(s) {', '.join(unknown)}",
            hint=f"known: {' '.join(SINFO_HEADERS)}",
        )
    supply = read_supply(session(ctx).access())
    rows = sinfo_rows(supply.nodes, supply.allocated, partition)
    for line in render_percent(parts, rows, header=not noheader):
        emit(line)
