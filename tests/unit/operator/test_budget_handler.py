"""The budget controller against a fake access layer and a real local receiver: status written
only on change, each crossing recorded before its Event and POST, and nothing sent twice when
the operator restarts (a new kind controller reading the stored status), whatever step it died
in (a failed reconcile is counted and retried by the next pass, never raised)."""

from __future__ import annotations

import base64
import copy
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

import pytest

from gryvia_operator.controller.kindcontroller import KindController
from gryvia_operator.controller.kubeapi import KubeError
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, BUDGETS, QUOTAS, TENANTS, USAGE
from gryvia_operator.handlers.budget import controller
from tests.unit.operator.fakeapi import FakeApi

NOW = datetime(2026, 12, 16, 12, tzinfo=UTC)


@pytest.fixture
def posts() -> Iterator[tuple[list[dict[str, str]], str]]:
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append({k.lower(): v for k, v in self.headers.items()})
            self.send_response(200)
            self.end_headers()

        def log_message(self, *_: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield seen, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _record(name: str, cost: float) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "tenant-acme"},
        "spec": {
            "tenant": "acme",
            "job": name,
            "jobUID": name,
            "gpus": 1,
            "rate": 3600.0,
            "start": "2026-12-02T00:00:00Z",
            "end": "2026-12-02T00:00:10Z",
            "gpuHours": cost / 3600,
            "cost": cost,
            "final": True,
        },
    }


class Cluster:
    """The fake API plus the indexes a restarted operator would list from it."""

    def __init__(self, url: str) -> None:
        self.api = FakeApi()
        self.api.put(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "alerts", "namespace": "ops"},
                "data": {"secret": base64.b64encode(b"k").decode()},
            }
        )
        self.api.put(
            {
                "apiVersion": "gryvia.io/v1alpha1",
                "kind": "GryviaBudget",
                "metadata": {"name": "acme", "uid": "u1", "generation": 1},
                "spec": {
                    "scope": {"type": "tenant", "name": "acme"},
                    "period": {"type": "monthly"},
                    "limits": {"costUSD": 10},
                    "alerts": [{"threshold": 50}, {"threshold": 90}],
                    "receiver": {
                        "url": url,
                        "secretRef": {"name": "alerts", "namespace": "ops"},
                    },
                },
            }
        )
        self.usage: dict[Any, list[Any]] = {}

    def spend(self, name: str, cost: float) -> None:
        self.usage[("tenant-acme", name)] = [_record(name, cost)]

    def operator(self) -> KindController[Any, Any]:
        """A freshly started operator: indexes listed from the API now."""
        rt = Runtime(api=cast(Any, self.api), clock=lambda: NOW)
        budget = copy.deepcopy(self.api.objects[("GryviaBudget", "", "acme")])
        rt.indices.attach(
            {
                BUDGETS: {"acme": [budget]},
                USAGE: self.usage,
                AIJOBS: {},
                QUOTAS: {},
                TENANTS: {},
            }
        )
        return controller(rt)

    def status(self) -> dict[str, Any]:
        return dict(self.api.objects[("GryviaBudget", "", "acme")].get("status") or {})

    def events(self) -> list[tuple[str, str, str]]:
        return [c for c in self.api.calls if c[0] == "create" and c[1] == "Event"]


async def test_each_crossing_once_with_an_event_and_a_signed_post(
    posts: tuple[list[dict[str, str]], str],
) -> None:
    seen, url = posts
    cluster = Cluster(url)
    await cluster.operator().one_pass()
    assert cluster.status()["state"] == "active" and seen == []
    cluster.spend("a", 6.0)
    op = cluster.operator()
    await op.one_pass()
    status = cluster.status()
    assert [(a["threshold"], a["delivered"], a["event"]) for a in status["alerts"]] == [
        (50, True, True)
    ]
    assert [h["x-gryvia-delivery"] for h in seen] == ["u1/2026-12-01/50"]
    assert seen[0]["x-gryvia-signature"].startswith("sha256=")
    writes = len([c for c in cluster.api.calls if c[0] == "patch/status"])
    await op.one_pass()  # nothing changed: no write, nothing sent
    assert len([c for c in cluster.api.calls if c[0] == "patch/status"]) == writes
    cluster.spend("b", 4.0)
    await cluster.operator().one_pass()  # a restart in between
    await cluster.operator().one_pass()  # and another
    assert [h["x-gryvia-delivery"] for h in seen] == ["u1/2026-12-01/50", "u1/2026-12-01/90"]
    assert len(cluster.events()) == 2
    assert cluster.status()["state"] == "exceeded"


async def test_a_crash_after_recording_sends_once_on_restart(
    posts: tuple[list[dict[str, str]], str],
) -> None:
    seen, url = posts
    cluster = Cluster(url)
    cluster.spend("a", 6.0)
    dying = cluster.operator()
    create = cluster.api.create

    async def crash(body: Any) -> Any:
        raise KubeError(0, "killed", "the operator died here")

    cluster.api.create = crash  # type: ignore[method-assign]
    await dying.one_pass()  # the reconcile fails: counted, logged, retried next pass
    (record,) = cluster.status()["alerts"]  # recorded before anything was sent
    assert not record["event"] and not record["delivered"] and seen == []
    cluster.api.create = create  # type: ignore[method-assign]
    await cluster.operator().one_pass()
    await cluster.operator().one_pass()
    assert len(seen) == 1 and len(cluster.events()) == 1
    assert cluster.status()["alerts"][0]["delivered"] is True


async def test_an_event_created_before_the_crash_is_not_posted_again(
    posts: tuple[list[dict[str, str]], str],
) -> None:
    seen, url = posts
    cluster = Cluster(url)
    cluster.spend("a", 6.0)
    op = cluster.operator()
    patch = cluster.api.patch
    calls = {"n": 0}

    async def die_on_second_write(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:  # after the Event and the POST, before recording them
            raise KubeError(0, "killed", "the operator died here")
        return await patch(*args, **kwargs)

    cluster.api.patch = die_on_second_write  # type: ignore[method-assign]
    await op.one_pass()
    cluster.api.patch = patch  # type: ignore[method-assign]
    await cluster.operator().one_pass()
    # the Event is created once (the second create finds its name taken); the POST is
    # repeated with the same key, the receiver's means to drop it
    events = cluster.events()
    assert len(events) == 2 and events[0] == events[1]
    assert len({name for _, _, name in events}) == 1
    assert {h["x-gryvia-delivery"] for h in seen} == {"u1/2026-12-01/50"}
    assert cluster.status()["alerts"][0]["delivered"] is True


def test_a_deleted_budget_gives_the_jobs_it_held_another_decision_at_once() -> None:
    cluster = Cluster("http://127.0.0.1:9")
    ops = cluster.operator()
    held = {"metadata": {"name": "j", "namespace": "tenant-acme"}, "status": {"phase": "Queued"}}
    other = {"metadata": {"name": "k", "namespace": "elsewhere"}, "status": {"phase": "Queued"}}
    ops.rt.indices.attach({AIJOBS: {("tenant-acme", "j"): [held], ("elsewhere", "k"): [other]}})
    ops.spec.seen["acme"] = ("active", 1, 1)
    ops.spec.forget(ops.rt, cluster.api.objects[("GryviaBudget", "", "acme")])
    assert ("tenant-acme", "j") in ops.rt.jobs._dirty and (
        "elsewhere",
        "k",
    ) not in ops.rt.jobs._dirty
    assert "acme" not in ops.spec.seen
