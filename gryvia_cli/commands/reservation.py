"""`gryvia reservation create|list|get|delete`: GPU reservations (not built yet).

The FAQ shows `gryvia reservation create`; the GryviaReservation CRD exists, but no controller
claims nodes for it yet. Until one does, the command says so in one line and exits 1.
"""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.errors import GryviaError

app = typer.Typer(help="GPU reservations (needs a part not built yet).")
NEEDS = (
    "gryvia reservation needs the reservation controller (it claims and taints the nodes of a "
    "GryviaReservation), which this version of Gryvia does not have yet"
)


@app.command(
    "reservation", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def reservation(
    args: Annotated[
        list[str] | None, typer.Argument(help="create|list|get|delete and its options.")
    ] = None,
) -> None:
    """GPU reservations (not built yet: says what it needs).

    `gryvia reservation create ...` would reserve GPU nodes for a team for a time window.

    Not built yet: prints which part it needs and exits 1. The GryviaReservation CRD is
    installed (`kubectl get gryviareservations`), but nothing acts on it.
    """
    raise GryviaError(NEEDS)
