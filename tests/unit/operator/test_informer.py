"""The informer's indexes (`controller.informer`): kopf's index rule (an object gives
{key: value}; a key holds the values of every object that gave it), updates that move an object
to another key, deletes, and a relist that reports what changed while no watch ran."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from gryvia_operator.controller.informer import Informer


def _child(name: str, owner: str, version: str, namespace: str = "ns") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "resourceVersion": version,
            "labels": {"owner": owner},
        }
    }


def _by_owner(body: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    meta = body["metadata"]
    owner = (meta.get("labels") or {}).get("owner")
    return {(meta["namespace"], owner): meta["name"]} if owner else {}


def _informer() -> Informer:
    informer = Informer(cast(Any, None), "/apis/batch/v1/jobs")
    informer.add_index("by-owner", _by_owner)
    return informer


def test_objects_of_one_key_are_all_kept_and_a_move_or_delete_leaves_no_stale_value() -> None:
    informer = _informer()
    index = informer.index("by-owner")
    informer.apply("ADDED", _child("a-1", "a", "1"))
    informer.apply("ADDED", _child("a-2", "a", "2"))
    informer.apply("ADDED", _child("b-1", "b", "3"))
    assert sorted(index[("ns", "a")]) == ["a-1", "a-2"]
    assert set(index) == {("ns", "a"), ("ns", "b")} and len(informer) == 3

    informer.apply("MODIFIED", _child("a-2", "b", "4"))  # moved to another owner
    assert index[("ns", "a")] == ["a-1"]
    assert sorted(index[("ns", "b")]) == ["a-2", "b-1"]

    informer.apply("MODIFIED", _child("a-1", "", "5"))  # gives nothing now: its key goes
    informer.apply("DELETED", _child("b-1", "b", "6"))
    assert ("ns", "a") not in index and index[("ns", "b")] == ["a-2"]
    assert len(index) == 1 and len(informer) == 2  # a-1 is still held, in no index


def test_a_relist_replaces_what_is_held_and_reports_only_what_changed() -> None:
    informer = _informer()
    for body in (_child("same", "a", "1"), _child("changed", "a", "2"), _child("gone", "b", "3")):
        informer.apply("ADDED", body)
    changes = informer.replace(
        [_child("same", "a", "1"), _child("changed", "c", "7"), _child("new", "d", "8")]
    )
    reported = sorted((kind, body["metadata"]["name"]) for kind, body in changes)
    assert reported == [("ADDED", "new"), ("DELETED", "gone"), ("MODIFIED", "changed")]
    index = informer.index("by-owner")
    assert dict(index.items()) == {
        ("ns", "a"): ["same"],
        ("ns", "c"): ["changed"],
        ("ns", "d"): ["new"],
    }
    assert informer.replace([]) and not informer.index("by-owner")


def test_watch_events_update_the_version_and_only_a_410_asks_for_a_relist() -> None:
    informer = _informer()
    seen: list[tuple[str, str]] = []
    informer.add_listener("test", lambda kind, body: seen.append((kind, body["metadata"]["name"])))
    assert not informer._event({"type": "ADDED", "object": _child("x", "a", "10")})
    assert not informer._event(
        {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "12"}}}
    )
    assert informer.version == "12" and seen == [("ADDED", "x")]
    assert informer._event({"type": "ERROR", "object": {"code": 410, "reason": "Expired"}})
    try:
        informer._event({"type": "ERROR", "object": {"code": 500, "message": "etcd down"}})
    except Exception as exc:
        assert "etcd down" in str(exc)
    else:
        raise AssertionError("a watch error other than 410 must end the watch")


class _PagedApi:
    """Serves `items` in pages of `limit`, as the API server does (`continue` = next offset)."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items, self.calls = items, 0

    async def get_path(self, path: str, query: Mapping[str, str]) -> dict[str, Any]:
        self.calls += 1
        start, limit = int(query.get("continue") or 0), int(query["limit"])
        end = start + limit
        token = str(end) if end < len(self.items) else ""
        meta = {"resourceVersion": "99", **({"continue": token} if token else {})}
        return {"items": self.items[start:end], "metadata": meta}


def test_the_list_is_read_page_by_page_and_a_relist_reports_only_differences() -> None:
    import asyncio

    from gryvia_operator.controller import informer as module

    items = [_child(f"c-{i:04d}", f"o{i % 7}", "1") for i in range(1203)]
    api = _PagedApi(items)
    informer = Informer(cast(Any, api), "/apis/batch/v1/jobs")
    informer.add_index("by-owner", _by_owner)
    seen: list[tuple[str, str]] = []
    informer.add_listener("test", lambda kind, body: seen.append((kind, body["metadata"]["name"])))
    asyncio.run(informer._list())
    assert api.calls == -(-1203 // module.PAGE) and informer.version == "99"
    assert len(seen) == 1203 and {kind for kind, _ in seen} == {""}  # the first list: type ""
    assert sum(len(v) for v in informer.index("by-owner").values()) == 1203

    seen.clear()
    api.items = items[:1001]  # 202 gone
    api.items[5] = _child("c-0005", "o9", "2")
    asyncio.run(informer._list())
    assert ("MODIFIED", "c-0005") in seen and len(seen) == 1 + (1203 - 1001)
    assert sum(1 for kind, _ in seen if kind == "DELETED") == 1203 - 1001
    assert informer.index("by-owner")[("ns", "o9")] == ["c-0005"]


def test_a_new_run_reports_every_held_object_to_its_new_listeners() -> None:
    """A standby's run listed everything; the leader's run (new listeners, the informer's
    indexes kept) reports every object again as the first list ("" each), changed or not,
    and drops what went meanwhile."""
    import asyncio

    items = [_child(f"c-{i}", "o", "1") for i in range(5)]
    api = _PagedApi(items)
    informer = Informer(cast(Any, api), "/apis/batch/v1/jobs")
    informer.add_index("by-owner", _by_owner)
    asyncio.run(informer._list())  # the standby's run

    seen: list[tuple[str, str]] = []
    informer.add_listener("test", lambda kind, body: seen.append((kind, body["metadata"]["name"])))
    api.items = items[:4]  # c-4 went while no watch ran

    async def leader_run() -> None:
        task = asyncio.ensure_future(informer.run())
        await informer.synced.wait()
        task.cancel()

    informer._watch = _never_ends  # type: ignore[method-assign]
    asyncio.run(leader_run())
    assert sorted(seen) == [("", f"c-{i}") for i in range(4)] + [("DELETED", "c-4")]
    assert informer.index("by-owner")[("ns", "o")] == [f"c-{i}" for i in range(4)]


async def _never_ends() -> bool:
    import asyncio

    await asyncio.Event().wait()
    return False
