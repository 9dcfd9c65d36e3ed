"""MIG slices count as slices: the rule (api.mig), the submit plan, capacity, the queue
reason, placement, registration, the webhook inventory, prices and sandbox node specs."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from gryvia_cli.core.capacity import compute_capacity
from gryvia_cli.core.estimate import estimate_cost
from gryvia_cli.core.jobs import JobSummary, summarize_job
from gryvia_cli.core.nodes import allocated_by_node, free_gpus, gpu_nodes
from gryvia_cli.core.plan import plan_job
from gryvia_cli.core.queue import wait_reason
from gryvia_cli.core.sinfoview import sinfo_rows
from gryvia_cli.sandbox.nodespec import NodeGroup, NodeSpecError, build_node, parse_node_spec
from gryvia_operator.api.mig import (
    mig_type_matches,
    parent_type,
    parse_profile,
    slices_in,
    slot_key,
    type_listed,
    type_serves,
)
from gryvia_operator.api.pricing import default_catalog, select_rate
from gryvia_operator.reconcile.placement import Requirements, select_nodes
from gryvia_operator.reconcile.registration import gpu_node_status
from gryvia_operator.reconcile.views import NodeView, PodView, node_inventory

MIG = "H100-MIG-3G.40GB"


def _node(name: str, allocatable: dict[str, str], product: str = "NVIDIA-H100-80GB-HBM3") -> Any:
    return {
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.product": product}},
        "spec": {},
        "status": {
            "allocatable": {"cpu": "64", "memory": "512Gi", **allocatable},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _pod(name: str, node: str, resource: str, count: int, job: str = "other") -> Any:
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": {"gryvia.io/job": job}},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "resources": {"limits": {resource: str(count)}}}],
        },
        "status": {"phase": "Running"},
    }


def _job(gpu_type: str, gpus: int = 1, phase: str = "Pending") -> JobSummary:
    return summarize_job(
        {
            "metadata": {"name": "m", "namespace": "ns"},
            "spec": {"type": "training", "image": "x", "gpus": gpus, "gpuType": gpu_type},
            "status": {"phase": phase},
        }
    )


MIG_NODE = _node("mig-0", {"nvidia.com/mig-3g.40gb": "2", "nvidia.com/mig-1g.10gb": "1"})
WHOLE_NODE = _node("h100-0", {"nvidia.com/gpu": "8"})


@pytest.mark.parametrize(
    ("name", "profile", "compute", "memory", "fraction"),
    [
        ("1g.10gb", "1g.10gb", 1, 10, Fraction(1, 7)),
        ("H100-MIG-3G.40GB", "3g.40gb", 3, 40, Fraction(3, 7)),
        ("nvidia_h100_80gb_hbm3_3g.40gb", "3g.40gb", 3, 40, Fraction(3, 7)),
        ("A100-MIG-7g.80gb", "7g.80gb", 7, 80, Fraction(1)),
    ],
)
def test_profiles_parse_with_their_fraction_of_an_h100(
    name: str, profile: str, compute: int, memory: int, fraction: Fraction
) -> None:
    parsed = parse_profile(name)
    assert parsed is not None
    assert (parsed.name, parsed.compute, parsed.memory_gb) == (profile, compute, memory)
    assert parsed.resource == f"nvidia.com/mig-{profile}"
    assert parsed.fraction("H100") == fraction


def test_rule_edges() -> None:
    assert parse_profile("H100") is None and parse_profile("0g.10gb") is None
    assert parse_profile("2g.12gb").fraction("A30") == Fraction(1, 2)  # type: ignore[union-attr]
    assert parent_type(MIG) == "H100" and parent_type("MIG-3g.40gb") == "" == parent_type("H100")
    assert slices_in({"nvidia.com/mig-3g.40gb": "2", "nvidia.com/gpu": "1", "cpu": "4"}) == {
        "3g.40gb": 2
    }
    assert slot_key("n", MIG) == "n/3g.40gb" and slot_key("n", "H100") == "n"
    assert mig_type_matches(MIG, "h100-mig-3g.40gb") and mig_type_matches(MIG, "MIG-3g.40gb")
    assert not mig_type_matches("A100-80G-MIG-3G.40GB", MIG)
    assert not mig_type_matches("H100-MIG-1G.10GB", MIG)
    assert type_serves("H100", None) and not type_serves(MIG, None) and not type_serves(MIG, "H100")
    assert not type_serves("H100", MIG)
    assert type_listed(MIG, "h100") and type_listed(MIG, MIG) and not type_listed("H100", MIG)
    assert not type_listed(MIG, "A100-80G") and not type_listed(MIG, "H100-MIG-1G.10GB")


def test_a_mig_node_offers_its_slices_as_rows_of_their_own() -> None:
    rows = gpu_nodes([], [MIG_NODE, WHOLE_NODE])
    assert sorted((n.name, n.gpu_type, n.gpus) for n in rows) == [
        ("h100-0", "H100", 8),
        ("mig-0", "H100-MIG-1G.10GB", 1),
        ("mig-0", MIG, 2),
    ]
    allocated = allocated_by_node([_pod("p", "mig-0", "nvidia.com/mig-3g.40gb", 1)])
    assert allocated == {"mig-0/3g.40gb": 1}
    free = {(n.name, n.gpu_type): free_gpus(n, allocated) for n in rows}
    assert free[("mig-0", MIG)] == 1 and free[("mig-0", "H100-MIG-1G.10GB")] == 1


def test_a_partly_partitioned_node_keeps_its_whole_gpus() -> None:
    mixed = _node("mixed-0", {"nvidia.com/gpu": "4", "nvidia.com/mig-3g.40gb": "4"})
    rows = gpu_nodes([], [mixed])
    assert [(n.gpu_type, n.gpus, n.slot) for n in rows] == [
        ("H100", 4, "mixed-0"),
        (MIG, 4, "mixed-0/3g.40gb"),
    ]
    held = allocated_by_node(
        [
            _pod("a", "mixed-0", "nvidia.com/gpu", 3),
            _pod("b", "mixed-0", "nvidia.com/mig-3g.40gb", 2),
        ]
    )
    assert [free_gpus(n, held) for n in rows] == [1, 2]
    assert sinfo_rows(rows, held)[1]["P"] == MIG
    assert [r["t"] for r in sinfo_rows(rows, held)] == ["mix", "mix"]


def test_plan_of_a_mig_job_counts_slices() -> None:
    rows = gpu_nodes([], [MIG_NODE, WHOLE_NODE])
    plan = plan_job(_job(MIG), rows, {})
    assert plan.fits_now and plan.warning is None
    assert plan.candidates == (("mig-0", 2),)
    full = plan_job(_job(MIG), rows, {"mig-0/3g.40gb": 2})
    assert not full.fits_now
    assert full.warning == (
        f"no {MIG} node can take a pod of 1 MIG slice now (0 free in total); "
        "the job will queue until GPUs free up"
    )
    too_big = plan_job(_job(MIG, gpus=3), rows, {})
    assert too_big.warning is not None and "largest H100-MIG-3G.40GB node has 2" in too_big.warning
    whole = plan_job(_job("H100", gpus=8), rows, {})
    assert whole.candidates == (("h100-0", 8),)


def test_queue_reason_of_a_mig_job_is_not_no_such_type() -> None:
    rows = gpu_nodes([], [MIG_NODE])
    reason = wait_reason(_job(MIG), rows, {}, None)
    assert "no node has GPU type" not in reason
    missing = wait_reason(_job("A100-80G-MIG-3G.40GB"), rows, {}, None)
    assert missing.startswith('no node has GPU type "A100-80G-MIG-3G.40GB"')


def test_capacity_counts_slices_per_profile() -> None:
    pods = [_pod("p", "mig-0", "nvidia.com/mig-3g.40gb", 1)]
    rows = gpu_nodes([], [MIG_NODE, WHOLE_NODE])
    report = compute_capacity(rows, allocated_by_node(pods), [_job(MIG)], pods)
    by_type = {t.gpu_type: t for t in report.types}
    mig = by_type[MIG]
    assert (mig.nodes, mig.total, mig.allocated, mig.free, mig.pending) == (1, 2, 1, 1, 1)
    assert by_type["H100-MIG-1G.10GB"].total == 1
    assert (by_type["H100"].total, by_type["H100"].free) == (8, 8)
    assert not mig.notes


def test_a_slice_costs_its_fraction_of_the_parent_rate_unless_it_has_a_sku() -> None:
    catalog = default_catalog()
    rate = select_rate(MIG, catalog)
    assert rate is not None
    assert (rate.sku, rate.gpu_type) == ("h100-80g", MIG)
    assert rate.per_gpu_hour == pytest.approx(8.00 * 3 / 7)
    assert select_rate("nvidia_h100_80gb_hbm3_1g.10gb", catalog).per_gpu_hour == pytest.approx(  # type: ignore[union-attr]
        8.00 / 7
    )
    assert select_rate("MIG-3g.40gb", catalog) is None
    own = catalog[0].model_copy(deep=True)
    own.metadata.name = "h100-3g"
    own.spec.gpu_type = MIG
    own.spec.hourly_rate = 3.0
    assert select_rate(MIG, [*catalog, own]).per_gpu_hour == 3.0  # type: ignore[union-attr]
    estimate = estimate_cost(_job(MIG, gpus=2), "ns", catalog, [], [])
    assert estimate is not None and estimate.per_hour == pytest.approx(2 * 8.00 * 3 / 7)


def test_placement_uses_the_slices_of_the_profile() -> None:
    nodes = [NodeView.from_node(MIG_NODE), NodeView.from_node(WHOLE_NODE)]
    req = Requirements(gpu_type=MIG, gpus=1, network="", node_selector={}, nodes=1)
    assert select_nodes(req, nodes, []).nodes == ("mig-0",)
    used = [PodView.from_pod(_pod(f"p{i}", "mig-0", "nvidia.com/mig-3g.40gb", 1)) for i in (0, 1)]
    miss = select_nodes(req, nodes, used)
    assert not miss.ok and "mig-0 has 0/2 free" in miss.message
    whole = Requirements(gpu_type="H100", gpus=1, network="", node_selector={}, nodes=2)
    assert not select_nodes(whole, nodes, []).ok  # the MIG node has no whole GPUs


def test_a_mig_node_registers_ready_and_feeds_the_webhook_inventory() -> None:
    view = NodeView.from_node(MIG_NODE)
    status = gpu_node_status({"gpuCount": 1}, view)
    assert status["phase"] == "Ready" and "3 MIG slice(s) allocatable" in status["message"]
    labelled = NodeView.from_node(
        {**MIG_NODE, "metadata": {"name": "mig-0", "labels": {"gryvia.io/gpu": "H100"}}}
    )
    assert (MIG, 2) in node_inventory([labelled])


def test_sandbox_mig_node_spec() -> None:
    groups = parse_node_spec("1xH100-MIG-3g.40gb:2,1xcpu")
    assert groups == [NodeGroup(1, "H100", 2, "3g.40gb"), NodeGroup(1, None, 0)]
    node = build_node(groups[0], 0)
    assert node["metadata"]["name"] == "gpu-h100-mig-3g.40gb-0"
    assert node["status"]["allocatable"]["nvidia.com/mig-3g.40gb"] == "2"
    assert "nvidia.com/gpu" not in node["status"]["allocatable"]
    assert node["metadata"]["labels"]["nvidia.com/gpu.count"] == "1"
    for bad in ("1xH100-MIG-9g.90gb:2", "1xH100-MIG-3g.40gb", "1xZ9-MIG-3g.40gb:1"):
        with pytest.raises(NodeSpecError, match="--nodes"):
            parse_node_spec(bad)


def test_quota_allows_a_slice_where_its_parent_is_allowed_and_validation_sees_slices() -> None:
    from gryvia_operator.api import GryviaAIJob, GryviaQuota
    from gryvia_operator.api.validation import inventory_warnings
    from gryvia_operator.reconcile.quotas import job_view, sku_rejection, static_rejection

    def quota(*allowed: str) -> GryviaQuota:
        spec = {"team": "t", "namespaces": ["ns"], "gpuQuota": {"maxGPUs": 8}}
        spec["gpuQuota"]["allowedGPUTypes"] = list(allowed)  # type: ignore[index]
        return GryviaQuota.model_validate({"metadata": {"name": "q"}, "spec": spec})

    obj = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAIJob",
        "metadata": {"name": "m", "namespace": "ns"},
        "spec": {"type": "training", "image": "x", "gpus": 1, "gpuType": MIG},
    }
    view = job_view(obj)
    assert static_rejection(view, quota("H100")) is None
    assert static_rejection(view, quota(MIG)) is None
    assert static_rejection(view, quota("A100-80G")) is not None
    assert sku_rejection(view, "t", ["H100"]) is None
    assert sku_rejection(view, "t", ["L40"]) is not None
    job = GryviaAIJob.model_validate(obj)
    assert inventory_warnings(job, [("H100", 8), (MIG, 2)]) == []
    assert inventory_warnings(job, [("H100", 8)])[0].field == "spec.gpuType"
