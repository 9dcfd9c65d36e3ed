"""Read commands through CliRunner with a fake access layer: formats, columns, messages."""

from __future__ import annotations

import json

import yaml

from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import event, gpunode, h100, make_job, make_node, make_pod, run, stamp


def cluster() -> FakeAccess:
    """Two H100 nodes (one registered), an L40 node, a running, a waiting and a done job."""
    return FakeAccess(
        h100("h0"),
        h100("h1"),
        make_node("l0").gpus(4).product("NVIDIA-L40", memory_mib=46068).obj(),
        make_node("cpu-0").obj(),
        gpunode("h0", "H100"),
        stamp(make_job("run").gpus(8).gpu_type("H100").phase("Running").obj(), 3600),
        stamp(make_job("wait").gpus(8).gpu_type("B200").obj(), 120),
        stamp(make_job("done", "other").gpus(1).gpu_type("L40").phase("Succeeded").obj(), 90000),
        make_pod("run-0-abc").gpus(8).on("h0").job("run").obj(),
        {
            "kind": "GryviaGpuSku",
            "apiVersion": "gryvia.io/v1alpha1",
            "metadata": {"name": "h100"},
            "spec": {"gpuType": "H100", "hourlyRate": 8},
        },
    )


def test_list_jobs_table_and_all_namespaces() -> None:
    result = run(["list", "jobs"], cluster())
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].split() == ["NAME", "USER", "TYPE", "GPUS", "GPU", "TYPE", "STATUS", "AGE"]
    assert lines[1].split() == ["run", "-", "training", "8", "H100", "Running", "60m"]
    assert lines[2].split() == ["wait", "-", "training", "8", "B200", "Pending", "2m"]
    assert all(line == line.rstrip() for line in lines)
    every = run(["list", "jobs", "-A"], cluster()).output.splitlines()
    assert every[0].startswith("NAMESPACE") and any(line.startswith("other") for line in every)


def test_list_jobs_json_yaml_name_wide_and_phase_filter() -> None:
    data = json.loads(run(["list", "jobs", "-o", "json"], cluster()).output)
    assert data["kind"] == "GryviaAIJobList" and [i["metadata"]["name"] for i in data["items"]] == [
        "run",
        "wait",
    ]
    docs = yaml.safe_load(
        run(["list", "jobs", "-o", "yaml", "--phase", "running"], cluster()).output
    )
    assert [i["metadata"]["name"] for i in docs["items"]] == ["run"]
    assert run(["list", "jobs", "-o", "name"], cluster()).output.split() == [
        "gryviaaijob.gryvia.io/run",
        "gryviaaijob.gryvia.io/wait",
    ]
    wide = run(["list", "jobs", "-o", "wide"], cluster()).output
    assert "MESSAGE" in wide and "DURATION" in wide


def test_list_jobs_empty_and_forbidden() -> None:
    empty = run(["list", "jobs", "-n", "nobody"], cluster())
    assert empty.exit_code == 0 and "No jobs found in namespace nobody." in empty.output
    fake = cluster()
    fake.forbidden.add("GryviaAIJob")
    denied = run(["list", "jobs", "-o", "table"], fake)
    assert denied.exit_code == 1 and "your kubeconfig user lacks permission" in denied.output


def test_list_jobs_when_the_crd_is_missing() -> None:
    fake = cluster()
    fake.missing.add("GryviaAIJob")
    result = run(["list", "jobs", "-o", "table"], fake)
    assert result.exit_code == 1
    assert "error: GryviaAIJob is not available on this cluster" in result.output
    assert "hint: install the chart" in result.output


def test_list_nodes_registered_and_from_labels() -> None:
    result = run(["list", "nodes", "-o", "wide"], cluster())
    lines = result.output.splitlines()
    assert lines[0].split()[:3] == ["NODE", "GPU", "TYPE"]
    h0 = next(line for line in lines if line.startswith("h0 ")).split()
    assert h0[:5] == ["h0", "H100", "8", "80", "GB"] and "GryviaGpuNode" in h0
    l0 = next(line for line in lines if line.startswith("l0 "))
    assert "L40" in l0 and "Node" in l0 and "cpu-0" not in result.output
    assert "shown from their GPU labels" in result.output
    as_json = json.loads(run(["list", "nodes", "-o", "json"], cluster()).output)
    assert as_json["kind"] == "GryviaGpuNodeList" and len(as_json["items"]) == 1
    notice = run(["list", "nodes", "-A"], cluster())
    assert "--all-namespaces has no effect: GryviaGpuNode is cluster-scoped" in notice.output


def test_list_nodes_json_falls_back_to_gpu_nodes() -> None:
    fake = FakeAccess(h100("h0"), make_node("cpu-0").obj())
    data = json.loads(run(["list", "nodes", "-o", "json"], fake).output)
    assert data["kind"] == "List" and [i["metadata"]["name"] for i in data["items"]] == ["h0"]


