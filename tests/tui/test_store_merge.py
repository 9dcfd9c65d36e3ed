"""The store's merge of a relist (after `410 Gone` or a reconnect): no row lost, none doubled,
only what changed repainted. Pure: no cluster."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gryvia_cli.tui.store import ClusterStore, event_update, list_update, merge_list
from tests.tui.builders import make_job


def _job(index: int, phase: str = "Queued") -> dict[str, Any]:
    obj = make_job(f"job-{index:03d}").ns(f"team-{index % 3}").phase(phase).obj()
    obj["metadata"]["resourceVersion"] = f"{index}-{phase}"
    return obj


def test_a_relist_after_gone_reports_only_added_removed_and_changed_jobs() -> None:
    store = ClusterStore()
    store.apply([list_update("jobs", [_job(i) for i in range(6)])])
    kept = store.jobs["team-1/job-001"]
    # Watch events seen before the 410, then a relist that misses none of the gap's changes:
    # job 5 deleted, job 2 changed, job 7 created while the watch was down.
    store.apply([event_update("jobs", "MODIFIED", _job(4, "Running"))])
    fresh = [_job(0), _job(1), _job(2, "Running"), _job(3), _job(4, "Running"), _job(7)]
    change = store.apply([list_update("jobs", fresh)])
    assert change.listed == {"jobs"}
    assert change.keys["jobs"] == {"team-2/job-002", "team-2/job-005", "team-1/job-007"}
    assert sorted(store.jobs) == sorted(f"team-{i % 3}/job-{i:03d}" for i in (0, 1, 2, 3, 4, 7))
    assert store.jobs["team-1/job-001"] is kept
    assert store.jobs["team-2/job-002"].summary.phase == "Running"


def test_an_identical_relist_changes_nothing() -> None:
    store = ClusterStore()
    store.apply([list_update("jobs", [_job(i) for i in range(4)])])
    change = store.apply([list_update("jobs", [_job(i) for i in range(4)])])
    assert change.keys["jobs"] == set() and change.listed == {"jobs"}
    assert len(store.jobs) == 4


_STATES = st.dictionaries(st.integers(0, 40), st.sampled_from(["Queued", "Running", "Failed"]))


@given(before=_STATES, after=_STATES)
@settings(max_examples=60, deadline=None)
def test_merge_keeps_exactly_the_relisted_keys(
    before: dict[int, str], after: dict[int, str]
) -> None:
    current = {f"k{i}": ("v", p) for i, p in before.items()}
    fresh = {f"k{i}": ("v", p) for i, p in after.items()}
    merged, changed = merge_list(current, fresh)
    assert merged == fresh and list(merged) == list(fresh)
    moved = {f"k{i}" for i in set(before) ^ set(after)}
    edited = {f"k{i}" for i in set(before) & set(after) if before[i] != after[i]}
    assert changed == moved | edited
    for key in set(current) & set(fresh) - changed:
        assert merged[key] is current[key]
