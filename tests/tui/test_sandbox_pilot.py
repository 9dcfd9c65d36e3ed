"""The console against the sandbox: submit from the form, watch the job run and finish with
no manual refresh, follow its logs, cancel a job, read the queue reason of an absent GPU type.

With the operator running (it is started when `gryvia_operator/main.py` exists) the job moves
by itself; without it the test plays the operator with kubectl (status patches and a pod).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from textual.widgets import Input, Select

from gryvia_cli.tui import make_app
from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.kubesource import KubeSource
from gryvia_cli.tui.screens.job import JobScreen
from gryvia_cli.tui.widgets.logview import LogView
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.tui.waits import wait_in_thread, wait_until

pytestmark = [pytest.mark.tui, pytest.mark.integration, pytest.mark.sandbox]

SCRIPT = "for i in 1 2 3 4 5 6; do echo line $i; sleep 1; done"


def _apply(sandbox: SandboxHandle, *objs: dict[str, Any]) -> None:
    sandbox.apply(*objs)


def _get_job(sandbox: SandboxHandle, ns: str, name: str) -> dict[str, Any]:
    out = sandbox.kubectl_run("get", "gryviaaijob", name, "-n", ns, "-o", "json", check=False)
    return json.loads(out.stdout) if out.returncode == 0 else {}


def _play_operator(
    sandbox: SandboxHandle, ns: str, name: str, phase: str, pod: bool = False
) -> None:
    """Without an operator: patch the phase and (once) start the job's pod."""
    patch = {"status": {"phase": phase}}
    if phase == "Running":
        patch["status"]["startTime"] = "2026-01-01T00:00:00Z"
    sandbox.kubectl_run(
        "patch",
        "gryviaaijob",
        name,
        "-n",
        ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(patch),
    )
    if pod:
        _apply(
            sandbox,
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{name}-0",
                    "namespace": ns,
                    "labels": {"gryvia.io/job": name},
                },
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": {"type": "kwok"},
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [
                        {"name": "trainer", "image": "busybox", "command": ["sh", "-c", SCRIPT]}
                    ],
                },
            },
        )


@pytest.fixture
def namespace(gryvia_sandbox: dict[str, Any]) -> str:
    """A fresh namespace per test."""
    name = f"tui-{uuid.uuid4().hex[:6]}"
    gryvia_sandbox["sandbox"].kubectl_run("create", "namespace", name)
    return name


@pytest.fixture
async def console(
    gryvia_sandbox: dict[str, Any], namespace: str
) -> AsyncIterator[tuple[GryviaApp, Any]]:
    """The console on the sandbox, in `namespace`, 120x40; yields (app, pilot)."""
    sandbox: SandboxHandle = gryvia_sandbox["sandbox"]
    source = await asyncio.to_thread(
        KubeSource.open, sandbox.kubeconfig, None, namespace, all_namespaces=False
    )
    app = make_app(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot,
            lambda: {"jobs", "gpunodes"} <= app.store.loaded,
            timeout=30,
            what="jobs and GPU nodes listed",
        )
        await wait_until(pilot, lambda: app.connection == "live", timeout=30, what="live marker")
        yield app, pilot


async def test_submit_run_succeed_and_follow_logs(
    console: tuple[GryviaApp, Any], gryvia_sandbox: dict[str, Any], namespace: str
) -> None:
    """Fill the form, ctrl+s, then see Running, the log lines and Succeeded on their own."""
    app, pilot = console
    sandbox: SandboxHandle = gryvia_sandbox["sandbox"]
    name = "tui-train"
    await pilot.press("6")
    await wait_until(
        pilot, lambda: app.screen.__class__.__name__ == "SubmitScreen", what="submit view"
    )
    form = app.screen
    for field, text in (("name", name), ("image", "busybox"), ("command", f"sh -c '{SCRIPT}'")):
        form.query_one(f"#f-{field}", Input).focus()
        await pilot.press(*text)
    form.query_one("#f-gpu_type", Select).value = "H100"
    await wait_until(
        pilot,
        lambda: (
            form.jobs
            and form.jobs[0]["spec"].get("gpuType") == "H100"
            and not any(k == "error" for k, _ in form.findings)
        ),
        what="a valid preview",
    )
    await pilot.press("ctrl+s")
    await wait_until(
        pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="confirmation"
    )
    await pilot.press("y")  # a create is a write: it asks first
    key = f"{namespace}/{name}"
    await wait_until(
        pilot,
        lambda: isinstance(app.screen, JobScreen) and app.screen.key == key,
        timeout=20,
        what="the new job's view",
    )
    assert (await asyncio.to_thread(_get_job, sandbox, namespace, name))["spec"]["command"][
        0
    ] == "sh"
    job_view = app.screen
    await pilot.press("l")
    if not gryvia_sandbox["operator"]:
        await asyncio.to_thread(_play_operator, sandbox, namespace, name, "Running", True)
    await wait_until(
        pilot,
        lambda: app.store.jobs[key].summary.phase == "Running",
        timeout=60,
        what="phase Running on screen",
    )
    log = job_view.query_one(LogView)
    await wait_until(
        pilot,
        lambda: any("line 3" in t for _, t in log.lines),
        timeout=60,
        what="followed log lines",
    )
    if not gryvia_sandbox["operator"]:
        await wait_in_thread(
            lambda: (
                "Succeeded"
                in sandbox.kubectl_run(
                    "get", "pod", f"{name}-0", "-n", namespace, "-o", "jsonpath={.status.phase}"
                ).stdout
            ),
            what="the pod to finish",
        )
        await asyncio.to_thread(_play_operator, sandbox, namespace, name, "Succeeded")
    await wait_until(
        pilot,
        lambda: app.store.jobs[key].summary.phase == "Succeeded",
        timeout=60,
        what="phase Succeeded on screen",
    )
    await wait_until(
        pilot, lambda: job_view.log_state == "ended", timeout=30, what="the log to end"
    )
    assert "container finished" in job_view.log_note
    assert [t for _, t in log.lines if t.startswith("line")] == [f"line {i}" for i in range(1, 7)]


