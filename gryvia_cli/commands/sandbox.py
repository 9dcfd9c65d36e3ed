"""`gryvia sandbox`: a real local Kubernetes control plane with simulated GPU nodes."""

from __future__ import annotations

import typer

app = typer.Typer(help="Run a local sandbox cluster with simulated GPU nodes.", no_args_is_help=True)


@app.command()
def status() -> None:
    """Show the sandbox clusters and their state."""
    typer.echo("no sandbox running")
