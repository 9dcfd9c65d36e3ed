"""`gryvia sacct` remembers (issue 39, point 4): a job runs and fails, the operator keeps its
GryviaJobRecord, the job is deleted, and sacct still shows it with its state and exit code;
-S/-E/-u/-A filter it in and out as Slurm's sacct does."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.builders import job_yaml
from tests.integration.cli.conftest import CliCase, kubectl_json, wait_for_phase
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S")


def test_a_deleted_job_stays_in_sacct_with_state_and_exit_code(case: CliCase) -> None:
    sandbox, ns, gryvia = case.sandbox, case.namespace, case.gryvia
    path = case.tmp_path / "gone.yaml"
    path.write_text(job_yaml("gone", image="none", command=None, script="echo bye; exit 3"))
    assert gryvia("submit", "-f", str(path), "-n", ns).returncode == 0
    uid = wait_for_phase(sandbox, ns, "gone", "Failed")["metadata"]["uid"]

    def recorded() -> dict[str, Any] | None:
        items = kubectl_json(sandbox, "get", "gryviajobrecords", "-n", ns)["items"]
        return next((i for i in items if i["metadata"]["name"] == f"job-{uid}"), None)

    record = wait_for(recorded, timeout=60, interval=0.5, what="the job record of gone")
    raw = sandbox.kubectl_run(
        "get", "gryviajobrecord", f"job-{uid}", "-n", ns, "-o", "json", "--show-managed-fields"
    )
    assert "managedFields" not in json.loads(raw.stdout)["metadata"]  # cleared after the create
    sandbox.kubectl_run("delete", "gryviaaijob", "gone", "-n", ns, "--wait=true")
    spec = record["spec"]
    ended = datetime.fromisoformat(spec["ended"].replace("Z", "+00:00"))
    submitted = datetime.fromisoformat(spec["submitted"].replace("Z", "+00:00"))
    day = _iso(ended - timedelta(days=1))

    def rows(*args: str) -> list[str]:
        got = gryvia("sacct", "-o", "JobID%30,State,ExitCode,Account,Log", "-P", "-n", *args)
        assert got.returncode == 0, got.stderr
        return got.stdout.splitlines()

    shown = [f"gone|FAILED|3:0|{spec['tenant']}|no"]
    tenant = spec["tenant"]
    # the saved log goes with the job, through the garbage collector (after the delete returns)
    wait_for(
        lambda: rows("-A", tenant, "-S", day, "-E", "now") == shown,
        timeout=60,
        what="the deleted job shown, its saved log gone",
    )
    assert rows("-u", tenant, "-S", day, "-E", "now", "-s", "F") == shown  # a tenant's name
    assert rows("-A", tenant, "-S", _iso(ended + timedelta(seconds=2))) == []  # ended before
    assert rows("-A", tenant, "-S", day, "-E", _iso(submitted - timedelta(seconds=2))) == []
    # the submitter, when the webhook stamped one (within the tenant: other tests' jobs in
    # this shared sandbox have the same submitter)
    assert rows("-A", tenant, "-u", spec.get("user") or "nobody-at-all", "-S", day) == (
        shown if spec.get("user") else []
    )
    assert rows("-A", "no-such-tenant", "-u", "nobody", "-S", day) == []


def test_records_past_the_retention_fold_into_their_month_and_sacct_says_so(
    case: CliCase,
) -> None:
    """The roll-up pass (every 3 s under the suite, hourly by default): two records of a
    tenant that ended 200 days ago (past the 90-day retention) become one month roll-up with
    their counts, GPU-hours and cost, and are deleted; sacct over that month names it."""
    sandbox, ns, gryvia = case.sandbox, case.namespace, case.gryvia
    tenant = f"old{ns[-6:]}"
    ended = datetime.now(UTC).replace(microsecond=0) - timedelta(days=200)
    month = ended.strftime("%Y-%m")
    for n, (phase, hours, cost) in enumerate((("Succeeded", 2.5, "10.00"), ("Failed", 1, "4.25"))):
        sandbox.apply(
            {
                "apiVersion": "gryvia.io/v1alpha1",
                "kind": "GryviaJobRecord",
                "metadata": {"name": f"job-old-{n}", "namespace": ns},
                "spec": {
                    "tenant": tenant,
                    "job": f"old-{n}",
                    "jobUID": f"old-{n}",
                    "phase": phase,
                    "submitted": _iso(ended - timedelta(hours=2)) + "Z",
                    "started": _iso(ended - timedelta(hours=1)) + "Z",
                    "ended": _iso(ended - timedelta(minutes=n)) + "Z",
                    "gpus": 1,
                    "pods": 1,
                    "gpuHours": hours,
                    "cost": cost,
                },
            }
        )

    def rolled() -> dict[str, Any] | None:
        items = kubectl_json(sandbox, "get", "gryviajobrecords", "-n", ns)["items"]
        names = {i["metadata"]["name"]: i for i in items}
        if "job-old-0" in names or "job-old-1" in names:
            return None
        return names.get(f"rollup-{tenant}-{month}")

    rollup = wait_for(rolled, timeout=60, interval=0.5, what="the month roll-up")["spec"]
    assert rollup["rollup"]["jobs"] == 2
    assert rollup["rollup"]["states"] == {"Succeeded": 1, "Failed": 1}
    assert (rollup["gpuHours"], rollup["cost"]) == (3.5, "14.2500")
    got = gryvia("sacct", "-A", tenant, "-S", _iso(ended - timedelta(days=1)), "-P", "-n")
    assert got.returncode == 0, got.stderr
    assert got.stdout == ""  # no job is listed one by one any more
    assert f"jobs of account {tenant} that ended in {month}" in got.stderr
    assert "2 jobs" in got.stderr and "3.50 GPU-hours" in got.stderr
