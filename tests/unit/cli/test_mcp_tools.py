"""Issue 43 point 3: the tools of `gryvia mcp`, through the `mcp` package's own client against
the server in-process, over the fake access layer: which tools each mode serves, their
schemas, that each tool returns what the CLI prints with -o json, and the refusals."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from mcp import Client

from gryvia_cli.agents.documents import CapacityDocument, CostDocument, QueueDocument
from gryvia_cli.agents.server import build_server, tool_names
from gryvia_cli.cli.session import Session
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import NOW, h100, make_job, make_pod, run, stamp

SKU = {
    "kind": "GryviaGpuSku",
    "apiVersion": "gryvia.io/v1alpha1",
    "metadata": {"name": "h100"},
    "spec": {"gpuType": "H100", "hourlyRate": 2},
}
READS = {"status", "queue", "explain", "capacity", "cost", "usage", "logs", "sacct"}


def cluster() -> FakeAccess:
    """One 8-GPU H100 node, a job waiting for 16 H100 and one running."""
    waiting = make_job("big").gpus(8).gpu_type("H100").distributed(2).phase("Pending")
    return FakeAccess(h100("n0"), SKU, stamp(waiting.obj(), 300))


async def call(
    fake: FakeAccess, tool: str, args: dict[str, Any], *, writes: bool = False
) -> tuple[bool, Any]:
    """(is_error, structured content or the error text) of one tool call."""
    state = Session(access_factory=lambda _s: fake, clock=lambda: NOW)
    async with Client(build_server(state, allow_writes=writes)) as client:
        result = await client.call_tool(tool, args)
    if result.is_error:
        return True, result.content[0].text  # type: ignore[union-attr]
    return False, result.structured_content


def manifest(name: str, gpus: int, gpu_type: str = "H100") -> str:
    body = make_job(name).gpus(gpus).gpu_type(gpu_type).set(timeout="1h").obj()
    body["metadata"] = {"name": name}
    return yaml.safe_dump(body)


@pytest.mark.parametrize("writes", [False, True])
async def test_read_only_by_default_writes_only_when_allowed(writes: bool) -> None:
    async with Client(build_server(Session(), allow_writes=writes)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == (READS | {"submit", "cancel"} if writes else READS)
    assert set(tools) == set(tool_names(writes))
    assert all(tools[n].annotations.read_only_hint for n in READS)  # type: ignore[union-attr]
    queue = tools["queue"]
    assert set(queue.input_schema["properties"]) == {
        "namespace",
        "all_namespaces",
        "gpu_type",
        "mine",
        "user",
    }
    assert queue.input_schema["properties"]["all_namespaces"]["type"] == "boolean"
    assert queue.output_schema is not None
    assert {"apiVersion", "kind", "items"} <= set(queue.output_schema["properties"])
    # the items' schema is the one docs/reference/json/Queue.schema.json is generated from
    assert "blocker" in queue.output_schema["$defs"]["QueueItem"]["properties"]
    assert tools["explain"].output_schema["properties"]["kind"]["const"] == "Explain"
    assert tools["logs"].input_schema["properties"]["tail"]["maximum"] == 5000
    assert tools["explain"].input_schema["required"] == ["manifest"]


def test_documents_name_the_fields_the_cli_prints() -> None:
    """The output models are the CLI documents' models (gryvia_cli.schemas): every field the
    CLI prints is named, and every required one is printed (test_json_schemas checks the rest)."""
    fake = cluster()
    for args, model in (
        (["queue", "-A"], QueueDocument),
        (["capacity"], CapacityDocument),
        (["cost"], CostDocument),
    ):
        printed = json.loads(run([*args, "-o", "json"], fake).stdout)
        fields = {f.alias or name for name, f in model.model_fields.items()}
        required = {f.alias or n for n, f in model.model_fields.items() if f.is_required()}
        assert required <= set(printed) <= fields, args


async def test_queue_returns_what_the_cli_prints() -> None:
    fake = cluster()
    error, doc = await call(fake, "queue", {"all_namespaces": True})
    assert not error
    assert doc == json.loads(run(["queue", "-A", "-o", "json"], fake).stdout)
    assert [i["name"] for i in doc["items"]] == ["big"]
    assert doc["items"][0]["reason"]


async def test_explain_a_manifest_and_invalid_ones_name_the_field() -> None:
    fake = cluster()
    before = len(fake.objects)
    error, doc = await call(fake, "explain", {"manifest": manifest("small", 2)})
    assert not error and doc["kind"] == "Explain" and doc["exitCode"] == 0
    assert doc["items"][0]["verdict"] == "start-now"
    error, never = await call(fake, "explain", {"manifest": manifest("huge", 2, "B300")})
    assert not error and never["exitCode"] == 3
    bad = yaml.safe_load(manifest("bad", 2))
    bad["spec"]["gpus"] = -1
    error, text = await call(fake, "explain", {"manifest": yaml.safe_dump(bad)})
    assert error and "spec.gpus" in text and "hint:" in text
    assert len(fake.objects) == before  # explain creates nothing


async def test_submit_refused_without_allow_writes() -> None:
    fake = cluster()
    error, text = await call(fake, "submit", {"manifest": manifest("small", 2)})
    assert error and "gryvia mcp --allow-writes" in text
    error, text = await call(fake, "cancel", {"jobs": ["big"]})
    assert error and "read-only" in text
    assert len(fake.objects) == 3 and "annotations" not in fake.objects[2]["metadata"]


async def test_submit_and_cancel_with_allow_writes() -> None:
    fake = cluster()
    error, doc = await call(fake, "submit", {"manifest": manifest("small", 2)}, writes=True)
    assert not error and [o["metadata"]["name"] for o in doc["items"]] == ["small"]
    error, text = await call(fake, "submit", {"manifest": manifest("x", 2, "B300")}, writes=True)
    assert error and "can never fit" in text and "force=true" in text
    error, doc = await call(fake, "cancel", {"jobs": ["big"]}, writes=True)
    assert not error and doc["cancelled"] == ["big"]
    job = next(o for o in fake.objects if o["metadata"]["name"] == "big")
    assert job["metadata"]["annotations"]["gryvia.io/cancel"] == "true"


async def test_errors_carry_the_cli_message_and_hint() -> None:
    error, text = await call(cluster(), "status", {"job": "nope"})
    assert error and "nope" in text
    error, text = await call(cluster(), "sacct", {"fields": "JobID,Bogus"})
    assert error and "unknown field(s) Bogus" in text and "hint: known:" in text


async def test_logs_tail_is_what_the_cli_prints_and_notes_say_why_none() -> None:
    fake = cluster().add(make_job("j").phase("Running").obj(), make_job("empty").obj())
    for index in (0, 1):
        pod = make_pod(f"j-{index}-x").job("j").obj()
        pod["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": str(index)}
        pod["status"]["containerStatuses"] = [{"name": "c", "state": {"running": {}}}]
        fake.add(pod)
        fake.logs[f"j-{index}-x"] = [f"line {n} of rank {index}" for n in range(5)]
    error, doc = await call(fake, "logs", {"job": "j", "replica": 1, "tail": 2})
    assert not error and doc["lines"] == ["line 3 of rank 1", "line 4 of rank 1"]
    printed = run(["logs", "j", "--replica", "1", "--tail", "2"], fake).stdout.splitlines()
    assert doc["lines"] == printed
    error, doc = await call(fake, "logs", {"job": "empty"})
    assert not error and doc["lines"] == []
    assert "No pods found for job empty" in doc["notes"][0]
