"""`gryvia gpu training|nccl --job JOB`: GPU training and NCCL insights (not built yet).

The FAQ shows these commands; they read the network-intelligence collector's telemetry, which
Gryvia does not have. Until it exists the command says so in one line and exits 1, whatever
its arguments, instead of failing as an unknown command.
"""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.errors import GryviaError

app = typer.Typer(help="GPU training and NCCL insights (needs a part not built yet).")
NEEDS = (
    "gryvia gpu needs the network-intelligence collector (GPU and NCCL telemetry per job), "
    "which this version of Gryvia does not have yet"
)


@app.command("gpu", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def gpu(
    args: Annotated[list[str] | None, typer.Argument(help="training|nccl and its options.")] = None,
) -> None:
    """GPU training and NCCL insights (not built yet: says what it needs).

    `gryvia gpu training --job JOB`, `gryvia gpu nccl --job JOB`.

    Not built yet: prints which part it needs and exits 1. `gryvia status JOB` and
    `gryvia health gpu` show what Gryvia knows about a job's pods and GPU nodes today.
    """
    raise GryviaError(NEEDS)
