"""`gryvia logs`: a replica's newest pod wins; a replica without a pod shows its saved lines."""

from __future__ import annotations

from gryvia_cli.core import savedlogs
from gryvia_operator.api.savedlogs import SavedLog


def saved(replica: int, *, cut: bool = False, text: str = "a\nb\nc") -> SavedLog:
    return SavedLog(
        replica, f"train-{replica}-x", "trainer", "", "2026-12-01T12:00:00Z", cut, text, 3
    )


POD = {"metadata": {"name": "train-1-y"}}


def test_all_replicas_go_in_replica_order_a_pod_winning_over_a_saved_log() -> None:
    newest = {1: POD, None: POD}
    logs = {0: saved(0), 1: saved(1)}
    sources, missing = savedlogs.every_replica(newest, logs, 4)
    assert [(s.replica, s.pod is not None, s.saved is not None) for s in sources] == [
        (0, False, True),
        (1, True, False),
        (None, True, False),
    ]
    assert missing == [2, 3]


def test_one_replica_prefers_its_pod_then_its_saved_log_then_nothing() -> None:
    logs = {0: saved(0)}
    assert savedlogs.one_replica({0: POD}, logs, None) == savedlogs.Source(0, pod=POD)
    assert savedlogs.one_replica({1: POD}, logs, None) == savedlogs.Source(0, saved=logs[0])
    assert savedlogs.one_replica({1: POD}, logs, 2) is None
    assert savedlogs.first_saved({3: saved(3), 2: saved(2)}) == savedlogs.Source(2, saved=saved(2))
    assert savedlogs.first_saved({}) is None


def test_tail_applies_to_the_saved_lines() -> None:
    entry = saved(0)
    assert savedlogs.saved_lines(entry, None) == ["a", "b", "c"]
    assert savedlogs.saved_lines(entry, 2) == ["b", "c"]
    assert savedlogs.saved_lines(entry, 0) == []


def test_the_note_says_when_it_was_saved_and_whether_it_was_cut() -> None:
    note = savedlogs.saved_note("train", saved(0, cut=True))
    assert note == (
        "replica 0 of job train has no pod (pod train-0-x was deleted); showing the last 3 "
        "line(s) the operator saved at 2026-12-01T12:00:00Z; cut: the log was longer, earlier "
        "lines were not kept"
    )
    assert savedlogs.saved_note("train", saved(0)).endswith("; that is the whole log")
