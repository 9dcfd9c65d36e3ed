"""The chart's operator ClusterRole grants every permission the operator checks for at start
(`gryvia_operator.controller.permissions.required`), for the settings the chart itself passes
the operator: the rendered Deployment's args."""

from __future__ import annotations

import pytest

from gryvia_operator.controller.permissions import Permission, describe, required, review
from gryvia_operator.settings import parse_settings
from tests.unit.test_chart import container, grants, one, render

ALL_FEATURES = (
    "aiOperator.jobHooks.enabled=true,aiOperator.reservations.enabled=true,"
    "aiOperator.workflows.enabled=true,aiOperator.inference.enabled=true,"
    "aiOperator.priorities.enabled=true,aiOperator.kueue.enabled=true,"
    "aiOperator.modelRegistry.enabled=true,"
    "aiOperator.checkpointGuards.enabled=true,aiOperator.autotuners.enabled=true,"
    "gpuOperator.gpuSharing.enabled=true,billing.ledger.enabled=true"
)


@pytest.mark.parametrize(
    "setting",
    ["", ALL_FEATURES, "webhook.selfRegister=true", "peering.enabled=false"],
    ids=["defaults", "all-features", "self-register", "no-peering"],
)
def test_the_chart_grants_what_the_operator_checks_for(setting: str) -> None:
    objs = render("--set", setting) if setting else render()
    settings = parse_settings(container(objs)["args"])
    granted = grants(one(objs, "ClusterRole", "gryvia-operator"))
    needed = {(p.group, p.resource, p.verb, p.name) for p in required(settings)}
    assert needed - granted == set()


def test_features_off_need_none_of_their_permissions() -> None:
    base = required(parse_settings([]))
    on = required(parse_settings(["--enable-kueue", "--enable-inference", "--peering", "x"]))
    assert Permission("kueue.x-k8s.io", "clusterqueues", "create") in on - base
    assert Permission("apps", "deployments", "create") in on - base
    assert Permission("kopf.dev", "kopfpeerings", "patch") in on - base
    assert base < on


def test_review_body_and_message_name_the_permission() -> None:
    log = Permission("", "pods/log", "get")
    body = review(log, "team-a")["spec"]["resourceAttributes"]
    assert body == {
        "group": "",
        "resource": "pods",
        "subresource": "log",
        "verb": "get",
        "namespace": "team-a",
    }
    bind = Permission("rbac.authorization.k8s.io", "clusterroles", "bind", "gryvia-tenant-admin")
    assert review(bind, None)["spec"]["resourceAttributes"]["name"] == "gryvia-tenant-admin"
    lines = describe([(Permission("", "pods", "delete"), None), (bind, "t")])
    assert lines[0].startswith(
        "missing permission: the operator's account may not delete pods (cluster-wide); grant"
    )
    assert (
        "bind clusterroles.rbac.authorization.k8s.io (gryvia-tenant-admin) in namespace t"
        in (lines[1])
    )
