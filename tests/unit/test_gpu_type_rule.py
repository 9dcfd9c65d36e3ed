"""One GPU type rule everywhere: `h100`, `H100`, `h-100` and `NVIDIA-H100-80GB-HBM3` are the
same type for validation, the submit plan, the webhook's quota policy, the operator's quota
gate, placement and its node selector, capacity and the price catalog."""

from __future__ import annotations

import pytest

from gryvia_cli.core.capacity import compute_capacity
from gryvia_cli.core.jobs import summarize_job
from gryvia_cli.core.nodes import gpu_nodes
from gryvia_cli.core.plan import plan_job
from gryvia_operator.api import GryviaAIJob, GryviaQuota
from gryvia_operator.api.pricing import default_catalog, select_rate
from gryvia_operator.api.validation import inventory_warnings
from gryvia_operator.reconcile.placement import select_nodes
from gryvia_operator.reconcile.podtemplate import pod_node_selector
from gryvia_operator.reconcile.quotas import job_view, static_rejection
from tests.builders import gpu_node, make_job
from tests.unit.cli.helpers import h100

SPELLINGS = ("h100", "H100", "h-100", "NVIDIA-H100-80GB-HBM3", " H 100 ")


def _quota(*allowed: str) -> GryviaQuota:
    return GryviaQuota.model_validate(
        {
            "metadata": {"name": "q"},
            "spec": {
                "team": "t",
                "namespaces": ["ml"],
                "gpuQuota": {"maxGPUs": 64, "allowedGPUTypes": list(allowed)},
            },
        }
    )


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_surface_reads_the_spelling_as_h100(spelling: str) -> None:
    obj = make_job("a").gpus(8).gpu_type(spelling).obj()
    job = GryviaAIJob.model_validate(obj)
    assert job.spec.gpu_type_key == "H100"
    # gryvia validate / the webhook: an H100 node counts as a node of the type
    assert inventory_warnings(job, [("H100", 8)]) == []
    # the submit plan lands on the H100 node, as the operator's node selector will
    nodes = gpu_nodes([], [h100("gpu-h100-0"), h100("gpu-h100-1")])
    plan = plan_job(summarize_job(obj), nodes, {})
    assert plan.fits_now and [n for n, _ in plan.candidates] == ["gpu-h100-0", "gpu-h100-1"]
    assert pod_node_selector(job)["gryvia.io/gpu"] == "H100"
    placed = select_nodes(job, [gpu_node("n1", "H100"), gpu_node("n2", "A100-80G")], [])
    assert placed.nodes == ("n1",)
    # capacity counts the job's demand under H100
    report = compute_capacity(nodes, {}, [summarize_job(obj)], [], gpu_type=spelling)
    assert [(t.gpu_type, t.pending) for t in report.types] == [("H100", 8)]
    # the price catalog prices it as H100
    rate = select_rate(job.spec.gpu_type, default_catalog())
    assert rate is not None and rate.gpu_type == "H100" and rate.per_gpu_hour == 8.0
    # the quota gate and the webhook's policy allow it where H100 is allowed
    assert static_rejection(job_view(obj), _quota("H100")) is None
    assert static_rejection(job_view(obj), _quota("A100-80G")) is not None


@pytest.mark.parametrize("spelling", ("a100", "A100", "NVIDIA-A100"))
def test_a_family_runs_on_every_variant_and_a_variant_only_on_itself(spelling: str) -> None:
    # issue 39: `gpuType: a100` (and Slurm's --gres=gpu:a100:8) must land on A100-80G nodes
    obj = make_job("fam").gpus(8).gpu_type(spelling).obj()
    job = GryviaAIJob.model_validate(obj)
    assert job.spec.gpu_type_key == "A100"
    assert pod_node_selector(job) == {"gryvia.io/gpu-family": "A100"}
    assert inventory_warnings(job, [("A100-80G", 8)]) == []
    assert inventory_warnings(job, [("H100", 8)]) != []
    nodes = [gpu_node("h", "H100"), gpu_node("a80", "A100-80G"), gpu_node("l", "L40")]
    assert select_nodes(job, nodes, []).nodes == ("a80",)
    plan = plan_job(summarize_job(obj), gpu_nodes([], [h100("gpu-h100-0")]), {})
    assert not plan.fits_now
    # the dearest variant before it lands: the most it can cost
    rate = select_rate(job.spec.gpu_type, default_catalog())
    assert rate is not None and rate.gpu_type.startswith("A100")
    # a variant asks for itself only; L40 and L40S are different types
    exact = GryviaAIJob.model_validate(make_job("v").gpus(8).gpu_type("A100-40G").obj())
    assert pod_node_selector(exact) == {"gryvia.io/gpu": "A100-40G"}
    assert select_nodes(exact, nodes, []).nodes == ()
    l40 = GryviaAIJob.model_validate(make_job("l").gpus(4).gpu_type("L40").obj())
    assert select_nodes(l40, [gpu_node("s", "L40S", 4)], []).nodes == ()
    # the quota gate: allowing the family allows its variants, not other types
    variant = make_job("q").gpus(8).gpu_type("A100-80G").obj()
    assert static_rejection(job_view(variant), _quota("A100")) is None
    assert static_rejection(job_view(variant), _quota("H100")) is not None


def test_prices_follow_the_family() -> None:
    from gryvia_operator.api import GryviaGpuSku

    def sku(name: str, gpu_type: str, rate: str) -> GryviaGpuSku:
        return GryviaGpuSku.model_validate(
            {
                "metadata": {"name": name},
                "spec": {"gpuType": gpu_type, "hourlyRate": rate, "currency": "USD"},
            }
        )

    family = [sku("a100", "A100", "3.00")]
    rate = select_rate("A100-80G", family)  # a family's SKU prices each variant
    assert rate is not None and rate.sku == "a100"
    both = [*family, sku("a100-80g", "A100-80G", "4.00"), sku("a100-40g", "A100-40G", "2.50")]
    exact = select_rate("A100-40G", both)
    assert exact is not None and exact.sku == "a100-40g"  # its own SKU first
    variants = both[1:]
    dearest = select_rate("A100", variants)
    assert dearest is not None and dearest.sku == "a100-80g"
    assert select_rate("L40", [sku("l40s", "L40S", "2.00")]) is None
