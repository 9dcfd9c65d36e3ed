"""`python -m gryvia_operator.release_finalizers` (the chart's pre-delete hook): every job pod
loses the save-log finalizer, other finalizers stay, a failure does not stop the others."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from gryvia_operator.api.names import FINALIZER_SAVE_LOG
from gryvia_operator.controller.kubeapi import KubeError
from gryvia_operator.release_finalizers import release_all
from tests.unit.operator.fakeapi import FakeApi

TRACKING = "batch.kubernetes.io/job-tracking"


def _pod(name: str, ns: str, *finalizers: str) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "finalizers": list(finalizers)},
    }


class _Refusing(FakeApi):
    async def json_patch(
        self, kind: str, name: str, ops: Sequence[Mapping[str, Any]], namespace: str | None = None
    ) -> dict[str, Any]:
        if name == "locked":
            raise KubeError(403, "Forbidden", "pods is forbidden")
        return await super().json_patch(kind, name, ops, namespace)


async def test_every_job_pod_loses_the_save_log_finalizer_and_keeps_the_others() -> None:
    api = _Refusing()
    api.put(_pod("a", "ml", TRACKING, FINALIZER_SAVE_LOG))
    api.put(_pod("b", "cv", FINALIZER_SAVE_LOG))
    api.put(_pod("c", "cv", TRACKING))
    api.put(_pod("locked", "cv", FINALIZER_SAVE_LOG))
    released, failed = await release_all(cast(Any, api))
    assert released == 2
    assert failed == ["cv/locked: 403 Forbidden: pods is forbidden"]
    assert api.objects[("Pod", "ml", "a")]["metadata"]["finalizers"] == [TRACKING]
    assert api.objects[("Pod", "cv", "b")]["metadata"]["finalizers"] == []
    assert api.objects[("Pod", "cv", "c")]["metadata"]["finalizers"] == [TRACKING]


async def test_one_namespace_only() -> None:
    api = FakeApi()
    api.put(_pod("a", "ml", FINALIZER_SAVE_LOG))
    api.put(_pod("b", "cv", FINALIZER_SAVE_LOG))
    assert await release_all(cast(Any, api), "ml") == (1, [])
    assert api.objects[("Pod", "cv", "b")]["metadata"]["finalizers"] == [FINALIZER_SAVE_LOG]
