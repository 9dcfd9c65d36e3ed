"""Conditions put into another controller's object (`controller.conditions`): read fresh,
other conditions kept, written guarded by the resourceVersion read, retried after a 409,
nothing written when nothing changes or the object is gone."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from functools import partial
from typing import Any, cast

from gryvia_operator.controller.conditions import update_conditions
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.reconcile.status import put_conditions
from tests.unit.operator.fakeapi import FakeApi

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
READY = {
    "type": "Ready",
    "status": "True",
    "reason": "Running",
    "message": "",
    "lastTransitionTime": "x",
}
IDLE = {
    "type": "IdleGPUs",
    "status": "True",
    "reason": "IdleWarning",
    "message": "m",
    "lastTransitionTime": "2026-12-01T10:00:00Z",
}


def _setup() -> tuple[FakeApi, Runtime]:
    api = FakeApi()
    api.put(
        {
            "kind": "GryviaAIJob",
            "metadata": {"name": "j", "namespace": "ml", "resourceVersion": "1"},
            "status": {"phase": "Running", "conditions": [READY]},
        }
    )
    return api, Runtime(api=cast(Any, api), clock=lambda: T0)


def _conditions(api: FakeApi) -> list[dict[str, Any]]:
    return list(api.objects[("GryviaAIJob", "ml", "j")]["status"]["conditions"])


def test_put_keeps_the_others_and_writes_once() -> None:
    api, rt = _setup()
    put = partial(put_conditions, [IDLE])
    assert asyncio.run(update_conditions(rt, "GryviaAIJob", "j", "ml", put)) is True
    assert _conditions(api) == [READY, IDLE]
    assert asyncio.run(update_conditions(rt, "GryviaAIJob", "j", "ml", put)) is False
    assert [c for c in api.calls if c[0].startswith("patch")] == [
        ("patch/status", "GryviaAIJob", "j")
    ]
    cleared = IDLE | {"status": "False", "reason": "NotIdle"}
    asyncio.run(update_conditions(rt, "GryviaAIJob", "j", "ml", partial(put_conditions, [cleared])))
    assert _conditions(api) == [READY, cleared]


def test_a_conflict_is_read_again_and_retried_and_a_gone_object_is_skipped() -> None:
    api, rt = _setup()
    api.conflict_next_status = True
    put = partial(put_conditions, [IDLE])
    assert asyncio.run(update_conditions(rt, "GryviaAIJob", "j", "ml", put)) is True
    assert [c[0] for c in api.calls] == ["get", "patch/status", "get", "patch/status"]
    assert _conditions(api) == [READY, IDLE]
    assert asyncio.run(update_conditions(rt, "GryviaAIJob", "gone", "ml", put)) is False
