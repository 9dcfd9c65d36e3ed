"""The policy views against the sandbox: KubeSource lists GryviaJobHooks and
GryviaCheckpointGuards of the namespace, GryviaPriorities and GryviaGPUSharingPolicies through
gryvia_cli/kube for `:hooks`, `:checkpoints`, `:priorities` and `:gpusharing`, and a
GryviaReservation created while `:reservations` is shown arrives through the watch."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from gryvia_cli.tui import make_app
from gryvia_cli.tui.kubesource import KubeSource
from gryvia_cli.tui.screens.registry import ListScreen
from tests.conftest import SandboxHandle
from tests.tui.waits import wait_until

pytestmark = [pytest.mark.tui, pytest.mark.integration, pytest.mark.sandbox]
API = "gryvia.io/v1alpha1"


def _policies(name: str, ns: str) -> list[dict[str, Any]]:
    nowhere = {"matchLabels": {"views-test": name}}  # selects no node or job
    return [
        {
            "apiVersion": API,
            "kind": "GryviaJobHook",
            "metadata": {"name": f"{name}-hook", "namespace": ns},
            "spec": {"events": ["Failed"], "webhook": {"url": "https://hooks.invalid/x"}},
        },
        {
            "apiVersion": API,
            "kind": "GryviaCheckpointGuard",
            "metadata": {"name": f"{name}-guard", "namespace": ns},
            "spec": {"jobSelector": nowhere, "checkpointPolicy": {"intervalSeconds": 60}},
        },
        {
            "apiVersion": API,
            "kind": "GryviaPriority",
            "metadata": {"name": f"{name}-prio"},
            "spec": {"value": 123, "preemptionPolicy": "Never"},
        },
        {
            "apiVersion": API,
            "kind": "GryviaGPUSharingPolicy",
            "metadata": {"name": f"{name}-share"},
            "spec": {
                "strategy": "time-slicing",
                "nodeSelector": nowhere,
                "timeSlicing": {"replicas": 2},
            },
        },
    ]


def _reservation(name: str) -> dict[str, Any]:
    end = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    return {
        "apiVersion": API,
        "kind": "GryviaReservation",
        "metadata": {"name": f"{name}-rsv"},
        "spec": {
            "owner": {"type": "namespace", "name": f"views-{name}"},
            "resources": {"gpuType": "NO-SUCH-GPU", "gpuCount": 1},  # claims no node
            "schedule": {"type": "immediate", "endTime": end.strftime("%Y-%m-%dT%H:%M:%SZ")},
        },
    }


@pytest.fixture
def policies(gryvia_sandbox: dict[str, Any]) -> Iterator[tuple[SandboxHandle, str, str]]:
    """A namespace with a hook and a guard, a priority and a sharing policy; the cluster-wide
    objects (and the test's reservation) are deleted afterwards. Yields (sandbox, name, ns)."""
    sandbox: SandboxHandle = gryvia_sandbox["sandbox"]
    name = f"pv{uuid.uuid4().hex[:6]}"
    ns = f"views-{name}"
    sandbox.kubectl_run("create", "namespace", ns)
    body = json.dumps({"apiVersion": "v1", "kind": "List", "items": _policies(name, ns)})
    sandbox.kubectl_run("apply", "-f", "-", input=body)
    yield sandbox, name, ns
    for kind, obj in [
        ("gryviapriorities", f"{name}-prio"),
        ("gryviagpusharingpolicies", f"{name}-share"),
        ("gryviareservations", f"{name}-rsv"),
    ]:
        sandbox.kubectl_run("delete", kind, obj, "--ignore-not-found", "--wait=false")
    sandbox.kubectl_run("delete", "namespace", ns, "--wait=false")


async def test_policy_views_and_a_watched_reservation_on_the_sandbox(
    policies: tuple[SandboxHandle, str, str],
) -> None:
    sandbox, name, ns = policies
    source = await asyncio.to_thread(
        KubeSource.open, sandbox.kubeconfig, None, ns, all_namespaces=False
    )
    app = make_app(source)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: app.connection == "live", timeout=30, what="live")
        for view, key in [
            ("hooks", f"{ns}/{name}-hook"),
            ("checkpoints", f"{ns}/{name}-guard"),
            ("priorities", f"{name}-prio"),
            ("gpusharing", f"{name}-share"),
        ]:
            await pilot.press("colon", *view, "enter")
            await wait_until(
                pilot,
                lambda v=view, k=key: (
                    isinstance(app.screen, ListScreen)
                    and app.screen.spec.name == v
                    and k in app.screen.items
                ),
                timeout=30,
                what=f"{key} in :{view}",
            )
        await pilot.press("colon", *"reservations", "enter")
        screen = await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, ListScreen)
                and app.screen.spec.name == "reservations"
                and "reservations" in app.store.loaded
                and app.screen
            ),
            timeout=30,
            what="the reservations listed",
        )
        sandbox.kubectl_run("apply", "-f", "-", input=json.dumps(_reservation(name)))
        await wait_until(
            pilot, lambda: f"{name}-rsv" in screen.items, timeout=30, what="the new reservation"
        )
        assert "every" not in str(screen.query_one("#list-status").render())  # watched
