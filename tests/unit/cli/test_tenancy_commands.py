"""`gryvia tenant` and `gryvia quota` through CliRunner with a fake access layer
(tests/integration/cli/test_tenancy_cli.py covers the real API server).

`TenancyFake`, `run` and `cluster` also feed test_tenancy_reports.py.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from gryvia_cli.cli.session import Session
from gryvia_cli.kube import resources as r
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.test_tenancy_core import CATALOG, quota, record, tenant

WEDNESDAY = dt.datetime(2026, 11, 18, 15, 30, tzinfo=dt.UTC)


class TenancyFake(FakeAccess):
    """FakeAccess with server-side apply (replaces the object's spec, keeps its status)."""

    def __init__(self, *objects: dict[str, Any]) -> None:
        super().__init__(*objects)
        self.applied: list[tuple[str, bool, dict[str, Any]]] = []

    def apply(
        self,
        res: r.Resource,
        body: dict[str, Any],
        namespace: str | None = None,
        *,
        field_manager: str = "gryvia-cli",
        force: bool = True,
    ) -> dict[str, Any]:
        self._check(res, "apply")
        self.applied.append((field_manager, force, copy.deepcopy(body)))
        name = body["metadata"]["name"]
        for obj in self._of(res):
            if obj["metadata"]["name"] == name:
                obj["spec"] = copy.deepcopy(body["spec"])
                return copy.deepcopy(obj)
        return self.create(res, body, namespace)


def run(args: list[str], fake: FakeAccess, now: dt.datetime = WEDNESDAY, **kw: Any) -> Result:
    """Invoke gryvia with the fake and a fixed clock."""
    from gryvia_cli.main import app

    state = Session(access_factory=lambda _s: fake, clock=lambda: now)
    return CliRunner().invoke(app, args, obj=state, **kw)


VISION = tenant(
    "vision",
    displayName="Vision team",
    allowedSkus=["a100-80g"],
    quotas={"concurrentGPUs": 16},
    deletionPolicy="Delete",
    status={"health": "warning", "namespacesManaged": ["tenant-vision"]},
)
NLP = tenant("nlp")
VISION_QUOTA = quota(
    "vision-quota",
    "vision",
    ["tenant-vision"],
    maxGPUsPerJob=8,
    maxRunningJobs=4,
    allowedGPUTypes=["A100-80G"],
    budget={"monthlyBudget": 1000, "alertThreshold": 80, "hardLimit": True},
    status={
        "phase": "Active",
        "currentUsage": {"allocatedGPUs": 8, "runningJobs": 1, "queuedJobs": 2, "gpuHours": 12.5},
        "budgetStatus": {
            "spentThisMonth": 850.0,
            "remainingBudget": 150.0,
            "percentUsed": 85.0,
            "projectedSpend": 1470.0,
        },
    },
)
ML_QUOTA = quota("ml-quota", "ml", ["ml"], max_gpus=8)
RECORDS = [
    record("vision", "today", "2026-11-18T09:00:00Z", 8.0, end="2026-11-18T10:00:00Z"),
    record("vision", "monday", "2026-11-16T09:00:00Z", 16.0, end="2026-11-16T11:00:00Z"),
    record("nlp", "n1", "2026-11-02T12:00:00Z", 4.0, rate=2.5, sku_name="l40", gpu_type="L40"),
    record("vision", "october", "2026-10-30T09:00:00Z", 80.0, end="2026-10-30T19:00:00Z"),
]


def cluster() -> TenancyFake:
    return TenancyFake(VISION, NLP, VISION_QUOTA, ML_QUOTA, *CATALOG, *RECORDS)


# -- tenant ------------------------------------------------------------------------------------


def test_tenant_create_applies_only_the_given_fields() -> None:
    fake = TenancyFake()
    result = run(
        [
            "tenant",
            "create",
            "vision",
            "--display-name",
            "Vision team",
            "--allowed-sku",
            "a100-80g",
            "--max-gpus",
            "16",
            "--isolated",
            "--member",
            "alice:admin",
            "--member",
            "bob",
            "--deletion-policy",
            "Delete",
        ],
        fake,
    )
    assert result.exit_code == 0, result.output
    assert "tenant vision applied; its namespace is tenant-vision" in result.output
    assert "gryviatenant.gryvia.io/vision" in result.output
    manager, force, body = fake.applied[0]
    assert (manager, force) == ("gryvia-cli", True)
    assert body["spec"] == {
        "displayName": "Vision team",
        "allowedSkus": ["a100-80g"],
        "quotas": {"concurrentGPUs": 16},
        "networkPolicy": {"isolated": True},
        "members": [
            {"username": "alice", "role": "admin"},
            {"username": "bob", "role": "viewer"},
        ],
        "deletionPolicy": "Delete",
    }
    # the FAQ's way to update a tenant: the options given change, the others keep their values
    again = run(["tenant", "create", "vision", "--no-isolated", "-o", "json"], fake)
    assert again.exit_code == 0
    assert fake.applied[1][2]["spec"] == body["spec"] | {"networkPolicy": {"isolated": False}}
    run(["tenant", "create", "vision", "--max-gpus", "32", "--display-name", "Vision"], fake)
    assert fake.applied[2][2]["spec"]["displayName"] == "Vision"
    assert fake.applied[2][2]["spec"]["quotas"] == {"concurrentGPUs": 32}
    assert fake.applied[2][2]["spec"]["members"] == body["spec"]["members"]
    assert json.loads(again.stdout)["metadata"]["name"] == "vision"


@pytest.mark.parametrize(
    ("written", "isolated"),
    [(["--isolated", "true"], True), (["--isolated=false"], False), (["--isolated", "No"], False)],
)
def test_tenant_create_takes_the_faqs_isolated_true(written: list[str], isolated: bool) -> None:
    # The FAQ's own line: gryvia tenant create ml-research --display-name "ML Research Team"
    #   --allowed-sku a100-80g --max-gpus 128 --isolated true
    fake = TenancyFake()
    args = ["tenant", "create", "ml-research", "--display-name", "ML Research Team"]
    result = run([*args, "--allowed-sku", "a100-80g", "--max-gpus", "128", *written], fake)
    assert result.exit_code == 0, result.output
    assert fake.applied[0][2]["spec"]["networkPolicy"] == {"isolated": isolated}
    assert fake.applied[0][2]["spec"]["quotas"] == {"concurrentGPUs": 128}


def test_tenant_create_names_the_flag_for_a_value_that_is_not_boolean() -> None:
    fake = TenancyFake()
    result = run(["tenant", "create", "a", "--isolated=maybe"], fake)
    assert result.exit_code == 2
    assert "'maybe' is not true or false; write --isolated or --no-isolated" in result.output
    assert fake.applied == []


def test_fold_bool_values_stops_at_the_separator() -> None:
    from gryvia_cli.cli.flags import fold_bool_values

    flags = {"--isolated": "--no-isolated"}
    assert fold_bool_values(["a", "--isolated", "off", "--", "--isolated", "on"], flags) == [
        "a",
        "--no-isolated",
        "--",
        "--isolated",
        "on",
    ]
    assert fold_bool_values(["--isolated", "x"], flags) == ["--isolated", "x"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["Vision"], 'tenant name "Vision" is invalid: use lowercase letters'),
        (["a" * 57], "at most 56 characters"),
        (["a-"], "not starting or ending with '-'"),
        (["ok", "--member", "alice:boss"], "use USER or USER:ROLE"),
    ],
)
def test_tenant_create_rejects_bad_input(args: list[str], message: str) -> None:
    fake = TenancyFake()
    result = run(["tenant", "create", *args], fake)
    assert result.exit_code == 2
    assert message in result.output
    assert fake.applied == []


