"""Issue 43 point 3, acceptance: the `mcp` package's stdio client starts `gryvia mcp` against
the sandbox, lists the tools, calls queue and explain, is refused submit without
--allow-writes; an agent running as a namespace-only user (a ServiceAccount bound to the
chart's gryvia-tenant-member role in one namespace) sees that namespace's jobs only."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client, StdioServerParameters

from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import apply, manifest

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def token_kubeconfig(sandbox: SandboxHandle, path: Path, token: str) -> Path:
    """The sandbox kubeconfig with its user replaced by a bearer token."""
    config = yaml.safe_load(sandbox.kubeconfig.read_text())
    config["users"][0]["user"] = {"token": token}
    path.write_text(yaml.safe_dump(config))
    return path


def server(env: dict[str, str], *args: str) -> Client:
    """An MCP client that starts `python -m gryvia_cli ARGS mcp` as its stdio server."""
    command = [sys.executable, "-m", "gryvia_cli", *args, "mcp"]
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    return Client(params, read_timeout_seconds=60)


async def tool(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    """(is_error, structured content or the error text) of one call."""
    result = await client.call_tool(name, args)
    if result.is_error:
        return True, result.content[0].text  # type: ignore[union-attr]
    return False, result.structured_content


def waiting_job(name: str) -> dict[str, Any]:
    """A job asking for more H100s than the sandbox has: it waits."""
    return manifest(make_job(name).gpus(8).gpu_type("H100").distributed(8).obj())


async def test_mcp_over_stdio_with_the_users_rbac(
    sandbox: SandboxHandle,
    namespace: str,
    tenant_roles: None,
    cli_env: dict[str, str],
    tmp_path: Path,
) -> None:
    with sandbox.fresh_namespace("cli-other") as other:
        apply(sandbox, namespace, waiting_job("mine"))
        apply(sandbox, other, waiting_job("theirs"))
        sandbox.kubectl_run("create", "serviceaccount", "agent", "-n", namespace)
        sandbox.kubectl_run(
            "create",
            "rolebinding",
            "agent-member",
            "-n",
            namespace,
            "--clusterrole=gryvia-tenant-member",
            f"--serviceaccount={namespace}:agent",
        )
        token = sandbox.kubectl_run("create", "token", "agent", "-n", namespace).stdout.strip()
        member = token_kubeconfig(sandbox, tmp_path / "member", token)

        async with server(cli_env, "-n", namespace) as admin:
            names = {t.name for t in (await admin.list_tools()).tools}
            assert {"queue", "explain", "status", "logs"} <= names
            assert not names & {"submit", "cancel"}
            error, queue = await tool(admin, "queue", {"all_namespaces": True})
            assert not error, queue
            mine = {(i["namespace"], i["name"]): i for i in queue["items"]}
            assert {(namespace, "mine"), (other, "theirs")} <= set(mine)
            assert mine[(namespace, "mine")]["reason"]
            job = make_job("small").gpus(1).gpu_type("H100").set(timeout="1h").obj()
            job["metadata"] = {"name": "small"}
            error, explained = await tool(admin, "explain", {"manifest": yaml.safe_dump(job)})
            assert not error, explained
            assert explained["kind"] == "Explain" and explained["exitCode"] == 0
            assert explained["items"][0]["serverDryRun"]["allowed"] is True
            error, text = await tool(admin, "submit", {"manifest": yaml.safe_dump(job)})
            assert error and "--allow-writes" in text

        async with server(cli_env, "--kubeconfig", str(member), "-n", namespace) as agent:
            error, queue = await tool(agent, "queue", {"all_namespaces": True})
            assert not error, queue
            assert {(i["namespace"], i["name"]) for i in queue["items"]} == {(namespace, "mine")}
            error, status = await tool(agent, "status", {"job": "mine"})
            assert not error and status["job"]["metadata"]["name"] == "mine"
            error, text = await tool(agent, "status", {"job": "theirs", "namespace": other})
            assert error and "forbidden" in text
    names_created = sandbox.kubectl_json("get", "gryviaaijobs", "-n", namespace)["items"]
    assert [j["metadata"]["name"] for j in names_created] == ["mine"]  # explain created nothing
