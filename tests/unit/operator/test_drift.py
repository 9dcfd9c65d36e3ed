"""Drift patches: what a hand edit of a child looks like and what puts it back."""

from __future__ import annotations

import copy
from typing import Any

from gryvia_operator.reconcile.children import (
    build_batch_job,
    build_headless_service,
    build_statefulset,
)
from gryvia_operator.reconcile.drift import drift_patch
from gryvia_operator.reconcile.views import ChildView
from tests.builders import make_job


def _observed(obj: dict[str, Any]) -> ChildView:
    return ChildView.from_object(obj)


def test_job_only_suspend_is_synced() -> None:
    desired = build_batch_job(make_job().model())
    observed = copy.deepcopy(desired)
    observed["spec"]["suspend"] = True
    observed["spec"]["parallelism"] = 7
    assert drift_patch(desired, _observed(observed)) == {"spec": {"suspend": False}}
    assert drift_patch(desired, _observed(desired)) is None


def test_statefulset_replicas_and_template() -> None:
    job = make_job("s").type("inference").gpus(1).distributed(2).model()
    desired = build_statefulset(job)
    observed = copy.deepcopy(desired)
    # the API server defaults fieldRef.apiVersion: not drift
    for env in observed["spec"]["template"]["spec"]["containers"][0]["env"]:
        if "valueFrom" in env:
            env["valueFrom"]["fieldRef"]["apiVersion"] = "v1"
    observed["spec"]["template"]["spec"]["containers"][0]["terminationMessagePath"] = "/dev/x"
    assert drift_patch(desired, _observed(observed)) is None
    observed["spec"]["replicas"] = 5
    observed["spec"]["template"]["spec"]["containers"][0]["image"] = "hacked"
    patch = drift_patch(desired, _observed(observed))
    assert patch is not None
    assert patch["spec"]["replicas"] == 2
    assert patch["spec"]["template"] == desired["spec"]["template"]


def test_service_selector_ports_and_publish() -> None:
    desired = build_headless_service(make_job("t").model())
    observed = copy.deepcopy(desired)
    observed["spec"]["ports"][0]["targetPort"] = 29500
    assert drift_patch(desired, _observed(observed)) is None
    observed["spec"]["selector"] = {"app": "x"}
    observed["spec"]["publishNotReadyAddresses"] = False
    observed["spec"]["ports"] = [{"name": "other", "port": 80}]
    patch = drift_patch(desired, _observed(observed))
    assert patch == {
        "spec": {
            "selector": {"gryvia.io/job": "t"},
            "ports": desired["spec"]["ports"],
            "publishNotReadyAddresses": True,
        }
    }


def test_pvc_is_never_patched() -> None:
    obj = {"kind": "PersistentVolumeClaim", "metadata": {"name": "x"}, "spec": {}}
    assert drift_patch(obj, _observed(obj)) is None