def test_tenant_create_rejects_unknown_policy_and_negative_gpus() -> None:
    assert (
        run(["tenant", "create", "a", "--deletion-policy", "Purge"], TenancyFake()).exit_code == 2
    )
    assert run(["tenant", "create", "a", "--max-gpus", "-1"], TenancyFake()).exit_code == 2


def test_tenant_list_table_and_json() -> None:
    result = run(["tenant", "list"], cluster())
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "NAME",
        "DISPLAY",
        "NAME",
        "HEALTH",
        "MAX",
        "GPUS",
        "SKUS",
        "NAMESPACE",
    ]
    assert lines[1].split() == ["nlp", "-", "-", "unlimited", "all", "tenant-nlp"]
    assert lines[2].split() == [
        "vision",
        "Vision",
        "team",
        "warning",
        "16",
        "a100-80g",
        "tenant-vision",
    ]
    assert "Total: 2 tenant(s)" in result.stderr
    data = json.loads(run(["tenant", "list", "-o", "json"], cluster()).stdout)
    assert data["kind"] == "GryviaTenantList"
    assert sorted(i["metadata"]["name"] for i in data["items"]) == ["nlp", "vision"]
    assert "No tenants found" in run(["tenant", "list"], TenancyFake()).stderr


def test_tenant_get_for_people_and_machines() -> None:
    result = run(["tenant", "get", "vision"], cluster())
    assert result.exit_code == 0, result.output
    assert "Namespace:" in result.stdout and "tenant-vision" in result.stdout
    assert "Deletion policy:" in result.stdout and "Delete" in result.stdout
    assert yaml.safe_load(run(["tenant", "get", "vision", "-o", "yaml"], cluster()).stdout)["spec"][
        "allowedSkus"
    ] == ["a100-80g"]
    assert (
        json.loads(run(["tenant", "get", "nlp", "-o", "json"], cluster()).stdout)["metadata"][
            "name"
        ]
        == "nlp"
    )
    missing = run(["tenant", "get", "nope"], cluster())
    assert missing.exit_code == 1
    assert 'error: tenant "nope" not found' in missing.output
    assert "hint: see 'gryvia tenant list'" in missing.output


