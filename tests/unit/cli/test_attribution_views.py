"""One tenant per job in every view: `queue` attributes a job with the operator's rule, and
`cost`, `usage` and `invoice` count its usage record (written by the operator's metering
builder) for that same tenant. The case that matters: a job labelled `gryvia.io/team: b` in the
namespace `tenant-a` while tenants a and b both exist belongs to a."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from gryvia_cli.core import billing, cost
from gryvia_cli.core.jobs import summarize_job
from gryvia_cli.core.queue import build_queue, namespace_labels_needed, queue_row, with_tenants
from gryvia_operator.api import GryviaAIJob, GryviaTenant, GryviaUsageRecord
from gryvia_operator.api.attribution import tenant_of_object
from gryvia_operator.api.names import LABEL_TEAM, LABEL_TENANT
from gryvia_operator.api.pricing import Rate
from gryvia_operator.reconcile.metering import build_usage_record
from tests.unit.cli.helpers import NOW, make_job, stamp
from tests.unit.cli.test_tenancy_commands import TenancyFake, run
from tests.unit.cli.test_tenancy_core import tenant

TENANTS = {"a", "b"}
START = NOW - dt.timedelta(hours=2)
RATE = Rate(sku="h100", gpu_type="H100", per_gpu_hour=3.0)


def team_job(name: str, namespace: str, team: str, gpus: int = 8) -> dict[str, Any]:
    """A waiting job in `namespace` labelled `gryvia.io/team: <team>`, created a minute ago."""
    obj = stamp(make_job(name, namespace).gpus(gpus).obj(), 60)
    obj["metadata"].setdefault("labels", {})[LABEL_TEAM] = team
    return obj


def labelled_b_in_tenant_a(name: str = "train", namespace: str = "tenant-a") -> dict[str, Any]:
    """A waiting 8-GPU job labelled team b in `namespace`."""
    return team_job(name, namespace, "b")


def namespace(name: str, **labels: str) -> dict[str, Any]:
    """A v1 Namespace with labels."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def metered(job: dict[str, Any], tenants: set[str]) -> dict[str, Any]:
    """The usage record the operator writes for `job` after two hours of running: its own
    builder, fed with the tenant its own rule gives."""
    ran = {**job, "metadata": {**job["metadata"], "uid": f"uid-{job['metadata']['name']}"}}
    ran["status"] = {"phase": "Running", "startTime": START.strftime("%Y-%m-%dT%H:%M:%SZ")}
    record = build_usage_record(
        GryviaAIJob.model_validate(ran),
        tenant=tenant_of_object(ran, tenants),
        rate=RATE,
        gpu_type="H100",
        now=NOW,
    )
    assert record is not None
    return record


# -- queue -------------------------------------------------------------------------------------


def test_queue_attributes_a_job_in_a_tenant_namespace_to_that_tenant() -> None:
    jobs = [
        labelled_b_in_tenant_a(),
        labelled_b_in_tenant_a("elsewhere", "ml"),
        stamp(make_job("plain", "research").gpus(1).obj(), 30),
        stamp(make_job("orphan", "tenant-gone").gpus(1).obj(), 20),
    ]
    entries = build_queue([summarize_job(j) for j in jobs], [], {}, {}, NOW)
    labels = {"research": {LABEL_TENANT: "c"}}
    tenants = {e.job.name: e.tenant for e in with_tenants(entries, jobs, TENANTS, labels)}
    assert tenants == {"train": "a", "elsewhere": "b", "plain": "c", "orphan": "tenant-gone"}
    train = next(e for e in with_tenants(entries, jobs, TENANTS) if e.job.name == "train")
    assert train.as_dict()["tenant"] == "a"
    assert queue_row(train, all_namespaces=True, wide=True)[1:5] == ["tenant-a", "train", "-", "a"]
    assert entries[0].as_dict()["tenant"] is None  # not attributed: no tenant claimed


def test_namespace_labels_are_needed_only_without_a_tenant_namespace_or_team_label() -> None:
    assert not namespace_labels_needed([labelled_b_in_tenant_a()], TENANTS)
    assert not namespace_labels_needed([labelled_b_in_tenant_a("x", "ml")], TENANTS)
    assert namespace_labels_needed([make_job("x", "tenant-a").obj()], set())


def test_queue_command_shows_the_tenant_in_json_and_wide() -> None:
    fake = TenancyFake(tenant("a"), tenant("b"), labelled_b_in_tenant_a())
    data = json.loads(run(["queue", "-A", "-o", "json"], fake, now=NOW).output)
    assert [(i["name"], i["tenant"]) for i in data["items"]] == [("train", "a")]
    # namespace labels are read beside the other reads (most queues need them), once
    assert fake.calls.count(("list", "Namespace")) == 1
    wide = run(["queue", "-A", "-o", "wide"], fake, now=NOW).output.splitlines()
    assert wide[0].split()[:5] == ["#", "NAMESPACE", "NAME", "USER", "TENANT"]
    assert wide[1].split()[:5] == ["1", "tenant-a", "train", "-", "a"]
    assert "TENANT" not in run(["queue", "-A"], fake, now=NOW).output


