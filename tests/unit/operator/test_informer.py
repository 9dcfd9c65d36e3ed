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
