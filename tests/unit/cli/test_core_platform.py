"""The platform report: operator detection, webhook, CRDs, GPU nodes, jobs (pure)."""

from __future__ import annotations

from gryvia_cli.core.jobs import summarize_job
from gryvia_cli.core.nodes import gpu_nodes
from gryvia_cli.core.platform import PlatformInputs, build_report, local_webhook_urls, pod_errors
from gryvia_cli.kube.resources import GRYVIA_RESOURCES
from tests.unit.cli.helpers import NOW, ago, gpunode, h100, make_job

EXPECTED = {res.plural: res.kind for res in GRYVIA_RESOURCES}
WEBHOOK = {
    "metadata": {"name": "gryvia-validating"},
    "webhooks": [
        {
            "name": "vgryviaaijob.gryvia.io",
            "failurePolicy": "Ignore",
            "clientConfig": {"url": "https://127.0.0.1:9443/validate"},
            "rules": [{"resources": ["gryviaaijobs"]}],
        }
    ],
}


def _inputs(**kw):  # type: ignore[no-untyped-def]
    base = dict(
        platform_namespace="gryvia-system",
        served=set(EXPECTED),
        expected=EXPECTED,
        webhooks=[WEBHOOK],
        gpu_nodes=gpu_nodes([gpunode("h0", "H100")], [h100("h0")]),
        jobs=[summarize_job(make_job("a").phase("Running").obj())],
        deployments=[],
    )
    base.update(kw)
    return PlatformInputs(**base)


def _deployment(ready: int, desired: int = 1):  # type: ignore[no-untyped-def]
    return {
        "metadata": {"name": "gryvia-operator"},
        "spec": {"replicas": desired},
        "status": {"readyReplicas": ready, "availableReplicas": ready},
    }


def test_healthy_platform_with_a_deployment() -> None:
    report = build_report(_inputs(deployments=[_deployment(1)]), NOW)
    assert report.overall == "ok" and not report.broken
    states = {c.name: c.state for c in report.components}
    assert states == {
        "Operator": "OK",
        "Webhook": "OK",
        "CRDs": "OK",
        "GPU nodes": "OK",
        "Jobs": "OK",
    }
    assert "Ready: 1/1" in report.components[0].message
    assert report.as_dict()["jobs"]["Running"] == 1


def test_missing_operator_and_crds_are_required_errors() -> None:
    report = build_report(_inputs(served=None), NOW)
    assert report.broken and report.overall == "error"
    errors = [c.name for c in report.components if c.state == "Error"]
    assert errors == ["Operator", "CRDs"]


def test_operator_from_a_fresh_or_stale_lease() -> None:
    lease = {
        "metadata": {"name": "gryvia-operator", "namespace": "default"},
        "spec": {"holderIdentity": "laptop", "renewTime": ago(5), "leaseDurationSeconds": 15},
    }
    ok = build_report(_inputs(leases=[lease]), NOW).components[0]
    assert ok.state == "OK" and "held by laptop" in ok.message
    lease["spec"]["renewTime"] = ago(600)
    stale = build_report(_inputs(leases=[lease]), NOW).components[0]
    assert stale.state == "Error" and "10m" in stale.message


def test_operator_from_a_local_webhook_probe() -> None:
    urls = local_webhook_urls([WEBHOOK])
    assert urls == ["https://127.0.0.1:9443/validate"]
    up = build_report(_inputs(local_webhooks=[(urls[0], True)]), NOW).components[0]
    assert up.state == "OK" and "answers" in up.message
    down = build_report(_inputs(local_webhooks=[(urls[0], False)]), NOW).components[0]
    assert down.state == "Error"


def test_degraded_partial_deployment_and_missing_webhook_are_warnings() -> None:
    nodes = gpu_nodes(
        [gpunode("h0", "H100"), gpunode("h1", "H100", phase="Degraded")], [h100("h0"), h100("h1")]
    )
    report = build_report(
        _inputs(deployments=[_deployment(1, 2)], webhooks=[], gpu_nodes=nodes), NOW
    )
    states = {c.name: c.state for c in report.components}
    assert states["Operator"] == "Warning" and states["Webhook"] == "Warning"
    assert states["GPU nodes"] == "Warning" and report.overall == "warn" and not report.broken


def test_unreadable_parts_become_warnings_and_some_kinds_missing() -> None:
    served = set(EXPECTED) - {"gryviabudgets"}
    report = build_report(
        _inputs(
            webhooks=None, jobs=None, gpu_nodes=None, served=served, deployments=[_deployment(1)]
        ),
        NOW,
    )
    states = {c.name: c.state for c in report.components}
    assert states == {
        "Operator": "OK",
        "Webhook": "Warning",
        "CRDs": "Warning",
        "GPU nodes": "Warning",
        "Jobs": "Warning",
    }
    assert not report.broken


def test_pod_errors() -> None:
    pods = [
        {
            "metadata": {"name": "op-1"},
            "status": {
                "phase": "Running",
                "containerStatuses": [
                    {"ready": False, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
                ],
            },
        },
        {
            "metadata": {"name": "op-2"},
            "status": {
                "phase": "Running",
                "containerStatuses": [{"ready": True, "state": {"running": {}}}],
            },
        },
        {"metadata": {"name": "op-3"}, "status": {"phase": "Pending"}},
    ]
    assert pod_errors(pods) == ["pod op-1: CrashLoopBackOff", "pod op-3: Pending"]
