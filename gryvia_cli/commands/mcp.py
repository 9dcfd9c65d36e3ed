"""`gryvia mcp`: serve Gryvia's tools to AI agents over the Model Context Protocol (stdio)."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.options import NamespaceOpt
from gryvia_cli.cli.session import session
from gryvia_cli.errors import NotInstalledError

app = typer.Typer()


@app.command("mcp", rich_help_panel="Utilities")
def mcp(
    ctx: typer.Context,
    allow_writes: Annotated[
        bool,
        typer.Option(
            "--allow-writes",
            help="Also serve the tools that change the cluster: submit and cancel.",
        ),
    ] = False,
    namespace: NamespaceOpt = None,
) -> None:
    """Serve Gryvia's tools to AI agents over MCP (stdio).

    Speaks the Model Context Protocol on stdin and stdout (the official `mcp` package) until
    the client closes them; an MCP client (an agent, an IDE) starts it as a subprocess.
    Read-only tools: status (one job), queue (waiting jobs with reasons and start
    estimates), explain (a manifest, as submit --explain), capacity, cost, usage, logs (the
    last lines) and sacct. submit and cancel are served only with --allow-writes; without it
    a call to them is refused and says so.

    Every call uses this command's kubeconfig, --context and -n, so the API server's RBAC
    decides what an agent may read or change; each tool returns what the command of its
    name prints with -o json, from the same code (docs/agent-skill.md). Needs the `mcp`
    extra: pip install 'gryvia[mcp]'.

    Examples:
      gryvia mcp
      gryvia --context prod -n team-a mcp
      gryvia mcp --allow-writes

    Client configuration (Claude Desktop, VS Code, ...):
      {"command": "gryvia", "args": ["--context", "prod", "mcp"]}
    """
    try:
        from gryvia_cli.agents.server import serve_stdio
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        raise NotInstalledError(
            "gryvia mcp needs the Model Context Protocol package, which is not installed",
            hint="pip install 'gryvia[mcp]'",
        ) from None
    state = session(ctx)
    if namespace:
        state.namespace = namespace
    serve_stdio(state, allow_writes)
