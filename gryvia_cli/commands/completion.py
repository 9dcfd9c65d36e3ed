"""`gryvia completion bash|zsh|fish`: print the shell completion script."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

app = typer.Typer()


class Shell(StrEnum):
    """Shells with a completion script."""

    bash = "bash"
    zsh = "zsh"
    fish = "fish"


@app.command("completion", rich_help_panel="Utilities")
def completion(shell: Annotated[Shell, typer.Argument(help="bash, zsh or fish.")]) -> None:
    """Print a shell completion script (no cluster needed).

    Examples:
      gryvia completion bash > ~/.local/share/bash-completion/completions/gryvia
      gryvia completion zsh > "${fpath[1]}/_gryvia"
      gryvia completion fish > ~/.config/fish/completions/gryvia.fish
    """
    from typer._completion_shared import get_completion_script

    script = get_completion_script(
        prog_name="gryvia", complete_var="_GRYVIA_COMPLETE", shell=shell.value
    )
    typer.echo(script)
