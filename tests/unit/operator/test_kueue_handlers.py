"""Kueue handlers against the in-memory API: a tenant's queues from its quota's per-type limits,
re-applied on change and removed with the tenant; a job's queue, priority class and Workload."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from gryvia_operator.api import GryviaAIJob, GryviaTenant
from gryvia_operator.api.resources import CLUSTER_QUEUE, LOCAL_QUEUE, WORKLOAD
from gryvia_operator.controller import kueuequeues
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, CHILDREN, NODES, QUOTAS
from gryvia_operator.handlers import kueue
from gryvia_operator.reconcile.aijob import Observed
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.kueue import KueueSettings, build_local_queue
from gryvia_operator.reconcile.kueuejob import kueue_job_status
from gryvia_operator.reconcile.kueuestatus import workload_view
from gryvia_operator.reconcile.views import ChildView, NodeView
from tests.builders import make_job
from tests.unit.operator.fakeapi import FakeApi

NOW = datetime(2025, 3, 1, tzinfo=UTC)


def _runtime(api: FakeApi, *, enabled: bool = True) -> Runtime:
    config = ReconcileConfig(kueue=KueueSettings(enabled=enabled))
    rt = Runtime(api=cast(Any, api), config=config, clock=lambda: NOW)
    nodes = [NodeView("h1", {"gryvia.io/gpu": "H100"}), NodeView("l1", {"gryvia.io/gpu": "L4"})]
    full: dict[str, dict[Any, list[Any]]] = {AIJOBS: {}, NODES: {n.name: [n] for n in nodes}}
    full.update({v: {} for v in CHILDREN.values()})
    full[QUOTAS] = {}  # the quota index: tests attach their quotas
    rt.indices.attach(full)
    return rt


def _tenant(name: str = "vision", gpus: int | None = None) -> GryviaTenant:
    spec: dict[str, Any] = {"quotas": {"concurrentGPUs": gpus}} if gpus else {}
    return GryviaTenant.model_validate(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaTenant",
            "metadata": {"name": name},
            "spec": spec,
        }
    )


def _quota(per_type: dict[str, int]) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaQuota",
        "metadata": {"name": "vision"},
        "spec": {
            "team": "vision",
            "namespaces": ["tenant-vision"],
            "gpuQuota": {"maxGPUs": 24, "perType": per_type},
        },
    }


def _nominal(api: FakeApi) -> dict[str, int]:
    cq = api.objects[("ClusterQueue", "", "gryvia-vision")]
    flavors = cq["spec"]["resourceGroups"][0]["flavors"]
    return {f["name"]: f["resources"][0]["nominalQuota"] for f in flavors}


async def test_tenant_queues_follow_the_quota_per_type_and_go_with_the_tenant() -> None:
    api = FakeApi()
    quotas = {"vision": [_quota({"H100": 16, "A100-80G": 8})]}
    rt = _runtime(api)
    rt.indices.attach({QUOTAS: quotas})
    applied: dict[str, Any] = {}
    assert await kueuequeues.ensure_tenant_queues(rt, _tenant(), applied)
    assert _nominal(api) == {
        "gryvia-a100-80g": 8,
        "gryvia-h100": 16,
        "gryvia-l4": 24,
        "gryvia-default": 0,
    }
    assert ("LocalQueue", "tenant-vision", "gryvia") in api.objects
    assert api.objects[("ResourceFlavor", "", "gryvia-a100-80g")]["spec"]["nodeLabels"] == {
        "gryvia.io/gpu": "A100-80G",
        "gryvia.io/gpu-family": "A100",
    }
    api.calls.clear()  # nothing changed: the refresh sends nothing, LISTs nothing
    assert not await kueuequeues.ensure_tenant_queues(rt, _tenant(), applied)
    assert api.calls == []
    quotas["vision"] = [_quota({"H100": 32, "A100-80G": 8})]  # the quota changed: re-applied
    assert await kueuequeues.ensure_tenant_queues(rt, _tenant(), applied)
    assert _nominal(api)["gryvia-h100"] == 32
    assert not [c for c in api.calls if c[0] == "list"]
    await kueuequeues.remove_tenant_queues(api, "vision")
    assert ("ClusterQueue", "", "gryvia-vision") not in api.objects
    assert ("LocalQueue", "tenant-vision", "gryvia") not in api.objects


async def test_tenant_limit_wins_over_the_quotas_general_limit() -> None:
    api = FakeApi()
    rt = _runtime(api)
    await kueuequeues.ensure_tenant_queues(rt, _tenant(gpus=12))
    assert _nominal(api) == {"gryvia-default": 12}


def _job(priority: int = 50) -> GryviaAIJob:
    return make_job("train", "tenant-vision").gpus(8).set(priority=priority).model()


async def test_job_in_a_tenant_with_a_default_queue_gets_it_and_its_priority_class() -> None:
    api = FakeApi()
    api.put(build_local_queue("vision"))
    rt = _runtime(api)
    observed = await kueue.with_kueue(rt, _job(), Observed())
    assert observed.kueue_queue == "gryvia" and observed.kueue_workload is None
    wpc = api.objects[("WorkloadPriorityClass", "", "gryvia-priority-50")]
    assert wpc["value"] == 50


async def test_workload_of_the_batch_job_is_observed() -> None:
    api = FakeApi()
    api.put(build_local_queue("vision"))
    api.put(
        {
            "kind": "Workload",
            "metadata": {
                "name": "job-train-abc",
                "namespace": "tenant-vision",
                "labels": {kueue.JOB_UID_LABEL: "job-uid"},
            },
            "status": {"conditions": []},
        }
    )
    batch = ChildView(kind="Job", namespace="tenant-vision", name="train", uid="job-uid")
    observed = await kueue.with_kueue(_runtime(api), _job(), Observed(workloads=(batch,)))
    assert observed.kueue_workload is not None
    assert observed.kueue_workload["metadata"]["name"] == "job-train-abc"


def _admitted(name: str, uid: str, gpus: int) -> dict[str, Any]:
    assignment = {
        "flavors": {"nvidia.com/gpu": "gryvia-h100"},
        "resourceUsage": {"nvidia.com/gpu": str(gpus)},
    }
    return {
        "kind": "Workload",
        "metadata": {
            "name": name,
            "namespace": "tenant-vision",
            "labels": {kueue.JOB_UID_LABEL: uid},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name}],
            "managedFields": [{"manager": "kueue"}],
        },
        "spec": {"podSets": [{"name": "main", "template": {"spec": {"containers": []}}}]},
        "status": {
            "admission": {"clusterQueue": "gryvia-vision", "podSetAssignments": [assignment]},
            "conditions": [
                {"type": "QuotaReserved", "status": "True"},
                {"type": "Admitted", "status": "True"},
            ],
        },
    }


async def test_workloads_and_queues_come_from_the_informers_once_listed_with_no_call_per_job() -> (
    None
):
    api = FakeApi()
    api.put(build_local_queue("vision"))
    cluster_queue = {
        "kind": "ClusterQueue",
        "metadata": {"name": "gryvia-vision"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "gryvia-h100",
                            "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}],
                        }
                    ],
                }
            ]
        },
    }
    api.put(cluster_queue)
    rt = _runtime(api)
    kueue.register(cast(Any, None), rt)
    informer = rt.informers[(WORKLOAD.path(), "")]
    assert (WORKLOAD.path(), "") in rt.optional_informers  # start-up does not wait for Kueue
    for body in (_admitted("train", "job-uid", 8), _admitted("other", "other-uid", 4)):
        informer.apply("ADDED", body)
    batch = ChildView(kind="Job", namespace="tenant-vision", name="train", uid="job-uid")

    before = await kueue.with_kueue(rt, _job(), Observed(workloads=(batch,)))
    assert before.kueue_workload is None  # not synced yet: a LIST of the API (which has none)
    assert ("list", "Workload", "") in api.calls

    informer.synced.set()
    for res, body in ((LOCAL_QUEUE, build_local_queue("vision")), (CLUSTER_QUEUE, cluster_queue)):
        queues = rt.informers[(res.path(), "")]
        queues.apply("ADDED", body)
        queues.synced.set()
    api.calls.clear()
    observed = await kueue.with_kueue(rt, _job(), Observed(workloads=(batch,)))
    assert observed.kueue_workload is not None
    assert observed.kueue_workload["metadata"]["name"] == "train"
    assert "spec" not in observed.kueue_workload  # the pod templates are not kept
    assert "managedFields" not in observed.kueue_workload["metadata"]
    assert len(observed.kueue_queue_workloads) == 2  # the namespace's, for the borrowed GPUs
    assert api.calls == []  # no LIST of Workloads, no GET of the LocalQueue or ClusterQueue
    view = workload_view(observed.kueue_workload)
    status = kueue_job_status(
        None, "gryvia", view, observed.kueue_cluster_queue, 8, observed.kueue_queue_workloads
    )
    assert status["borrowedGPUs"] == 4  # 12 admitted in the flavor, 8 nominal


async def test_a_workload_change_queues_the_job_that_owns_its_batch_job() -> None:
    rt = _runtime(FakeApi())
    kueue.workload_event(rt, "MODIFIED", _admitted("train", "u", 1))
    kueue.workload_event(rt, "", _admitted("old", "u2", 1))
    assert await rt.jobs.get() == ("tenant-vision", "train")  # a first-list one comes last
    assert await rt.jobs.get() == ("tenant-vision", "old")


async def test_integration_off_or_no_queue_leaves_the_job_to_gryvia() -> None:
    api = FakeApi()
    assert (
        await kueue.with_kueue(_runtime(api, enabled=False), _job(), Observed())
    ).kueue_queue is None
    assert (await kueue.with_kueue(_runtime(api), _job(), Observed())).kueue_queue is None
    assert not any(k[0] == "WorkloadPriorityClass" for k in api.objects)