def test_list_quotas_and_skus() -> None:
    quota = {
        "kind": "GryviaQuota",
        "metadata": {"name": "vision"},
        "spec": {
            "team": "vision",
            "namespaces": ["ml"],
            "gpuQuota": {"maxGPUs": 10, "maxGPUsPerJob": 8},
            "budget": {"monthlyBudget": 1000},
        },
        "status": {
            "phase": "Active",
            "currentUsage": {"allocatedGPUs": 9, "runningJobs": 2, "queuedJobs": 1},
            "budgetStatus": {"spentThisMonth": 12.5},
        },
    }
    out = run(["list", "quotas"], FakeAccess(quota)).output.splitlines()
    assert out[1].split() == [
        "vision",
        "vision",
        "9/10",
        "8",
        "2",
        "1",
        "$12.50/$1000.00",
        "Active",
    ]
    assert "No quotas found." in run(["list", "quotas"], FakeAccess()).output
    skus = run(["list", "skus"], cluster()).output
    assert "8.00 USD" in skus and "Total: 1 SKUs (1 enabled)" in skus
    assert run(["catalog"], FakeAccess()).output.strip() == "No SKUs published."
    assert run(["skus", "-o", "name"], cluster()).output == "gryviagpusku.gryvia.io/h100\n"


def test_get_and_describe() -> None:
    obj = yaml.safe_load(run(["get", "job", "run"], cluster()).output)
    assert obj["metadata"]["name"] == "run" and obj["spec"]["gpuType"] == "H100"
    assert (
        json.loads(run(["get", "gaj", "run", "-o", "json"], cluster()).output)["kind"]
        == "GryviaAIJob"
    )
    assert (
        run(["get", "node", "h0", "-o", "name"], cluster()).output == "gryviagpunode.gryvia.io/h0\n"
    )
    table = run(["get", "job", "run", "-o", "table"], cluster()).output.splitlines()
    assert table[1].split()[:3] == ["run", "-", "training"]
    described = run(["describe", "job", "wait"], cluster()).output
    assert "━━━ Job wait ━━━" in described and "GPUs:        8 x B200" in described
    node = run(["describe", "node", "h0"], cluster()).output
    assert "gpuType: H100" in node and "━━━ Events ━━━" in node


def test_status_of_a_job_with_pods_and_events() -> None:
    fake = cluster().add(
        event("run-0-abc", "Successfully assigned", reason="Scheduled", seconds_ago=100)
    )
    fake.objects[5]["status"]["startTime"] = "2025-06-01T11:05:00Z"
    fake.objects[5]["status"]["conditions"] = [
        {
            "type": "Scheduled",
            "status": "True",
            "reason": "Scheduled",
            "message": "Job scheduled",
            "lastTransitionTime": "2025-06-01T11:00:00Z",
        }
    ]
    fake.objects[5]["spec"]["retryLimit"] = 3
    fake.objects[5]["status"]["retries"] = 1
    out = run(["status", "run"], fake).output
    assert "Phase:       Running" in out and "Timing:      waited 5m0s, running for 55m0s" in out
    assert "priority 0, retry limit 3\n" in out
    assert "Retries:     1 failed pod(s) of the 3 allowed" in out
    assert "Scheduled   True" in out and "run-0-abc" in out and "Successfully assigned" in out
    snapshot = json.loads(run(["status", "run", "-o", "json"], fake).output)
    assert (
        set(snapshot)
        == {"apiVersion", "kind", "job", "pods", "events", "nodes", "gpus", "gpusSource", "cost"}
        | {"checkpoints"}
        and snapshot["pods"][0]["metadata"]["name"] == "run-0-abc"
        and snapshot["checkpoints"] is None  # not guarded
    )
    assert run(["status", "nope"], fake).exit_code == 1


def test_platform_status_exit_codes_and_brief() -> None:
    fake = cluster()
    result = run(["status"], fake)
    assert (
        result.exit_code == 1
        and "Operator *" in result.output
        and "Overall: ERROR" in result.output
    )
    brief = run(["status", "--brief"], fake)
    assert brief.exit_code == 1 and brief.output.startswith("Operator: Error")
    fake.add(
        {
            "kind": "Deployment",
            "metadata": {"name": "gryvia-operator", "namespace": "gryvia-system"},
            "spec": {"replicas": 1},
            "status": {"readyReplicas": 1, "availableReplicas": 1},
        }
    )
    ok = run(["status", "--brief"], fake)
    assert ok.exit_code == 0 and ok.output == "OK\n"
    data = json.loads(run(["status", "-o", "json"], fake).output)
    assert data["overall"] == "warn" and [c["name"] for c in data["components"]][:3] == [
        "Operator",
        "Webhook",
        "CRDs",
    ]


def test_queue_explains_an_absent_gpu_type() -> None:
    fake = cluster().add(make_pod("x-0").job("wait").phase("Pending").obj())
    out = run(["queue"], fake).output.splitlines()
    assert out[0].split() == [
        "#",
        "NAME",
        "USER",
        "GPU",
        "TYPE",
        "GPUS",
        "PHASE",
        "WAITING",
        "START",
        "REASON",
    ]
    assert out[1].startswith("1   wait   -      B200") and 'no node has GPU type "B200"' in out[1]
    data = json.loads(run(["queue", "-o", "json"], fake).output)
    assert data["kind"] == "Queue" and data["items"][0]["reason"].startswith("no node has GPU type")
    assert "No jobs waiting in namespace other." in run(["queue", "-n", "other"], fake).output
    assert run(["queue", "-A", "--gpu-type", "h100"], fake).output.startswith("No jobs waiting")


