"""The MCP server of `gryvia mcp`: the tools of `agents.tools` on the official `mcp` package's
MCPServer, over stdio. Read-only tools always; submit and cancel only with `allow_writes`, and
a call to them without it is refused naming the flag. Errors reach the agent as the CLI
prints them: the message, then `hint: ...`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from gryvia_cli.agents.tools import READ_TOOLS, WRITE_TOOLS, GryviaTools
from gryvia_cli.errors import GryviaError

if TYPE_CHECKING:
    from gryvia_cli.cli.session import Session

INSTRUCTIONS = (
    "Gryvia runs GPU jobs (GryviaAIJobs) on Kubernetes. Every tool answers with the user's own "
    "kubeconfig, so you see what the user may see. To find out why a job waits: queue (reason, "
    "blocker, start estimate), then status of the job (status.pending, events), then explain "
    "of its manifest (what would change). docs/agent-skill.md has the details."
)


def tool_names(allow_writes: bool) -> tuple[str, ...]:
    """The tools served: READ_TOOLS, and WRITE_TOOLS with `allow_writes`."""
    return READ_TOOLS + (WRITE_TOOLS if allow_writes else ())


def refusal(name: str) -> str:
    """Why a write tool is refused without --allow-writes, and the fix."""
    return (
        f"{name} changes the cluster and this server is read-only; "
        "hint: the user must restart it as `gryvia mcp --allow-writes` to allow submit and cancel"
    )


def error_text(exc: GryviaError) -> str:
    """What the CLI prints for an expected error, on one line: `message; hint: ...`."""
    return exc.message + (f"; hint: {exc.hint}" if exc.hint else "")


class GryviaServer(MCPServer):
    """MCPServer that refuses write tools without --allow-writes by name, and turns Gryvia's
    expected errors (forbidden, not found, invalid input) into tool errors with their hint."""

    def __init__(self, allow_writes: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.allow_writes = allow_writes

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Run a tool; raises ToolError for a write tool without --allow-writes and for an
        expected Gryvia error (its message and hint)."""
        if name in WRITE_TOOLS and not self.allow_writes:
            raise ToolError(refusal(name))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, GryviaError):
                raise ToolError(error_text(cause)) from None
            raise


def build_server(state: Session, allow_writes: bool = False) -> GryviaServer:
    """The server with the tools `tool_names(allow_writes)` over `state`."""
    from gryvia_cli import __version__

    server = GryviaServer(
        allow_writes,
        name="gryvia",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
    tools = GryviaTools(state)
    for name in tool_names(allow_writes):
        writes = name in WRITE_TOOLS
        server.add_tool(
            getattr(tools, name),
            name=name,
            annotations=ToolAnnotations(
                read_only_hint=not writes,
                destructive_hint=name == "cancel",
                idempotent_hint=not writes,
                open_world_hint=False,
            ),
            structured_output=True,
        )
    return server


def serve_stdio(state: Session, allow_writes: bool = False) -> None:
    """Serve the tools over stdin/stdout until the client closes them."""
    build_server(state, allow_writes).run("stdio")
