"""GryviaInferenceService, pure: children (Deployments, Service, HPA), canary split as
replica ratios, spec validation and status from the Deployments."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gryvia_operator.api.inference import GryviaInferenceService
from gryvia_operator.reconcile.inference import (
    build_status,
    desired,
    needs_write,
    plan_writes,
    split_replicas,
    version_of,
)


def isvc(**spec: Any) -> GryviaInferenceService:
    return GryviaInferenceService.model_validate(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaInferenceService",
            "metadata": {"name": "llm", "namespace": "ns", "uid": "u-1"},
            "spec": {"image": "acme/llm:1.2", "port": 8000, **spec},
        }
    )


def by_kind(svc: GryviaInferenceService) -> dict[str, dict[str, Any]]:
    return {f"{b['kind']}/{b['metadata']['name']}": b for b in desired(svc).apply}


@pytest.mark.parametrize(
    ("total", "weight", "split"),
    [
        (4, 0, (4, 0)),
        (4, 25, (3, 1)),
        (10, 30, (7, 3)),
        (1, 10, (1, 1)),
        (2, 100, (0, 2)),
        (3, 50, (1, 2)),
        (0, 50, (0, 0)),
    ],
)
def test_canary_split_is_a_replica_ratio(total: int, weight: int, split: tuple[int, int]) -> None:
    assert split_replicas(total, weight) == split


def test_version_from_tag_or_spec() -> None:
    assert version_of("reg:5000/acme/llm:1.2", None) == "1.2"
    assert version_of("reg:5000/acme/llm", None) == "latest"
    assert version_of("acme/llm:1.2", "v7") == "v7"


def test_deployment_service_and_probe() -> None:
    kids = by_kind(isvc(gpus=2, cpu="2", healthCheck={"path": "/healthz"}, replicas=3))
    dep = kids["Deployment/llm"]
    assert dep["spec"]["replicas"] == 3
    ctr = dep["spec"]["template"]["spec"]["containers"][0]
    assert ctr["resources"]["limits"] == {"nvidia.com/gpu": "2"}
    assert ctr["resources"]["requests"]["cpu"] == "2"
    assert ctr["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": 8000}
    assert dep["metadata"]["ownerReferences"][0]["uid"] == "u-1"
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert labels["gryvia.io/model-version"] == "1.2"
    assert dep["spec"]["selector"]["matchLabels"] == {
        "gryvia.io/inference-service": "llm",
        "gryvia.io/inference-track": "stable",
    }
    svc = kids["Service/llm"]
    assert svc["spec"]["selector"] == {"gryvia.io/inference-service": "llm"}
    assert svc["spec"]["ports"][0]["port"] == 8000
    assert "HorizontalPodAutoscaler/llm" not in kids
    assert ("Deployment", "llm-canary") in desired(isvc()).delete


def test_command_probe() -> None:
    dep = by_kind(isvc(healthCheck={"command": ["test", "-f", "ready"]}))["Deployment/llm"]
    probe = dep["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    assert probe["exec"] == {"command": ["test", "-f", "ready"]}


def test_canary_deployment_shares_the_service() -> None:
    kids = by_kind(isvc(replicas=4, canary={"image": "acme/llm:1.3", "weight": 25}))
    assert kids["Deployment/llm"]["spec"]["replicas"] == 3
    canary = kids["Deployment/llm-canary"]
    assert canary["spec"]["replicas"] == 1
    labels = canary["spec"]["template"]["metadata"]["labels"]
    assert labels["gryvia.io/inference-track"] == "canary"
    assert labels["gryvia.io/model-version"] == "1.3"


def test_hpa_on_cpu_or_custom_metric() -> None:
    kids = by_kind(isvc(autoscaling={"minReplicas": 1, "maxReplicas": 4}))
    assert "replicas" not in kids["Deployment/llm"]["spec"]  # the HPA decides
    hpa = kids["HorizontalPodAutoscaler/llm"]["spec"]
    assert hpa["scaleTargetRef"]["name"] == "llm" and hpa["maxReplicas"] == 4
    assert hpa["metrics"][0]["resource"]["target"]["averageUtilization"] == 80
    custom = by_kind(
        isvc(
            autoscaling={
                "minReplicas": 2,
                "maxReplicas": 8,
                "metric": "requests_in_flight",
                "targetAverageValue": "10",
            }
        )
    )["HorizontalPodAutoscaler/llm"]["spec"]["metrics"][0]
    assert custom["type"] == "Pods" and custom["pods"]["metric"]["name"] == "requests_in_flight"


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"autoscaling": {"minReplicas": 1, "maxReplicas": 2, "scaleToZero": True}}, "activator"),
        ({"autoscaling": {"minReplicas": 0, "maxReplicas": 2}}, "minReplicas"),
        ({"autoscaling": {"minReplicas": 3, "maxReplicas": 2}}, "maxReplicas"),
        ({"healthCheck": {}}, "exactly one"),
        ({"healthCheck": {"path": "healthz"}}, "start with /"),
    ],
)
def test_refused_specs(spec: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        isvc(**spec)


def test_needs_write_by_spec_hash() -> None:
    want = by_kind(isvc())["Deployment/llm"]
    assert needs_write(None, want)
    assert not needs_write(want, want)
    other = by_kind(isvc(replicas=2))["Deployment/llm"]
    assert needs_write(want, other)


def test_plan_writes_creates_patches_and_deletes_only_what_differs_or_it_owns() -> None:
    canaried = isvc(canary={"image": "acme/llm:1.3", "weight": 50})
    first = plan_writes(canaried, {})
    assert sorted(f"{b['kind']}/{b['metadata']['name']}" for b in first.create) == [
        "Deployment/llm", "Deployment/llm-canary", "Service/llm",
    ]  # fmt: skip
    assert first.patch == [] and first.delete == []
    have = {(b["kind"], b["metadata"]["name"]): b for b in first.create}
    assert plan_writes(canaried, have).create == []
    assert plan_writes(canaried, have).patch == []
    # the canary goes: its Deployment is deleted because the service owns it
    plain = plan_writes(isvc(replicas=2), have)
    assert plain.delete == [("Deployment", "llm-canary")]
    assert [(kind, name) for kind, name, _ in plain.patch] == [("Deployment", "llm")]
    patch = plain.patch[0][2]
    assert patch["spec"]["replicas"] == 2 and set(patch["metadata"]) == {"labels", "annotations"}
    # a same-named Deployment someone else owns is left alone
    foreign = dict(have[("Deployment", "llm-canary")])
    foreign["metadata"] = {**foreign["metadata"], "ownerReferences": [{"uid": "other"}]}
    assert plan_writes(isvc(), {**have, ("Deployment", "llm-canary"): foreign}).delete == []


def dep(generation: int, observed: int, replicas: int, updated: int, ready: int) -> Any:
    return {
        "metadata": {"generation": generation},
        "spec": {"replicas": replicas},
        "status": {
            "observedGeneration": observed,
            "replicas": replicas,
            "updatedReplicas": updated,
            "readyReplicas": ready,
        },
    }


def test_status_pending_ready_and_rollout() -> None:
    svc = isvc(replicas=2)
    pending = build_status(svc, dep(1, 1, 2, 2, 0), None, {})
    assert pending["phase"] == "Pending" and pending["readyReplicas"] == 0
    assert "servingVersion" not in pending
    ready = build_status(svc, dep(1, 1, 2, 2, 2), None, {})
    assert ready["phase"] == "Ready" and ready["servingVersion"] == "1.2"
    assert ready["url"] == "http://llm.ns.svc:8000" and ready["replicas"] == 2
    # A new version rolling out: the old one is still what is served.
    newer = isvc(replicas=2, image="acme/llm:1.3")
    rolling = build_status(newer, dep(2, 2, 2, 1, 2), None, ready)
    assert rolling["phase"] == "NotReady" and rolling["servingVersion"] == "1.2"
    assert "1.3" in rolling["message"]
    done = build_status(newer, dep(2, 2, 2, 2, 2), None, rolling)
    assert done["servingVersion"] == "1.3" and done["phase"] == "Ready"


def test_status_counts_the_canary() -> None:
    svc = isvc(replicas=3, canary={"image": "acme/llm:2", "weight": 34})
    st = build_status(svc, dep(1, 1, 2, 2, 2), dep(1, 1, 1, 1, 1), {})
    assert st["replicas"] == 3 and st["readyReplicas"] == 3 and st["phase"] == "Ready"
    assert st["canaryVersion"] == "2" and st["canaryReplicas"] == 1
