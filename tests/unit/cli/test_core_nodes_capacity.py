"""GPU supply from GryviaGpuNodes and Nodes, pod allocation, capacity per type (pure)."""

from __future__ import annotations

from gryvia_cli.core.capacity import capacity_rows, compute_capacity, pending_demand
from gryvia_cli.core.jobs import summarize_job
from gryvia_cli.core.nodes import allocated_by_node, free_gpus, gpu_nodes, node_row, pod_gpus
from tests.unit.cli.helpers import gpunode, h100, make_job, make_node, make_pod


def test_registered_nodes_join_their_node_and_unregistered_come_from_labels() -> None:
    nodes = [
        h100("gpu-h100-0"),
        make_node("gpu-l40-0").gpus(4).product("NVIDIA-L40", memory_mib=46068).obj(),
    ]
    result = gpu_nodes([gpunode("gpu-h100-0", "H100")], nodes)
    by_name = {n.name: n for n in result}
    assert by_name["gpu-h100-0"].source == "GryviaGpuNode" and by_name["gpu-h100-0"].healthy
    l40 = by_name["gpu-l40-0"]
    assert (l40.source, l40.gpu_type, l40.gpus, l40.memory_gb, l40.driver, l40.cuda) == (
        "Node",
        "L40",
        4,
        45,
        "550.127.08",
        "12.4",
    )
    assert [n.gpu_type for n in result] == ["H100", "L40"]


def test_cpu_nodes_are_ignored_and_missing_nodes_are_flagged() -> None:
    result = gpu_nodes([gpunode("gone", "H100")], [make_node("cpu-0").obj()])
    assert [(n.name, n.phase, n.usable) for n in result] == [("gone", "Missing", False)]


def test_unreadable_nodes_trust_registrations() -> None:
    result = gpu_nodes([gpunode("a", "H100"), gpunode("b", "H100", phase="Degraded")], None)
    assert [(n.name, n.usable, n.healthy) for n in result] == [
        ("a", True, True),
        ("b", False, False),
    ]


def test_not_ready_and_cordoned_nodes_have_no_free_gpus() -> None:
    nodes = gpu_nodes(
        [],
        [
            h100("a"),
            make_node("b").gpus(8).product().not_ready().obj(),
            make_node("c").gpus(8).product().cordoned().obj(),
        ],
    )
    free = {n.name: free_gpus(n, {}) for n in nodes}
    assert free == {"a": 8, "b": 0, "c": 0}
    row = node_row(next(n for n in nodes if n.name == "c"), {}, wide=True)
    assert "SchedulingDisabled" in str(row[6])