def test_queue_command_falls_back_when_tenants_or_namespaces_are_forbidden() -> None:
    fake = TenancyFake(
        tenant("a"),
        labelled_b_in_tenant_a(),
        stamp(make_job("plain", "research").gpus(1).obj(), 30),
        namespace("research", **{LABEL_TEAM: "vision"}),
    )
    data = json.loads(run(["queue", "-A", "-o", "json"], fake, now=NOW).output)
    assert {i["name"]: i["tenant"] for i in data["items"]} == {"train": "a", "plain": "vision"}
    fake.forbidden = {"GryviaTenant", "Namespace"}
    result = run(["queue", "-A", "-o", "json"], fake, now=NOW)
    assert result.exit_code == 0, result.output
    items = {i["name"]: i["tenant"] for i in json.loads(result.stdout)["items"]}
    assert items == {"train": "b", "plain": "research"}


# -- cost, usage, invoice ----------------------------------------------------------------------


def test_usage_of_a_job_in_a_tenant_namespace_counts_for_that_tenant_everywhere() -> None:
    raw = metered(labelled_b_in_tenant_a(), TENANTS)
    assert raw["spec"]["tenant"] == "a"
    records = [GryviaUsageRecord.model_validate(raw)]
    rows, total = billing.aggregate(records, "tenant")
    assert [(r.key, r.cost) for r in rows] == [("a", 48.0)] and total.cost == 48.0
    assert [i["tenant"] for i in billing.invoices(records, f"{NOW:%Y-%m}", now=NOW)] == ["a"]
    tenants = [GryviaTenant.model_validate(tenant(name)) for name in sorted(TENANTS)]
    spent = {c.team: c.spent for c in cost.team_costs(cost.team_scopes([], tenants), records,
                                                      "month", NOW)}  # fmt: skip
    assert spent == {"a": 48.0, "b": 0.0}


def test_cost_counts_a_tenant_s_usage_outside_its_namespace_like_usage_does() -> None:
    raw = metered(team_job("t", "ml", "b"), TENANTS)
    assert raw["spec"]["tenant"] == "b" and raw["metadata"]["namespace"] == "ml"
    records = [GryviaUsageRecord.model_validate(raw)]
    tenants = [GryviaTenant.model_validate(tenant(name)) for name in sorted(TENANTS)]
    costs = cost.team_costs(cost.team_scopes([], tenants), records, "month", NOW)
    assert {c.team: c.spent for c in costs} == {"a": 0.0, "b": 48.0}
    assert billing.aggregate(records, "tenant")[0][0].key == "b"


def test_cost_and_usage_commands_agree_on_the_tenant() -> None:
    record = metered(labelled_b_in_tenant_a(), TENANTS)
    fake = TenancyFake(tenant("a"), tenant("b"), record)
    costs = json.loads(run(["cost", "-o", "json"], fake, now=NOW).output)
    assert {i["team"]: i["spent"] for i in costs["items"]} == {"a": 48.0, "b": 0.0}
    usage = json.loads(run(["usage", "-o", "json"], fake, now=NOW).output)
    assert [(i["tenant"], i["cost"]) for i in usage["items"]] == [("a", 48.0)]
    invoices = json.loads(run(["invoice", "-o", "json"], fake, now=NOW).output)
    assert [(i["tenant"], i["subtotal"]) for i in invoices["items"]] == [("a", 48.0)]


def test_cost_shows_allocated_and_active_gpu_hours_and_the_idle_cost_of_sampled_runs() -> None:
    record = metered(labelled_b_in_tenant_a(), TENANTS)
    record["spec"]["activeGPUHours"] = 4.0  # a quarter of its 16 GPU-hours busy
    fake = TenancyFake(tenant("a"), tenant("b"), record)
    table = run(["cost"], fake, now=NOW).output
    header, row_a = table.splitlines()[1], table.splitlines()[2]
    assert header.split()[-7:] == ["GPU", "HOURS", "ACTIVE", "GPU", "HOURS", "IDLE", "COST"]
    assert row_a.split()[-4:] == ["16.0000", "4.0000", "36.0000", "USD"]  # 12 h x 3.0
    data = json.loads(run(["cost", "-o", "json"], fake, now=NOW).output)
    item = {i["team"]: i for i in data["items"]}["a"]
    assert (item["gpuHours"], item["activeGpuHours"], item["idleCost"]) == (16.0, 4.0, 36.0)
    assert data["total"]["idleCost"] == 36.0 and "idleCost" not in {i["team"]: i for i in
                                                                    data["items"]}["b"]  # fmt: skip
