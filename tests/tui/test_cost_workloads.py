"""The Cost view's workspaces and inference services: a workspace's metered cost from its
usage records, a service's estimate from its running replica, enter describes the row's
object, and workspace records are not listed among the top jobs."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_cli.tui import make_app
from gryvia_cli.tui.screens.registry import DescribeScreen
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.builders import NOW, H, M, ts, usage
from tests.tui.fake import FakeSource
from tests.tui.fixed import fixed_cluster
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]


def cluster() -> dict[str, list[dict[str, Any]]]:
    """The fixed cluster, a workspace that ran 1.5 h on 2 H100 and a 1-GPU service whose one
    replica has run 2 h on an H100 node (8.00 USD per GPU-hour in the default catalog)."""
    objects = fixed_cluster()
    record = usage("dev-box", "tenant-acme", "acme", "H100", 2, 8.0, 2 * H, 1.5)
    record["metadata"]["labels"] = {"gryvia.io/workspace": "dev-box"}
    objects["usage"].append(record)
    objects["inferenceservices"] = [
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaInferenceService",
            "metadata": {
                "name": "chat",
                "namespace": "tenant-acme",
                "creationTimestamp": ts(3 * H),
            },
            "spec": {"image": "srv:1", "gpus": 1},
        }
    ]
    objects["pods"].append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "chat-stable-abc",
                "namespace": "tenant-acme",
                "labels": {"gryvia.io/inference-service": "chat"},
                "creationTimestamp": ts(2 * H + M),
            },
            "spec": {"nodeName": "gpu-h100-0", "containers": [{"name": "server"}]},
            "status": {"phase": "Running", "startTime": ts(2 * H)},
        }
    )
    return objects


async def test_cost_view_lists_workspaces_and_services_with_their_cost() -> None:
    app = make_app(FakeSource(cluster()), clock=lambda: NOW, view="cost")
    async with app.run_test(size=(160, 60)) as pilot:
        await settle(pilot)
        screen: Any = app.screen
        table = screen.query_one("#cost-workloads", RowTable)
        await wait_until(pilot, lambda: len(table.order) == 2, what="workspace and service rows")
        assert table.order == ["workspace:tenant-acme/dev-box", "service:tenant-acme/chat"]
        dev = screen.workloads["workspace:tenant-acme/dev-box"]
        chat = screen.workloads["service:tenant-acme/chat"]
        assert (dev.cost, dev.gpu_hours, dev.metered) == (24.0, 3.0, True)
        assert chat.cost == pytest.approx(16.0) and not chat.metered
        cells = [text for text, _ in screen._workload_cells("service:tenant-acme/chat")]
        assert cells[-2] == "~$16.00" and cells[-1] == "estimate: 1 replica running"
        title = str(screen.query_one("#cost-workloads-title").render())
        assert "not metered" in title
        assert "tenant-acme/dev-box" not in screen.top
        table.focus()
        table.move_to_key("service:tenant-acme/chat")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DescribeScreen), what="describe")
        assert app.screen.ref.name == "chat"  # type: ignore[attr-defined]
