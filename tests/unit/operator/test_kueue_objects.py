"""Kueue integration, pure parts: queue choice, Job labels, priority classes, a tenant's flavors,
ClusterQueue and LocalQueue (behaviour.md section 6, per-type quota of issue 19)."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_operator.reconcile import kueue as kq

ON = kq.KueueSettings(enabled=True)


def _queue(settings: kq.KueueSettings = ON, **kw: Any) -> str | None:
    args: dict[str, Any] = {
        "spec_queue": None,
        "annotations": {},
        "labels": {},
        "namespace": "tenant-vision",
        "default_queue_exists": True,
    }
    args.update(kw)
    return kq.resolve_queue(settings, **args)


def test_queue_choice_order_spec_then_annotation_then_label_then_default() -> None:
    ann = {kq.ANNOTATION_QUEUE_NAME: "from-annotation"}
    lab = {kq.LABEL_QUEUE_NAME: "from-label"}
    assert _queue(spec_queue="q", annotations=ann, labels=lab) == "q"
    assert _queue(annotations=ann, labels=lab) == "from-annotation"
    assert _queue(labels=lab) == "from-label"
    assert _queue() == "gryvia"


def test_default_queue_only_in_tenant_namespaces_and_when_it_exists_unless_strict() -> None:
    assert _queue(namespace="ml") is None
    assert _queue(default_queue_exists=False) is None
    strict = kq.KueueSettings(enabled=True, strict=True)
    assert _queue(strict, default_queue_exists=False) == "gryvia"


def test_integration_off_never_picks_a_queue() -> None:
    assert _queue(kq.KueueSettings(), spec_queue="q") is None


@pytest.mark.parametrize(
    ("priority", "name"),
    [(None, None), (0, None), (9, None), (10, "gryvia-priority-10"), (59, "gryvia-priority-50")],
)
def test_priority_bands_of_ten(priority: int | None, name: str | None) -> None:
    assert kq.priority_class_name(priority) == name


def test_job_labels_carry_queue_and_priority_class() -> None:
    assert kq.job_labels("gryvia", 75) == {
        kq.LABEL_QUEUE_NAME: "gryvia",
        kq.LABEL_PRIORITY_CLASS: "gryvia-priority-70",
    }
    assert kq.job_labels("gryvia", 5) == {kq.LABEL_QUEUE_NAME: "gryvia"}


def test_workload_priority_class_value_is_its_band() -> None:
    wpc = kq.build_workload_priority_class("gryvia-priority-70")
    assert wpc["kind"] == "WorkloadPriorityClass" and wpc["value"] == 70
    with pytest.raises(ValueError, match="not a Gryvia priority class"):
        kq.build_workload_priority_class("high")


def test_flavor_names_are_dns_labels() -> None:
    assert kq.flavor_name("A100-80G") == "gryvia-a100-80g"
    assert kq.flavor_name("H100 SXM") == "gryvia-h100-sxm"
    flavor = kq.build_resource_flavor("A100-80G")
    # the family label keeps a job naming only `A100` off every other type's flavor
    assert flavor["spec"]["nodeLabels"] == {
        "gryvia.io/gpu": "A100-80G",
        "gryvia.io/gpu-family": "A100",
    }
    assert kq.build_resource_flavor("H100")["spec"]["nodeLabels"]["gryvia.io/gpu-family"] == "H100"
    assert kq.build_resource_flavor(None)["spec"] == {}


def test_nominal_quota_source_tenant_then_quota_then_unlimited() -> None:
    assert kq.plan_tenant_queue(32, 16, None).general_gpus == 32
    assert kq.plan_tenant_queue(0, 16, None).source == "quota"
    plan = kq.plan_tenant_queue(None, None, None)
    assert (plan.general_gpus, plan.source) == (kq.UNLIMITED_GPUS, "unlimited")


def _gpu_quotas(cq: dict[str, Any]) -> dict[str, int]:
    flavors = cq["spec"]["resourceGroups"][0]["flavors"]
    return {f["name"]: f["resources"][0]["nominalQuota"] for f in flavors}


def test_without_per_type_limits_one_default_flavor_holds_the_general_quota() -> None:
    cq = kq.build_cluster_queue("vision", kq.plan_tenant_queue(24, None, None), ["H100"])
    assert _gpu_quotas(cq) == {"gryvia-default": 24}


def test_per_type_quota_gives_each_type_its_flavor_and_no_gpu_overflow_flavor() -> None:
    plan = kq.plan_tenant_queue(None, 40, {"H100": 16, "A100-80G": 8})
    cq = kq.build_cluster_queue("vision", plan, ["H100", "L4"])
    assert _gpu_quotas(cq) == {
        "gryvia-a100-80g": 8,
        "gryvia-h100": 16,
        "gryvia-l4": 40,  # a type without its own limit gets the general one
        "gryvia-default": 0,  # CPU-only jobs; GPU jobs cannot overflow into it
    }
    spec = cq["spec"]
    assert cq["metadata"]["name"] == "gryvia-vision"
    assert cq["metadata"]["annotations"]["gryvia.io/quota-source"] == "quota"
    assert spec["cohortName"] == "gryvia"
    assert spec["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "tenant-vision"
    }
    assert spec["preemption"] == {
        "withinClusterQueue": "LowerPriority",
        "reclaimWithinCohort": "Any",
        "borrowWithinCohort": {"policy": "LowerPriority"},
    }
    group = spec["resourceGroups"][0]
    assert group["coveredResources"] == ["nvidia.com/gpu", "cpu", "memory"]
    for flavor in group["flavors"]:
        assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]


def test_borrowing_and_lending_limits_per_flavor() -> None:
    plan = kq.plan_tenant_queue(None, None, {"H100": 16}, borrowing_limit=8, lending_limit=32)
    flavors = kq.build_cluster_queue("nlp", plan, [])["spec"]["resourceGroups"][0]["flavors"]
    h100 = flavors[0]["resources"][0]
    assert h100 == {
        "name": "nvidia.com/gpu",
        "nominalQuota": 16,
        "borrowingLimit": 8,
        "lendingLimit": 16,  # never more than the flavor's nominal quota
    }


def test_tenant_objects_flavors_then_cluster_queue_then_local_queue() -> None:
    objs = kq.build_tenant_objects("vision", kq.plan_tenant_queue(8, None, {"H100": 8}), [])
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("ResourceFlavor", "gryvia-h100"),
        ("ResourceFlavor", "gryvia-default"),
        ("ClusterQueue", "gryvia-vision"),
        ("LocalQueue", "gryvia"),
    ]
    local = objs[-1]
    assert local["metadata"]["namespace"] == "tenant-vision"
    assert local["spec"] == {"clusterQueue": "gryvia-vision"}
