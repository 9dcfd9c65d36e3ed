"""The Session: the global options of one invocation and what is built from them.

The root callback stores a Session in `ctx.obj`; commands take it with `session(ctx)` and ask
it for the settings, the access layer, the namespace and the output format. Tests pass their
own `Session(access_factory=...)` as `obj` to feed a fake access layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gryvia_cli.connection import Connection
from gryvia_cli.output import OutputFormat

if TYPE_CHECKING:  # the start-up fast path (`cli.fastpath`) builds a Session without Typer
    import typer


@dataclass
class Session(Connection):
    """The global options of one invocation: the connection (`connection.Connection`) plus
    the output format and colour switch."""

    output: OutputFormat | None = None
    no_color: bool = False

    def fmt(
        self, local: OutputFormat | None, default: OutputFormat = OutputFormat.table
    ) -> OutputFormat:
        """The output format: the command's `-o`, the global `-o`/GRYVIA_OUTPUT, else default."""
        return local or self.output or default


def session(ctx: typer.Context) -> Session:
    """The Session of this invocation (created on the fly when a command runs standalone)."""
    root = ctx.find_root()
    if not isinstance(root.obj, Session):
        root.obj = Session()
    return root.obj