def test_pod_gpus_and_allocation() -> None:
    running = make_pod("p1").gpus(4).on("a").obj()
    done = make_pod("p2").gpus(4).on("a").phase("Succeeded").obj()
    unbound = make_pod("p3").gpus(2).phase("Pending").obj()
    limits_only = make_pod("p4").on("a").obj()
    limits_only["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
    assert pod_gpus(running) == 4 and pod_gpus(limits_only) == 1
    assert allocated_by_node([running, done, unbound, limits_only]) == {"a": 5}


def test_capacity_per_type_with_demand_shortfall_and_absent_type() -> None:
    nodes = gpu_nodes(
        [], [h100("h0"), h100("h1"), make_node("l0").gpus(4).product("NVIDIA-L40").obj()]
    )
    pods = [make_pod("run-0", "ml").gpus(8).on("h0").job("run").obj()]
    jobs = [
        summarize_job(make_job("run").gpus(8).gpu_type("H100").phase("Running").obj()),
        summarize_job(
            make_job("wait").gpus(8).gpu_type("H100").distributed(2).phase("Pending").obj()
        ),
        summarize_job(make_job("b200").gpus(8).gpu_type("B200").phase("Pending").obj()),
        summarize_job(make_job("any").gpus(2).phase("Pending").obj()),
        summarize_job(make_job("held").gpus(8).gpu_type("H100").suspend().obj()),
        summarize_job(make_job("cpu").gpus(0).phase("Pending").obj()),
        summarize_job(make_job("old").gpus(8).gpu_type("H100").phase("Succeeded").obj()),
    ]
    report = compute_capacity(nodes, allocated_by_node(pods), jobs, pods)
    rows = {t.gpu_type: t for t in report.types}
    h = rows["H100"]
    assert (h.total, h.allocated, h.free, h.pending, h.shortfall, h.headroom) == (
        16,
        8,
        8,
        16,
        8,
        0,
    )
    assert h.suspended == 8 and any("suspended" in n for n in h.notes)
    assert rows["B200"].total == 0 and rows["B200"].notes[0] == "no node registers this type"
    assert rows["L40"].headroom == 4
    assert report.unspecified_pending == 2
    assert report.totals.total == 20 and report.totals.pending == 16 + 8 + 2
    assert report.as_dict()["totals"]["shortfall"] == report.totals.shortfall
    assert len(capacity_rows(report)) == 3


def test_capacity_totals_add_up_each_types_shortfall_and_headroom() -> None:
    """Free L40s do not serve a V100 job: the totals' shortfall and headroom (in `-o json`
    and the table's footer) are the per-type sums, not max(total pending - total free, 0)."""
    nodes = gpu_nodes([], [make_node("l0").gpus(4).product("NVIDIA-L40").obj()])
    jobs = [summarize_job(make_job("v").gpus(1).gpu_type("V100").phase("Pending").obj())]
    report = compute_capacity(nodes, {}, jobs, [])
    totals = report.as_dict()["totals"]
    assert (totals["free"], totals["pending"]) == (4, 1)
    assert (totals["shortfall"], totals["headroom"]) == (1, 4)


def test_capacity_filter_is_case_insensitive_and_drops_untyped() -> None:
    nodes = gpu_nodes([], [h100("h0"), make_node("l0").gpus(4).product("NVIDIA-L40").obj()])
    jobs = [summarize_job(make_job("any").gpus(2).phase("Pending").obj())]
    report = compute_capacity(nodes, {}, jobs, [], gpu_type="h100")
    assert [t.gpu_type for t in report.types] == ["H100"] and report.unspecified_pending == 0
    assert [n.name for n in report.nodes] == ["h0"]


def test_pending_counts_unbound_pods_of_placed_jobs_once() -> None:
    jobs = [
        summarize_job(make_job("j").gpus(4).gpu_type("H100").distributed(2).phase("Running").obj())
    ]
    pods = [
        make_pod("j-0").gpus(4).on("h0").job("j").obj(),
        make_pod("j-1").gpus(4).phase("Pending").job("j").obj(),
    ]
    assert pending_demand(jobs, pods) == {"H100": 4}
    scheduling = [summarize_job(make_job("s").gpus(4).gpu_type("H100").phase("Scheduling").obj())]
    assert pending_demand(scheduling, []) == {"H100": 4}
    assert pending_demand(scheduling, None) == {}


def test_allocated_exceeding_total_is_noted() -> None:
    nodes = gpu_nodes([gpunode("h0", "H100", gpus=4)], [h100("h0")])
    report = compute_capacity(nodes, {"h0": 6}, [], [])
    assert report.types[0].notes == ["allocated exceeds total by 2"]


def test_capacity_json_keys_are_all_camel_case() -> None:
    """`gryvia capacity -o json`: one naming rule for every key, nodes included (they were
    `gpu_type`/`reserved_for` beside the types' `gpuType`)."""
    nodes = gpu_nodes([gpunode("h0", "H100", gpus=8)], [h100("h0")])
    report = compute_capacity(nodes, {"h0": 2}, [], [])

    def keys(value: object) -> set[str]:
        if isinstance(value, dict):
            return set(value) | {k for v in value.values() for k in keys(v)}
        if isinstance(value, list):
            return {k for v in value for k in keys(v)}
        return set()

    found = keys(report.as_dict())
    assert not {k for k in found if "_" in k}, found
    node = next(n for n in report.as_dict()["nodes"] if n["name"] == "h0")
    assert node["gpuType"] == "H100" and node["allocated"] == 2 and node["reservedFor"] == ""