def test_queue_uses_failed_scheduling_events() -> None:
    fake = cluster().add(
        stamp(make_job("big").gpus(8).gpu_type("H100").status(message="m").obj(), 30),
        make_pod("big-0-x").job("big").phase("Pending").obj(),
        event("big-0-x", "0/4 nodes are available: 2 Insufficient nvidia.com/gpu."),
    )
    fake.objects = [
        o
        for o in fake.objects
        if not (o.get("kind") == "Pod" and o["metadata"]["name"] == "run-0-abc")
    ] + [
        make_pod("hog").gpus(8).on("h1").obj(),
        make_pod("run-0-abc").gpus(8).on("h0").job("run").obj(),
    ]
    out = run(["queue", "-A"], fake).output
    assert "pod big-0-x: 0/4 nodes are available" in out


def test_capacity_table_json_and_wide() -> None:
    out = run(["capacity"], cluster()).output.splitlines()
    assert out[0].split()[:3] == ["GPU", "TYPE", "NODES"]
    rows = {line.split()[0]: line.split() for line in out[1:4]}
    # nodes, total, allocated, free, reserved, pending, shortfall, headroom
    assert rows["H100"][1:9] == ["2", "16", "8", "8", "0", "0", "0", "8"]
    assert rows["B200"][1:9] == [
        "0",
        "0",
        "0",
        "0",
        "0",
        "8",
        "8",
        "0",
    ] and "no node registers this type" in " ".join(rows["B200"])
    assert rows["L40"][1:9] == ["1", "4", "0", "4", "0", "0", "0", "4"]
    data = json.loads(run(["capacity", "-o", "json"], cluster()).output)
    assert data["totals"]["total"] == 20 and data["totals"]["allocated"] == 8
    wide = run(["cap", "-o", "wide", "--gpu-type", "H100"], cluster()).output
    assert "━━━ Nodes ━━━" in wide and "h1" in wide and "L40" not in wide


def test_capacity_counts_reserved_gpus_apart_from_free() -> None:
    fake = cluster()
    for obj in fake.objects:
        if obj.get("kind") == "Node" and obj["metadata"]["name"] == "h1":
            obj["metadata"].setdefault("labels", {})["gryvia.io/reserved-for"] = "night"
    data = json.loads(run(["capacity", "-o", "json", "--gpu-type", "H100"], fake).output)
    h100 = data["types"][0]
    assert (h100["free"], h100["reserved"], h100["allocated"]) == (0, 8, 8)
    assert data["totals"]["reserved"] == 8
    assert [n["reservedFor"] for n in data["nodes"]] == ["", "night"]
    wide = run(["capacity", "-o", "wide", "--gpu-type", "H100"], fake).output
    assert "night" in wide and "8 reserved" in wide


def test_health_gpu_and_version_and_config(isolated_env) -> None:  # type: ignore[no-untyped-def]
    ok = run(["health"], cluster())
    assert "━━━ Cluster Health Check ━━━" in ok.output and ok.exit_code == 0
    sick = cluster().add(make_node("h2").gpus(8).product().not_ready().obj())
    assert run(["health", "gpu"], sick).exit_code == 1
    assert json.loads(run(["health", "-o", "json"], cluster()).output)["items"][0]["name"] == "h0"
    assert "not available in this release" in run(["health", "network"], cluster()).output
    none = run(["health", "storage"], cluster())
    assert "no storage backends (GryviaStorage) defined" in none.output and none.exit_code == 0
    client = run(["version", "--client"])
    assert client.exit_code == 0 and client.output.startswith("Client: gryvia")
    nowhere = run(["version"], KUBECONFIG="/nonexistent/kubeconfig", HOME="/nonexistent")
    assert nowhere.exit_code != 0 and nowhere.stdout.startswith("Client: gryvia")
    assert "kubeconfig" in nowhere.output
    both = json.loads(run(["version", "-o", "json"], cluster()).output)
    assert (
        both["server"]["kubernetes"] == "v1.36.3"
        and both["server"]["gryviaApi"] == "gryvia.io/v1alpha1"
    )


def test_status_watch_prints_changes_until_the_job_ends(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from gryvia_cli.views import job as job_view

    fake = cluster()
    phases = iter(["Running", "Running", "Succeeded"])

    def tick(_seconds: float) -> None:
        job = next(o for o in fake.objects if o["metadata"]["name"] == "run")
        job["status"]["phase"] = next(phases)

    monkeypatch.setattr(job_view.time, "sleep", tick)
    result = run(["status", "run", "--watch"], fake)
    assert result.exit_code == 0
    assert result.output.count("━━━ Job run ━━━") == 2  # printed again only when it changed
    assert "Phase:       Succeeded" in result.output
