"""The save-log handler against a fake access layer: the finalizer goes in every case."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any, cast

from gryvia_operator.api.names import FINALIZER_SAVE_LOG
from gryvia_operator.controller.kubeapi import KubeError
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS
from gryvia_operator.handlers.savedlogs import LogSaver
from tests.unit.operator.fakeapi import FakeApi
from tests.unit.operator.test_saved_logs import JOB, pod

NOW = datetime(2026, 12, 1, 12, 0, 5, tzinfo=UTC)
TRACKING = "batch.kubernetes.io/job-tracking"


async def _run(
    api: FakeApi, jobs: list[dict[str, Any]], body: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Handle the pod (the deleted one by default) once; return the pod as the API has it
    afterwards."""
    rt = Runtime(api=cast(Any, api), clock=lambda: NOW)
    rt.indices.attach({AIJOBS: {("ml", "train"): jobs}})
    body = {"kind": "Pod", **(body or pod())}
    api.put(body)
    saver = LogSaver(rt)
    saver.on_pod(body)
    await asyncio.gather(*saver.tasks)
    saver.cancel()
    return api.objects[("Pod", "ml", "train-1-abc")]


async def test_a_saved_log_lands_in_the_jobs_configmap_then_the_finalizer_goes() -> None:
    api = FakeApi()
    api.logs[("ml", "train-1-abc")] = "one\ntwo\n"
    after = await _run(api, [JOB])
    assert after["metadata"]["finalizers"] == [TRACKING]
    saved = api.objects[("ConfigMap", "ml", "train-logs")]
    assert saved["data"]["replica-1.log"] == "one\ntwo"
    assert json.loads(saved["data"]["replica-1.json"])["savedAt"] == "2026-12-01T12:00:05Z"


async def test_a_finished_pod_is_saved_and_released_without_being_deleted() -> None:
    api = FakeApi()
    api.logs[("ml", "train-1-abc")] = "done\n"
    after = await _run(api, [JOB], pod(deleted=None, phase="Succeeded"))
    assert after["metadata"]["finalizers"] == [TRACKING]
    assert "deletionTimestamp" not in after["metadata"]
    assert api.objects[("ConfigMap", "ml", "train-logs")]["data"]["replica-1.log"] == "done"


async def test_a_log_that_cannot_be_read_still_releases_the_pod() -> None:
    api = FakeApi()
    api.logs[("ml", "train-1-abc")] = KubeError(500, "InternalError", "kubelet down")
    after = await _run(api, [JOB])
    assert FINALIZER_SAVE_LOG not in after["metadata"]["finalizers"]
    assert ("ConfigMap", "ml", "train-logs") not in api.objects


async def test_a_deleted_job_releases_its_pods_without_saving() -> None:
    api = FakeApi()
    api.logs[("ml", "train-1-abc")] = "one\n"
    after = await _run(api, [])
    assert after["metadata"]["finalizers"] == [TRACKING]
    assert not [c for c in api.calls if c[0] == "log"]


async def test_a_configmap_of_the_same_name_that_is_not_the_jobs_is_left_alone() -> None:
    api = FakeApi()
    api.logs[("ml", "train-1-abc")] = "one\n"
    theirs = {"kind": "ConfigMap", "metadata": {"name": "train-logs", "namespace": "ml"}}
    api.put({**theirs, "data": {"k": "v"}})
    after = await _run(api, [JOB])
    assert after["metadata"]["finalizers"] == [TRACKING]
    assert api.objects[("ConfigMap", "ml", "train-logs")]["data"] == {"k": "v"}
