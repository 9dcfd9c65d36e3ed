"""The console's list-then-watch against the real sandbox: a first list from the API server's
watch cache (resourceVersion 0), paged LISTs, and a watch whose resourceVersion has expired
(`410 Gone`) relists and resumes without losing or doubling rows.

The watch is made to start from resourceVersion 1, older than anything the API server keeps,
so the server answers 410 Gone; meanwhile jobs are deleted, created and changed, as they would
be while a console's watch is down. Run under the shared lock (it uses the session sandbox).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from typing import Any

import pytest

from gryvia_cli.core.watching import WatchEvent
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.connect import connect
from gryvia_cli.kube.watch import ListWatcher
from gryvia_cli.tui.store import ClusterStore, Update, event_update, list_update
from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.support.wait import wait_for

pytestmark = [pytest.mark.tui, pytest.mark.integration, pytest.mark.sandbox]


def _suspended(name: str, namespace: str) -> dict[str, Any]:
    return sh_job(name, gpus=1, gpu_type="H100", script="true", namespace=namespace, suspend=True)


def _create(sandbox: SandboxHandle, namespace: str, names: list[str]) -> None:
    body = {"apiVersion": "v1", "kind": "List", "items": [_suspended(n, namespace) for n in names]}
    sandbox.kubectl_run("create", "-f", "-", input=json.dumps(body))


def _server_names(sandbox: SandboxHandle, namespace: str) -> list[str]:
    listed = sandbox.kubectl_json("get", "gryviaaijobs", "-n", namespace)
    return sorted(f"{namespace}/{i['metadata']['name']}" for i in listed["items"])


def test_an_expired_watch_relists_and_resumes_without_losing_or_doubling_rows(
    sandbox: SandboxHandle, crds: None
) -> None:
    with sandbox.fresh_namespace("gone") as ns:
        _create(sandbox, ns, [f"job-{i:02d}" for i in range(12)])
        pending: deque[Update] = deque()
        lists: list[int] = []
        holder: dict[str, ListWatcher] = {}

        def listed(items: list[dict[str, Any]], version: str) -> None:
            lists.append(len(items))
            pending.append(list_update("jobs", items))
            if len(lists) == 1:
                # While the watch is "down": delete two, create three, change one.
                sandbox.kubectl_run("delete", "gryviaaijobs", "-n", ns, "job-00", "job-01")
                _create(sandbox, ns, ["job-20", "job-21", "job-22"])
                sandbox.kubectl_run(
                    "patch", "gryviaaijobs", "job-05", "-n", ns, "--subresource=status",
                    "--type=merge", "-p", '{"status": {"phase": "Running"}}',
                )  # fmt: skip
                holder["w"].resource_version = "1"  # long expired: the server answers 410

        def event(ev: WatchEvent) -> None:
            pending.append(event_update("jobs", ev.type, ev.object))

        access = connect(sandbox.kubeconfig, None)
        pages: list[tuple[int, str | None]] = []  # (items, resourceVersion asked) per request
        list_page = access.list_objects

        def counted(*args: Any, **kwargs: Any) -> dict[str, Any]:
            body = list_page(*args, **kwargs)
            pages.append((len(body.get("items") or []), kwargs.get("resource_version")))
            return body

        access.list_objects = counted  # type: ignore[method-assign]
        states: list[str] = []
        watcher = ListWatcher(
            access,
            r.AIJOB,
            ns,
            on_listed=listed,
            on_event=event,
            on_state=lambda state, detail: states.append(state),
            page_size=5,
        )
        holder["w"] = watcher
        thread = threading.Thread(target=watcher.run, daemon=True)
        thread.start()
        store = ClusterStore()

        def drained() -> ClusterStore:
            updates = []
            while pending:
                updates.append(pending.popleft())
            store.apply(updates)
            return store

        try:
            wait_for(lambda: len(lists) >= 2, timeout=60, what="a relist after 410 Gone")
            # The first list asks for resourceVersion 0, as informers do: the API server answers
            # from its watch cache, in one reply (it ignores limit there) or in pages of 5.
            first = [n for n, version in pages if version == "0"]
            assert sum(first) == lists[0] <= 12 and first in ([lists[0]], [5, 5, 2]), pages
            # After 410 Gone the relist reads the latest version, in pages of 5, every job once.
            assert lists[1] == 13 and [n for n, v in pages if v is None][:3] == [5, 5, 3], pages
            wait_for(lambda: watcher.state == "live", timeout=60, what="the watch live again")
            _create(sandbox, ns, ["job-30"])  # the resumed watch delivers later changes
            wait_for(lambda: f"{ns}/job-30" in drained().jobs, timeout=60, what="job-30 watched")
            sandbox.kubectl_run("delete", "gryviaaijobs", "-n", ns, "job-02")
            wait_for(lambda: f"{ns}/job-02" not in drained().jobs, timeout=60, what="job-02 gone")
            truth = _server_names(sandbox, ns)
            assert sorted(drained().jobs) == truth
            assert len(truth) == 12 - 3 + 3 + 1
            assert store.jobs[f"{ns}/job-05"].summary.phase == "Running"
            assert "failed" not in states and "reconnecting" not in states, states
        finally:
            watcher.stop()
            thread.join(timeout=30)