async def test_cancel_from_the_jobs_view(
    console: tuple[GryviaApp, Any], gryvia_sandbox: dict[str, Any], namespace: str
) -> None:
    """Filter to a job, press c, confirm: the annotation is set and the row says so."""
    app, pilot = console
    sandbox: SandboxHandle = gryvia_sandbox["sandbox"]
    await asyncio.to_thread(
        _apply,
        sandbox,
        make_job("to-cancel", namespace)
        .gpu_type("H100")
        .image("busybox")
        .command("sleep", "600")
        .manifest(),
    )
    key = f"{namespace}/to-cancel"
    await wait_until(pilot, lambda: key in app.store.jobs, timeout=30, what="the job in the store")
    await pilot.press("slash", *"to-cancel", "enter")
    table = app.screen.query_one(RowTable)
    await wait_until(pilot, lambda: table.order == [key], what="the filter to leave one row")
    await pilot.press("c")
    await wait_until(
        pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="confirmation"
    )
    await pilot.press("y")
    await wait_in_thread(
        lambda: (
            (
                _get_job(sandbox, namespace, "to-cancel").get("metadata", {}).get("annotations")
                or {}
            ).get("gryvia.io/cancel")
            == "true"
        ),
        what="the cancel annotation",
    )
    await wait_until(
        pilot,
        lambda: table.cells(key)[6][0] in ("◌ Cancelling", "■ Cancelled"),
        timeout=30,
        what="the row to show the cancel",
    )
    if gryvia_sandbox["operator"]:
        await wait_until(
            pilot,
            lambda: app.store.jobs[key].summary.phase == "Cancelled",
            timeout=60,
            what="phase Cancelled from the operator",
        )


async def test_queue_reason_for_an_absent_gpu_type(
    console: tuple[GryviaApp, Any], gryvia_sandbox: dict[str, Any], namespace: str
) -> None:
    """A job asking for a GPU type no node has waits, and the Queue view says why."""
    app, pilot = console
    sandbox: SandboxHandle = gryvia_sandbox["sandbox"]
    await asyncio.to_thread(
        _apply,
        sandbox,
        make_job("wants-b200", namespace).gpu_type("B200").image("busybox").gpus(2).manifest(),
    )
    key = f"{namespace}/wants-b200"
    await pilot.press("2")
    await wait_until(
        pilot, lambda: app.screen.__class__.__name__ == "QueueScreen", what="queue view"
    )
    table = app.screen.query_one(RowTable)
    await wait_until(pilot, lambda: key in table.order, timeout=30, what="the job in the queue")
    reason = table.cells(key)[-1][0]
    assert 'no node has GPU type "B200"' in reason, reason


async def test_the_logs_of_a_cancelled_job_stay_readable(
    console: tuple[GryviaApp, Any], gryvia_sandbox: dict[str, Any], namespace: str
) -> None:
    """Issue 22: after a cancel the Logs tab said "no pods yet" and kept 2 of 15 lines. The
    pod's lines stay when the operator deletes it, and the saved-logs ConfigMap backs them."""
    app, pilot = console
    sandbox: SandboxHandle = gryvia_sandbox["sandbox"]
    script = "for i in $(seq 1 15); do echo line $i; done; sleep 600"
    job = make_job("to-save", namespace).gpu_type("H100").image("busybox").script(script).manifest()
    await asyncio.to_thread(_apply, sandbox, job)
    key = f"{namespace}/to-save"
    await wait_until(pilot, lambda: key in app.store.jobs, timeout=30, what="the job in the store")
    app.open_job(key, "logs")
    job_view: Any = await wait_until(
        pilot, lambda: isinstance(app.screen, JobScreen) and app.screen, what="the job view"
    )
    log = await wait_until(pilot, lambda: job_view.query_one(LogView), what="the log view")
    expected = [f"line {i}" for i in range(1, 16)]
    await wait_until(
        pilot,
        lambda: [t for _, t in log.lines if t.startswith("line")] == expected,
        timeout=120,
        what="the 15 lines followed",
    )
    await pilot.press("c")
    await wait_until(
        pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="confirmation"
    )
    await pilot.press("y")
    await wait_until(
        pilot, lambda: job_view.log_state == "saved", timeout=120, what="the saved log found"
    )
    assert [t for _, t in log.lines if t.startswith("line")] == expected
    assert job_view.saved_shown is not None and job_view.saved_shown.lines >= 15
    status = str(job_view.query_one("#log-status").render())
    assert "deleted:" in status and "kept by the operator" in status
