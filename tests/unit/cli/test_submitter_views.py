"""USER columns and the --mine / -u filters of list jobs, queue and squeue (fake access)."""

from __future__ import annotations

import json
from typing import Any

from gryvia_operator.api.names import ANNOTATION_SUBMITTER
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import h100, make_job, run, stamp


def _job(name: str, user: str | None, phase: str = "Pending", ns: str = "ml") -> dict[str, Any]:
    builder = make_job(name, ns).gpus(8).gpu_type("H100").phase(phase)
    if user:
        builder = builder.annotate(ANNOTATION_SUBMITTER, user)
    return stamp(builder.obj(), 60)


def cluster() -> FakeAccess:
    fake = FakeAccess(
        h100("h0"),
        _job("a-run", "alice@example.com", "Running"),
        _job("a-wait", "alice@example.com"),
        _job("b-wait", "bob@example.com"),
        _job("old", None),
        _job("a-other", "alice@example.com", ns="other"),
    )
    fake.user = ("alice@example.com", ("vision", "system:authenticated"))
    return fake


def names(output: str) -> list[str]:
    return [line.split()[0] for line in output.splitlines()[1:]]


def test_list_jobs_shows_user_and_filters_mine_and_u() -> None:
    out = run(["list", "jobs"], cluster()).output.splitlines()
    assert out[0].split()[:2] == ["NAME", "USER"]
    assert [line.split()[:2] for line in out[1:]] == [
        ["a-run", "alice@example.com"],
        ["a-wait", "alice@example.com"],
        ["b-wait", "bob@example.com"],
        ["old", "-"],
    ]
    fake = cluster()
    assert names(run(["list", "jobs", "--mine"], fake).output) == ["a-run", "a-wait"]
    assert ("create", "SelfSubjectReview") in fake.calls
    every = run(["list", "jobs", "-A", "--mine"], cluster()).output.splitlines()
    assert [line.split()[1] for line in every[1:]] == ["a-run", "a-wait", "a-other"]
    assert names(run(["list", "jobs", "-u", "bob@example.com"], cluster()).output) == ["b-wait"]
    both = run(["list", "jobs", "-u", "bob@example.com,nobody", "--mine"], cluster()).output
    assert names(both) == ["a-run", "a-wait", "b-wait"]
    plain = cluster()
    run(["list", "jobs"], plain)
    assert ("create", "SelfSubjectReview") not in plain.calls  # asked only for --mine
    data = json.loads(
        run(["list", "jobs", "-u", "bob@example.com", "-o", "json"], cluster()).output
    )
    assert [i["metadata"]["name"] for i in data["items"]] == ["b-wait"]
    none = run(["list", "jobs", "-u", "carol"], cluster())
    assert none.exit_code == 0 and "No jobs found" in none.output


def test_queue_shows_user_and_filters() -> None:
    out = run(["queue"], cluster()).output.splitlines()
    assert out[0].split()[:3] == ["#", "NAME", "USER"]
    rows = {line.split()[1]: line.split()[2] for line in out[1:]}
    assert rows == {"a-wait": "alice@example.com", "b-wait": "bob@example.com", "old": "-"}
    mine = run(["queue", "--mine"], cluster()).output.splitlines()
    assert [line.split()[1] for line in mine[1:]] == ["a-wait"]
    data = json.loads(run(["queue", "-u", "bob@example.com", "-o", "json"], cluster()).output)
    assert [(i["name"], i["user"], i["position"]) for i in data["items"]] == [
        ("b-wait", "bob@example.com", 2)  # the position still counts alice's job ahead
    ]


def test_squeue_user_is_the_submitter_else_the_tenant() -> None:
    out = run(["squeue", "-o", "%i %u %a"], cluster()).output.splitlines()
    assert out[0].split() == ["JOBID", "USER", "ACCOUNT"]
    users = {line.split()[0]: line.split()[1:] for line in out[1:]}
    assert users["a-run"] == ["alice@example.com", "ml"]
    assert users["old"] == ["ml", "ml"]  # no submitter recorded: the tenant
    me = run(["squeue", "--me", "-o", "%i"], cluster()).output.split()
    assert me[0] == "JOBID" and sorted(me[1:]) == ["a-other", "a-run", "a-wait"]
    bob = run(["squeue", "-u", "bob@example.com", "-h", "-o", "%i"], cluster()).output.split()
    assert bob == ["b-wait"]
