"""The registry views against the sandbox: KubeSource reads events, single objects and
GryviaBudgets through gryvia_cli/kube; `:tenants` shows a tenant with its quota and `d`
describes it; `ctrl+e` lists a real event; `p` asks the API server for a previous log."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import Any

import pytest

from gryvia_cli.errors import GryviaError
from gryvia_cli.tui import make_app
from gryvia_cli.tui.kubesource import KubeSource
from gryvia_cli.tui.screens.registry import DescribeScreen, ListScreen, render_sections
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.conftest import SandboxHandle
from tests.tui.waits import wait_in_thread, wait_until

pytestmark = [pytest.mark.tui, pytest.mark.integration, pytest.mark.sandbox]


def _objects(name: str, ns: str) -> list[dict[str, Any]]:
    api = "gryvia.io/v1alpha1"
    return [
        {
            "apiVersion": api,
            "kind": "GryviaTenant",
            "metadata": {"name": name},
            "spec": {
                "displayName": f"Views {name}",
                "members": [{"username": "ann", "role": "admin"}],
            },
        },
        {
            "apiVersion": api,
            "kind": "GryviaQuota",
            "metadata": {"name": f"{name}-q"},
            "spec": {
                "team": name,
                "namespaces": [f"tenant-{name}"],
                "gpuQuota": {"maxGPUs": 4},
                "budget": {"monthlyBudget": 900},
            },
        },
        {
            "apiVersion": api,
            "kind": "GryviaBudget",
            "metadata": {"name": f"{name}-b"},
            "spec": {
                "scope": {"type": "tenant", "name": name},
                "period": {"type": "monthly"},
                "limits": {"costUSD": 700},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{name}-ev", "namespace": ns},
            "involvedObject": {"kind": "Pod", "name": f"{name}-pod", "namespace": ns},
            "reason": "ViewsProbe",
            "message": f"[bold]{name}[/] literal",
            "type": "Warning",
            "firstTimestamp": "2026-12-01T10:00:00Z",
            "lastTimestamp": "2026-12-01T10:00:00Z",
        },
    ]


@pytest.fixture
def seeded(gryvia_sandbox: dict[str, Any]) -> tuple[SandboxHandle, str, str]:
    """A namespace with a tenant, its quota and budget, and an event; (sandbox, name, ns)."""
    sandbox: SandboxHandle = gryvia_sandbox["sandbox"]
    name = f"vw{uuid.uuid4().hex[:6]}"
    ns = f"views-{name}"
    sandbox.kubectl_run("create", "namespace", ns)
    body = json.dumps({"apiVersion": "v1", "kind": "List", "items": _objects(name, ns)})
    sandbox.kubectl_run("apply", "-f", "-", input=body)
    return sandbox, name, ns


async def test_kube_source_reads_events_objects_and_budgets(
    seeded: tuple[SandboxHandle, str, str],
) -> None:
    sandbox, name, ns = seeded
    source = await asyncio.to_thread(
        KubeSource.open, sandbox.kubeconfig, None, ns, all_namespaces=False
    )
    events = await wait_in_thread(
        lambda: [e for e in source.list_events(ns) if e.get("reason") == "ViewsProbe"],
        what="the seeded event",
    )
    assert events[0]["involvedObject"]["name"] == f"{name}-pod"
    everywhere = await asyncio.to_thread(source.list_events, None)
    assert any(e.get("reason") == "ViewsProbe" for e in everywhere)
    tenant = await asyncio.to_thread(source.get_object, "tenants", None, name)
    assert tenant["spec"]["members"] == [{"username": "ann", "role": "admin"}]
    budgets = await asyncio.to_thread(source.list_objects, "budgets")
    assert f"{name}-b" in {b["metadata"]["name"] for b in budgets}
    reservations = await asyncio.to_thread(source.list_objects, "reservations")
    assert all(r["kind"] == "GryviaReservation" for r in reservations)


async def test_tenants_view_and_describe_on_the_sandbox(
    seeded: tuple[SandboxHandle, str, str],
) -> None:
    sandbox, name, ns = seeded
    source = await asyncio.to_thread(
        KubeSource.open, sandbox.kubeconfig, None, ns, all_namespaces=False
    )
    app = make_app(source)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.connection == "live", timeout=30, what="live")
        await pilot.press("colon", *"quotas", "enter")
        screen = await wait_until(
            pilot,
            lambda: isinstance(app.screen, ListScreen) and name in app.screen.items and app.screen,
            timeout=30,
            what="the tenant row",
        )
        table = screen.query_one(RowTable)
        cells = dict(zip([c.key for c in screen.spec.columns], table.cells(name), strict=True))
        assert cells["quotas"][0] == f"{name}-q" and cells["gpus"][0].endswith("/4")
        assert cells["members"][0] == "1"
        table.move_to_key(name)
        await pilot.press("d")

        def text() -> str:
            shown = app.screen
            if isinstance(shown, DescribeScreen) and shown.raw is not None:
                return render_sections(shown.sections()).plain
            return ""

        body = await wait_until(pilot, text, timeout=30, what="the tenant described")
        assert f"Quota {name}-q" in body and f"Budget {name}-b" in body
        assert re.search(r"ann\s+admin", body)
        await pilot.press("escape", "ctrl+e")
        events = await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, ListScreen)
                and app.screen.spec.name == "events"
                and [e for e in app.screen.items.values() if e.get("reason") == "ViewsProbe"]
            ),
            timeout=30,
            what="the seeded event in the Events view",
        )
        assert events[0]["message"] == f"[bold]{name}[/] literal"


async def test_previous_log_of_a_restarted_pod(seeded: tuple[SandboxHandle, str, str]) -> None:
    """`previous=true` reaches the pod log endpoint: before the container restarts the API
    server refuses (a GryviaError), after a restart it answers with the earlier run's lines."""
    sandbox, name, ns = seeded
    script = 'echo "run at $(date +%s%N)"; sleep 1; exit 1'
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{name}-run", "namespace": ns},
        "spec": {
            "restartPolicy": "Always",
            "nodeSelector": {"type": "kwok"},
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", script]}],
        },
    }
    source = await asyncio.to_thread(
        KubeSource.open, sandbox.kubeconfig, None, ns, all_namespaces=False
    )
    sandbox.kubectl_run("apply", "-f", "-", input=json.dumps(pod))

    def first_run_logged() -> bool:
        try:  # until the container has written, the API server says "no logs found"
            return any("run at" in line for line in source.read_log(ns, f"{name}-run", "main"))
        except GryviaError:
            return False

    await wait_in_thread(first_run_logged, what="the first run's log")
    with pytest.raises(GryviaError):
        await asyncio.to_thread(source.read_log, ns, f"{name}-run", "main", previous=True)

    def restarts() -> int:
        out = sandbox.kubectl_run("get", "pod", f"{name}-run", "-n", ns, "-o", "json")
        statuses = json.loads(out.stdout)["status"].get("containerStatuses") or []
        return int(statuses[0].get("restartCount") or 0) if statuses else 0

    await wait_in_thread(lambda: restarts() >= 1, timeout=90, what="a restart")
    previous = await asyncio.to_thread(source.read_log, ns, f"{name}-run", "main", previous=True)
    assert previous and "run at" in previous[-1]
