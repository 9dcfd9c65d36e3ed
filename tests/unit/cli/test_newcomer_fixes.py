"""What a new user saw wrong (issue 13, point 5), each fixed and checked on fixed data.

The cluster side of the same items is tests/integration/cli/test_newcomer_fixes.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gryvia_cli.core.cells import Marked
from gryvia_cli.core.jobs import bound_nodes, job_row, summarize_job
from gryvia_cli.core.platform import PlatformInputs, build_report
from gryvia_cli.core.quota import phase_cell
from gryvia_cli.errors import job_failure_hint
from gryvia_operator.api import GryviaQuota
from gryvia_operator.api.validation import validate_job
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.placement import cpu_node_preference
from gryvia_operator.reconcile.podtemplate import build_pod_template
from gryvia_operator.webhook.review import admit_aijob
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import NOW, ago, h100, make_job, make_pod, run, stamp
from tests.unit.cli.test_cli_write import write
from tests.unit.cli.test_tenancy_commands import NLP, VISION
from tests.unit.cli.test_tenancy_commands import run as run_at
from tests.unit.cli.test_tenancy_core import CATALOG, record

# -- the node the pod is bound to, not the planner's guess --------------------------------------


def _placed_elsewhere() -> FakeAccess:
    """A running job the planner put on h1 whose pod the scheduler bound to h0."""
    job = stamp(
        make_job("run").gpus(8).gpu_type("H100").phase("Running").obj(),
        3600,
    )
    job["status"].update(nodesAllocated=["h1"], startTime=ago(1800))
    return FakeAccess(
        h100("h0"),
        h100("h1"),
        job,
        make_pod("run-0-abc").gpus(8).on("h0").job("run").obj(),
        {
            "kind": "GryviaGpuSku",
            "apiVersion": "gryvia.io/v1alpha1",
            "metadata": {"name": "h100"},
            "spec": {"gpuType": "H100", "hourlyRate": 8},
        },
    )


def test_bound_nodes_come_from_the_pods_spec_node_name() -> None:
    pods = [
        make_pod("a-1").on("h1").job("a").obj(),
        make_pod("a-0").on("h0").job("a").obj(),
        make_pod("a-2").job("a").obj(),  # not bound yet
        make_pod("b-0", "other").on("h0").job("b").obj(),
    ]
    assert bound_nodes(pods) == {("ml", "a"): ("h0", "h1"), ("other", "b"): ("h0",)}
    job = summarize_job(make_job("a").status(nodesAllocated=["planner-pick"]).obj())
    wide = job_row(job, NOW, wide=True, nodes=("h0", "h1"))
    assert wide[10] == "h0,h1" and "planner-pick" not in wide
    assert job_row(job, NOW, wide=True)[10] == "-"


def test_list_wide_and_status_show_the_bound_node() -> None:
    wide = run(["list", "jobs", "-o", "wide"], _placed_elsewhere()).output.splitlines()
    header, row = wide[0].split(), wide[1].split()
    assert header[11:14] == ["NODES", "GPU%", "COST"]  # GPU TYPE is two words
    assert row[10] == "h0"
    status = run(["status", "run"], _placed_elsewhere()).output
    assert "Nodes:       h0\n" in status and "h1" not in status.split("━━━ Pods")[0]
    data = json.loads(run(["status", "run", "-o", "json"], _placed_elsewhere()).output)
    assert data["nodes"] == ["h0"]


# -- per-job cost ---------------------------------------------------------------------------------


def test_job_cost_in_list_wide_and_status_estimated_then_metered() -> None:
    # no usage record yet: 8 GPUs x 8.00 USD for the 30 minutes run, marked as an estimate
    row = run(["list", "jobs", "-o", "wide"], _placed_elsewhere()).output.splitlines()[1]
    assert "~32.00 USD" in row
    status = run(["status", "run"], _placed_elsewhere()).output
    assert (
        "Cost:        32.00 USD so far (estimated from the catalog rate, 64.00 USD/hour)" in status
    )
    fake = _placed_elsewhere().add(
        record("ml", "run", ago(1800), 3.0, rate=8.0, sku_name="h100", namespace="ml")
    )
    fake.objects[2]["metadata"]["uid"] = "uid-run"
    metered = run(["list", "jobs", "-o", "wide"], fake).output.splitlines()[1].split()
    assert metered[12:14] == ["24.00", "USD"]
    data = json.loads(run(["status", "run", "-o", "json"], fake).output)
    assert data["cost"] == {"soFar": 24.0, "perHour": 64.0, "currency": "USD", "metered": True}


def test_usage_group_by_job() -> None:
    fake = FakeAccess(
        VISION,
        *CATALOG,
        record("vision", "a", "2026-11-18T09:00:00Z", 2.0),
        record("vision", "a", "2026-11-18T11:00:00Z", 1.0),
        record("vision", "b", "2026-11-18T09:00:00Z", 4.0),
    )
    result = run_at(["usage", "--group-by", "job", "-o", "json"], fake)
    assert result.exit_code == 0, result.output
    items = {i["job"]: i for i in json.loads(result.stdout)["items"]}
    assert items["tenant-vision/b"]["cost"] == 16.0 and items["tenant-vision/b"]["jobs"] == 1
    assert items["tenant-vision/a"]["cost"] == 12.0 and items["tenant-vision/a"]["gpuHours"] == 3.0
    table = run_at(["usage", "--group-by", "job"], fake).stdout.splitlines()
    assert table[0].split()[0] == "JOB" and table[1].split()[0] == "tenant-vision/b"


# -- invoices: the catalog rate, and no bill for a tenant that does not exist ---------------------


def test_invoice_rate_is_the_catalog_rate_not_a_quotient_of_rounded_totals() -> None:
    # 1/3 GPU-hour at 8.00: amount/hours of the rounded figures would print 8.0108
    third = record("vision", "a", "2026-11-18T09:00:00Z", 1 / 3, rate=8.0, sku_name="h100-80g")
    fake = FakeAccess(VISION, *CATALOG, third)
    table = run_at(["invoice", "--tenant", "vision"], fake).stdout
    line = next(ln for ln in table.splitlines() if ln.startswith("h100-80g"))
    assert "8.00 USD" in line and "8.01" not in line and "8.0003" not in line
    data = json.loads(run_at(["invoice", "-o", "json"], fake).stdout)
    assert data["items"][0]["lines"][0]["rate"] == 8.0


def test_usage_of_a_name_that_is_no_tenant_keeps_its_name_and_is_never_invoiced() -> None:
    fake = FakeAccess(
        VISION,
        NLP,
        *CATALOG,
        record("vision", "v", "2026-11-18T09:00:00Z", 1.0),
        # a job in namespace `default`: the operator named the namespace as its tenant
        record("default", "stray", "2026-11-18T09:00:00Z", 2.0, namespace="default"),
    )
    usage = json.loads(run_at(["usage", "-o", "json"], fake).stdout)
    # the name the tenant rule gives, as the console and the ledger show it (issue 37, 8)
    assert {i["tenant"]: (i["cost"], i.get("billable", True)) for i in usage["items"]} == {
        "default": (8.0, False),
        "vision": (4.0, True),
    }
    assert "default (no tenant: not invoiced)" in run_at(["usage"], fake).stdout
    invoices = run_at(["invoice", "-o", "json"], fake)
    assert [i["tenant"] for i in json.loads(invoices.stdout)["items"]] == ["vision"]
    table = run_at(["invoice"], fake)
    assert "INV-default" not in table.output
    assert (
        "8.00 USD of usage (1 job(s)) in 2026-11 is attributed to default, which is not a "
        "GryviaTenant, and is not invoiced" in " ".join(table.stderr.split())
    )


# -- a quota at its limit is Full -----------------------------------------------------------------


def _quota(allocated: int, phase: str) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaQuota",
        "metadata": {"name": "ml"},
        "spec": {"team": "ml", "namespaces": ["ml"], "gpuQuota": {"maxGPUs": 8}},
        "status": {
            "phase": phase,
            "currentUsage": {"allocatedGPUs": allocated, "runningJobs": 1, "queuedJobs": 1},
        },
    }


def test_cli_shows_a_full_quota_as_a_warning_not_an_error() -> None:
    assert phase_cell(GryviaQuota.model_validate(_quota(8, "Full"))) == Marked("Full", "warn")
    exceeded = GryviaQuota.model_validate(_quota(9, "QuotaExceeded"))
    assert phase_cell(exceeded) == Marked("QuotaExceeded", "error")
    listed = run(["list", "quotas"], FakeAccess(_quota(8, "Full"))).output.splitlines()
    assert listed[1].split()[2] == "8/8" and listed[1].split()[-1] == "Full"
    shown = run(["quota", "ml"], FakeAccess(_quota(8, "Full"))).output
    assert "8/8 (100%)" in shown and "Full" in shown and "QuotaExceeded" not in shown


# -- CPU-only jobs --------------------------------------------------------------------------------


def test_cpu_only_pods_prefer_nodes_without_gpus() -> None:
    job = make_job("cpu").gpus(0).model()
    pod = build_pod_template(job, kind="job", config=ReconcileConfig())["spec"]
    terms = pod["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert terms == [cpu_node_preference()]
    keys = {e["key"]: e["operator"] for e in terms[0]["preference"]["matchExpressions"]}
    assert keys == {"gryvia.io/gpu": "DoesNotExist", "nvidia.com/gpu.present": "DoesNotExist"}
    assert "nodeSelector" not in pod
    mine = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"x": 1}}}
    kept = build_pod_template(
        make_job("cpu").gpus(0).set(affinity=mine).model(), kind="job", config=ReconcileConfig()
    )["spec"]["affinity"]["nodeAffinity"]
    assert kept["requiredDuringSchedulingIgnoredDuringExecution"] == {"x": 1}
    gpu = build_pod_template(make_job("g").gpus(1).model(), kind="job", config=ReconcileConfig())
    assert "affinity" not in gpu["spec"]


def test_zero_gpus_with_a_gpu_type_is_one_error_naming_both_fields(tmp_path: Path) -> None:
    obj = make_job("cpu").gpus(0).gpu_type("H100").obj()
    errors = validate_job(obj).errors
    assert [e.field for e in errors] == ["spec.gpuType"]
    assert "spec.gpuType" in errors[0].message and "spec.gpus is 0" in errors[0].message
    assert validate_job(make_job("cpu").gpus(0).gpu_type("any").obj()).ok
    assert validate_job(make_job("cpu").gpus(0).obj()).ok
    verdict = admit_aijob({"uid": "1", "operation": "CREATE", "object": obj})
    assert not verdict.allowed and errors[0].message in verdict.message
    result = run(["validate", str(write(tmp_path, "cpu", gpus=0, gpu_type="H100"))])
    assert result.exit_code == 1 and errors[0].message in result.output


# -- the platform report's operator line ----------------------------------------------------------


def _deployment(ready: int, desired: int = 1) -> dict[str, Any]:
    return {
        "kind": "Deployment",
        "metadata": {"name": "gryvia-operator", "namespace": "gryvia-system"},
        "spec": {"replicas": desired},
        "status": {"readyReplicas": ready, "availableReplicas": ready},
    }


def _operator(deployments: list[dict[str, Any]], leases: list[dict[str, Any]]) -> Any:
    inputs = PlatformInputs("gryvia-system", deployments=deployments, leases=leases)
    return build_report(inputs, NOW).components[0]


def test_operator_with_no_ready_replica_is_not_ok_unless_a_local_operator_answers() -> None:
    for dep in (_deployment(0), _deployment(0, desired=0)):
        line = _operator([dep], [])
        assert line.state == "Error", dep
        assert line.message.startswith("no ready operator replica: Deployment")
        assert "no local operator answers" in line.message
    lease = {
        "metadata": {"name": "gryvia-operator-local", "namespace": "default"},
        "spec": {"holderIdentity": "me", "renewTime": ago(5), "leaseDurationSeconds": 15},
    }
    local = _operator([_deployment(0)], [lease])
    assert local.state == "OK" and local.message.startswith("local operator: lease")
    assert _operator([_deployment(1)], []).state == "OK"
    assert _operator([_deployment(1, desired=2)], []).state == "Warning"


# -- hints ----------------------------------------------------------------------------------------


def test_failure_hint_names_the_jobs() -> None:
    assert job_failure_hint(["train"]) == "gryvia logs train --all-replicas; gryvia status train"
    assert job_failure_hint(["a", "b"]) == (
        "gryvia logs a --all-replicas; gryvia status a; "
        "gryvia logs b --all-replicas; gryvia status b"
    )


def test_wrong_namespace_hint_names_where_the_job_is() -> None:
    fake = FakeAccess(make_job("train", "team-b").obj(), namespace="ml")
    for args in (["status", "train"], ["describe", "train"], ["get", "job", "train"]):
        result = run(args, fake)
        assert result.exit_code == 1, args
        assert 'job "train" not found in namespace "ml"' in result.output
        assert 'job "train" exists in namespace team-b: pass -n team-b' in result.output
    nowhere = run(["status", "nope"], fake)
    assert nowhere.exit_code == 1 and "exists in namespace" not in nowhere.output


def test_misspelt_phase_is_a_usage_error_listing_the_phases() -> None:
    result = run(["list", "jobs", "--phase", "Runing"], FakeAccess())
    assert result.exit_code == 2
    assert "--phase 'Runing' is not a job phase; use one of: Pending, Queued," in result.output
    assert run(["list", "jobs", "--phase", "running"], FakeAccess()).exit_code == 0
    assert run(["list", "jobs", "--phase", "completed"], FakeAccess()).exit_code == 0


def test_describe_name_is_describe_job_name() -> None:
    fake = _placed_elsewhere()
    alone = run(["describe", "run"], fake)
    assert alone.exit_code == 0 and "━━━ Job run ━━━" in alone.output
    assert alone.output == run(["describe", "job", "run"], fake).output


def test_cost_all_teams_flag() -> None:
    fake = FakeAccess(VISION, NLP, *CATALOG)
    every = run_at(["cost", "-A", "-o", "json"], fake)
    assert every.exit_code == 0, every.output
    assert {i["team"] for i in json.loads(every.stdout)["items"]} == {"vision", "nlp"}
    assert every.stdout == run_at(["cost", "-o", "json"], fake).stdout
    both = run_at(["cost", "vision", "-A"], fake)
    assert both.exit_code == 2 and "pass either TEAM (vision) or -A" in both.output


def test_one_gpu_is_singular(tmp_path: Path) -> None:
    from gryvia_cli.core.estimate import estimate_cost
    from gryvia_operator.api import GryviaGpuSku

    job = summarize_job(make_job("one").gpus(1).gpu_type("H100").obj())
    skus = [GryviaGpuSku.model_validate(s) for s in CATALOG]
    estimate = estimate_cost(job, "ml", skus, [], [])
    assert estimate is not None
    assert "(1 GPU x 8.00 USD per GPU-hour" in estimate.lines()[0]
    capacity = run(["capacity"], FakeAccess(h100("h0", gpus=1))).output
    assert "Total: 1 GPU on 1 node," in capacity and "1 GPUs" not in capacity
    status = run(["status"], FakeAccess(h100("h0", gpus=1))).output
    assert "1 Ready (1 GPU)" in status and "1 GPUs" not in status


def test_missing_kubeconfig_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    result = run(["list", "jobs"], KUBECONFIG=str(missing))
    assert result.exit_code == 1
    assert f"KUBECONFIG is {missing}, and that file does not exist" in result.output
    assert "KUBECONFIG is unset" not in result.output
    home = Path.home() / ".kube"
    home.mkdir()
    (home / "config").write_text("apiVersion: v1\nkind: Config\n")
    # a set KUBECONFIG is not replaced by ~/.kube/config (kubectl does the same)
    again = run(["list", "jobs"], KUBECONFIG=str(missing))
    assert f"KUBECONFIG is {missing}, and that file does not exist" in again.output
