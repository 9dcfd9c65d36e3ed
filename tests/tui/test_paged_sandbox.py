"""The console's paged first list against the real sandbox: the Jobs view shows the first page's
rows and a growing count while the API server's second page is held back, then every job,
filtered and sorted correctly, once the list is complete; the watch then goes on from the
list's resourceVersion.

`make test`: 60 jobs in pages of 20; `make test-all` (tests.support.depth): 20,000 jobs in
kubectl's pages of 500. Run under the shared lock (it uses the session sandbox).
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from textual.widgets import Static

from gryvia_cli.tui import make_app
from gryvia_cli.tui.kubesource import KubeSource
from gryvia_cli.tui.screens.jobs import JobsScreen
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.support.depth import amount
from tests.tui.waits import wait_until

pytestmark = [pytest.mark.tui, pytest.mark.integration, pytest.mark.sandbox]

JOBS = amount(60, 20_000)
PAGE = amount(20, 500)
FILTER = "job-0001"
"""A substring of 10 job names (job-00010 .. job-00019) at any JOBS >= 20."""


def _create(sandbox: SandboxHandle, namespace: str) -> None:
    jobs = [
        sh_job(
            f"job-{i:05d}",
            gpus=1,
            gpu_type="H100",
            script="true",
            namespace=namespace,
            suspend=True,
        )
        for i in range(JOBS)
    ]
    for start in range(0, JOBS, 500):
        body = {"apiVersion": "v1", "kind": "List", "items": jobs[start : start + 500]}
        sandbox.kubectl_run("create", "-f", "-", input=json.dumps(body), timeout=600)


def _status(app: Any) -> str:
    return str(app.screen.query_one("#jobs-status", Static).render())


async def test_first_rows_before_the_list_ends_then_every_job_filtered_and_sorted(
    sandbox: SandboxHandle, crds: None
) -> None:
    with sandbox.fresh_namespace("paged") as ns:
        await asyncio.to_thread(_create, sandbox, ns)
        source = await asyncio.to_thread(
            KubeSource.open, sandbox.kubeconfig, None, ns, all_namespaces=False
        )
        source.page_size = PAGE
        gate = threading.Event()
        later_pages: list[str] = []
        list_page = source.access.list_objects

        def held(*args: Any, **kwargs: Any) -> dict[str, Any]:
            """The real API server's pages; the jobs' later pages wait for the gate."""
            if kwargs.get("continue_token") and args[0].plural == "gryviaaijobs":
                later_pages.append(kwargs["continue_token"])
                assert gate.wait(120), "the test never opened the gate"
            return list_page(*args, **kwargs)

        source.access.list_objects = held  # type: ignore[method-assign]
        app = make_app(source)
        try:
            async with app.run_test(size=(140, 40)) as pilot:
                table = await wait_until(
                    pilot,
                    lambda: (
                        isinstance(app.screen, JobsScreen)
                        and len(app.screen.query_one("#jobs-table", RowTable).order) == PAGE
                        and app.screen.query_one("#jobs-table", RowTable)
                    ),
                    timeout=30,
                    what="the first page's rows",
                )
                assert f"{PAGE}+ jobs, loading…" in _status(app)
                assert later_pages and app.store.paging == {"jobs"}
                gate.set()
                await wait_until(
                    pilot, lambda: f"{JOBS} jobs" in _status(app), timeout=120, what="all jobs"
                )
                assert "loading" not in _status(app)
                truth = sandbox.kubectl_json("get", "gryviaaijobs", "-n", ns)["items"]
                assert sorted(table.order) == sorted(f"{ns}/{j['metadata']['name']}" for j in truth)
                await pilot.press("slash", *FILTER, "enter")
                await wait_until(
                    pilot, lambda: f"10 of {JOBS} jobs" in _status(app), what="the filter"
                )
                want = [f"{ns}/job-{i:05d}" for i in range(10, 20)]
                assert sorted(table.order) == want
                app.screen.action_sort_by("name")  # type: ignore[attr-defined]
                await wait_until(pilot, lambda: table.order == want, what="sorted by name")
                app.screen.action_sort_by("name")  # type: ignore[attr-defined]
                await wait_until(pilot, lambda: table.order == want[::-1], what="reversed")
                # The watch goes on from the list's version: a job created now shows up.
                new = sh_job("job-zz", gpus=1, script="true", namespace=ns, suspend=True)
                await asyncio.to_thread(source.create_job, new)
                await pilot.press("escape", "escape")
                await wait_until(
                    pilot, lambda: f"{JOBS + 1} jobs" in _status(app), timeout=30, what="job-zz"
                )
        finally:
            gate.set()
