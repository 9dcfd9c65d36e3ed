"""The Python API (`gryvia.Client`) against the sandbox, with nothing but the API: a 2-replica
job submitted as a dict, its logs followed to its end, waited for; and the same queue
reasons as `gryvia queue -o json` for the same cluster."""

from __future__ import annotations

import json
from typing import Any

import pytest

import gryvia
from tests.builders import job_yaml, make_job
from tests.integration.cli.conftest import CliCase, apply
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _two_replicas(name: str) -> dict[str, Any]:
    import yaml

    script = 'echo "rank $JOB_COMPLETION_INDEX up"; sleep 2; echo "rank $JOB_COMPLETION_INDEX done"'
    two_nodes = "  distributed:\n    enabled: true\n    nodes: 2\n"
    text = job_yaml(
        name, gpus=0, gpu_type=None, image="python:3.12-slim", script=script, extra=two_nodes
    )
    return dict(yaml.safe_load(text))


def test_submit_follow_the_logs_and_wait_through_the_api_only(case: CliCase) -> None:
    client = gryvia.Client(kubeconfig=case.sandbox.kubeconfig, namespace=case.namespace)
    [ref] = client.submit(_two_replicas("api-ddp"))
    assert (ref.namespace, ref.name) == (case.namespace, "api-ddp")

    lines = list(client.logs("api-ddp", follow=True, all_replicas=True, tail=None))
    assert sorted(lines) == ["[0] rank 0 done", "[0] rank 0 up", "[1] rank 1 done", "[1] rank 1 up"]
    done = client.wait("api-ddp", timeout=120)
    assert done.phase == "Succeeded" and done.pods == 2
    # the logs of an ended job read the same way, and the watch ends on the terminal phase
    assert sorted(client.logs("api-ddp", all_replicas=True, tail=None)) == sorted(lines)
    assert [j.phase for j in client.watch("api-ddp", timeout=30)] == ["Succeeded"]

    with pytest.raises(gryvia.NotFoundError, match="no-such-job"):
        client.wait("no-such-job", timeout=10)
    with pytest.raises(gryvia.InvalidManifestError) as bad:
        client.submit({**_two_replicas("bad"), "spec": {"type": "training", "gpus": -1}})
    assert any("spec" in p for p in bad.value.problems)
    assert client.cancel("api-ddp").requested is False  # already Succeeded: nothing to do


def _reasons(items: list[dict[str, Any]]) -> dict[str, tuple[int, str, Any]]:
    return {i["name"]: (i["position"], i["reason"], i["blocker"]) for i in items}


def test_the_cli_and_the_api_give_the_same_queue_reasons(case: CliCase) -> None:
    def job(name: str, gpus: int, gpu_type: str, **spec: Any) -> dict[str, Any]:
        builder = make_job(name).gpus(gpus).gpu_type(gpu_type).command("sleep", "600")
        return builder.set(**spec).manifest()

    apply(
        case.sandbox,
        case.namespace,
        job("wants-b200", 8, "B200"),
        job("held", 8, "H100", suspend=True),
    )
    client = gryvia.Client(kubeconfig=case.sandbox.kubeconfig)

    def agreed() -> tuple[dict[str, Any], dict[str, Any]] | None:
        before = _reasons([e.as_dict() for e in client.queue(namespace=case.namespace)])
        shown = case.gryvia("queue", "-n", case.namespace, "-o", "json")
        assert shown.returncode == 0, shown.stderr
        cli = _reasons(json.loads(shown.stdout)["items"])
        after = _reasons([e.as_dict() for e in client.queue(namespace=case.namespace)])
        # the operator may write a blocker between two reads: compare a quiet moment
        return (before, cli) if before == after and set(cli) == {"wants-b200", "held"} else None

    api, cli = wait_for(agreed, timeout=60, what="two API reads around a CLI read agreeing")
    assert api == cli
    assert 'no node has GPU type "B200"' in api["wants-b200"][1]