def test_tenant_delete_says_what_happens_to_the_namespace_before_asking() -> None:
    fake = cluster()
    kept = run(["tenant", "delete", "nlp", "--yes"], fake)
    assert kept.exit_code == 0, kept.output
    assert "namespace tenant-nlp is kept; its tenant labels are removed" in kept.stderr
    assert "may" not in kept.stderr
    gone = run(["tenant", "delete", "vision", "--yes"], fake)
    assert "namespace tenant-vision and everything in it will be deleted" in gone.stderr
    assert [o["metadata"]["name"] for o in fake._of(r.TENANT)] == []


def test_tenant_delete_prompt_comes_after_the_message(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from gryvia_cli.commands import tenant as tenant_cmd

    def decline(question: str, yes: bool) -> bool:
        sys.stderr.write(f"asked: {question}\n")
        return False

    monkeypatch.setattr(tenant_cmd, "confirm", decline)
    fake = cluster()
    declined = run(["tenant", "delete", "vision"], fake)
    assert declined.exit_code == 1
    out = declined.output
    assert out.index("will be deleted") < out.index("asked: Delete tenant vision?")
    assert len(fake._of(r.TENANT)) == 2


# -- quota -------------------------------------------------------------------------------------


def test_quota_report_with_budget() -> None:
    result = run(["quota", "vision", "--budget"], cluster())
    assert result.exit_code == 0, result.output
    out = result.stdout
    for text in (
        "━━━ Quota: vision ━━━",
        "Allocated GPUs:     8/16 (50%)",
        "Max GPUs per job:   8",
        "Running jobs:       1/4",
        "Queued jobs:        2 (no limit)",
        "Allowed GPU types:  A100-80G",
        "GPU hours (month):  12.50",
        "Spent:              850.00 USD",
        "Remaining:          150.00 USD",
        "Used:               85.0%",
        "Projected:          1470.00 USD",
        "Hard limit:         yes",
        "⚠ alert threshold (80%) reached",
        "Status:             Active",
    ):
        assert text in out, text
    assert "ml" not in out.split("━━━ Quota: vision ━━━")[0]
    plain = run(["quota"], cluster())
    assert "━━━ Quota: ml ━━━" in plain.stdout and "Spent:" not in plain.stdout


def test_quota_json_and_unknown_team() -> None:
    data = json.loads(run(["quota", "vision", "-o", "json"], cluster()).stdout)
    assert [i["spec"]["team"] for i in data["items"]] == ["vision"]
    missing = run(["quota", "nope"], cluster())
    assert missing.exit_code == 1
    assert "error: no quota for team nope" in missing.output
    assert "hint: see 'gryvia quota'" in missing.output
    assert "No quotas found" in run(["quota"], TenancyFake()).stderr
