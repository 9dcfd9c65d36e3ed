"""Saving a deleted pod's last lines: when, how much, in which ConfigMap shape."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gryvia_operator.api.names import FINALIZER_SAVE_LOG, saved_logs_name
from gryvia_operator.api.savedlogs import SavedLog, entry_data, parse_saved_logs
from gryvia_operator.reconcile import savedlogs as rules
from gryvia_operator.reconcile.children import build_batch_job
from tests.builders import make_job

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
JOB = {"metadata": {"name": "train", "namespace": "ml", "uid": "u-job"}, "spec": {}}


def pod(
    *,
    deleted: datetime | None = NOW,
    finalizers: tuple[str, ...] = ("batch.kubernetes.io/job-tracking", FINALIZER_SAVE_LOG),
    state: str | None = "terminated",
    phase: str = "Failed",
    index: str | None = "1",
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": "train-1-abc",
        "namespace": "ml",
        "uid": "u-pod",
        "creationTimestamp": "2026-12-01T11:00:00Z",
        "finalizers": list(finalizers),
        "labels": {"gryvia.io/job": "train"},
        "annotations": {} if index is None else {"batch.kubernetes.io/job-completion-index": index},
    }
    if deleted is not None:
        meta["deletionTimestamp"] = deleted.strftime("%Y-%m-%dT%H:%M:%SZ")
    statuses = [] if state is None else [{"name": "trainer", "state": {state: {}}}]
    return {
        "metadata": meta,
        "spec": {"containers": [{"name": "sidecar"}, {"name": "trainer"}]},
        "status": {"phase": phase, "containerStatuses": statuses},
    }


def test_the_pod_template_carries_the_save_log_finalizer() -> None:
    job = build_batch_job(make_job("t").gpus(0).distributed(nodes=2).model())
    assert job["spec"]["template"]["metadata"]["finalizers"] == [FINALIZER_SAVE_LOG]


def test_only_deleted_or_finished_pods_with_the_finalizer_are_handled() -> None:
    assert rules.decide(pod(deleted=None, state="running", phase="Running"), JOB, NOW) is None
    assert rules.decide(pod(deleted=None, state=None, phase="Pending"), JOB, NOW) is None
    assert rules.decide(pod(finalizers=("other/x",)), JOB, NOW) is None
    assert rules.decide(pod(deleted=None, finalizers=("other/x",)), JOB, NOW) is None


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_a_finished_pod_is_saved_and_released_before_anyone_deletes_it(phase: str) -> None:
    """Finished pods must not keep the finalizer: with no operator left to remove it, a
    namespace deletion would wait on them forever (issue #38, failure 6)."""
    decision = rules.decide(pod(deleted=None, phase=phase), JOB, NOW)
    assert decision == rules.LogDecision("save", replica=1, container="trainer")
    gone = rules.decide(pod(deleted=None, phase=phase), None, NOW)
    assert gone == rules.LogDecision("release", why="its job is deleted")
    never = rules.decide(pod(deleted=None, state=None, phase=phase), JOB, NOW)
    assert never == rules.LogDecision("release", why="its containers never started")


def test_a_stopped_pod_is_saved_as_its_replica_from_its_trainer_container() -> None:
    decision = rules.decide(pod(), JOB, NOW)
    assert decision == rules.LogDecision("save", replica=1, container="trainer")


def test_a_pod_still_stopping_is_waited_for_until_shortly_after_its_deletion_time() -> None:
    stopping = pod(state="running", phase="Running")
    decision = rules.decide(stopping, JOB, NOW)
    assert decision is not None and decision.action == "wait"
    assert decision.until == NOW + timedelta(seconds=rules.SHUTDOWN_SLACK_SECONDS)
    late = NOW + timedelta(seconds=rules.SHUTDOWN_SLACK_SECONDS + 1)
    saved = rules.decide(stopping, JOB, late)
    assert saved is not None and saved.action == "save"


@pytest.mark.parametrize(
    ("case", "job", "why"),
    [
        (pod(), None, "its job is deleted"),
        (pod(), {"metadata": {"deletionTimestamp": "2026-12-01T12:00:00Z"}}, "its job is deleted"),
        (pod(state=None, phase="Pending"), JOB, "its containers never started"),
        (pod(index=None), JOB, "it has no replica number"),
    ],
)
def test_the_finalizer_is_released_without_saving_when_there_is_nothing_to_save(
    case: dict[str, Any], job: dict[str, Any] | None, why: str
) -> None:
    assert rules.decide(case, job, NOW) == rules.LogDecision("release", why=why)


def test_a_short_log_is_kept_whole() -> None:
    assert rules.cut_tail("a\nb\n") == ("a\nb", 2, False)
    assert rules.cut_tail("") == ("", 0, False)


def test_a_long_log_keeps_its_last_whole_lines_under_a_marker() -> None:
    text = "\n".join(f"line {n}" for n in range(10)) + "\n"
    saved, kept, cut = rules.cut_tail(text, max_lines=3, max_bytes=10_000)
    lines = saved.split("\n")
    assert cut and kept == 3
    assert lines[1:] == ["line 7", "line 8", "line 9"]
    assert lines[0].startswith("[gryvia: earlier lines not saved; these are the last 3 line(s)")


def test_the_byte_bound_counts_the_marker_and_keeps_whole_utf8_lines() -> None:
    text = "\n".join("é" * 40 for _ in range(100))
    saved, kept, cut = rules.cut_tail(text, max_lines=2000, max_bytes=1024)
    assert cut and len(saved.encode()) <= 1024
    assert all(line == "é" * 40 for line in saved.split("\n")[1:])
    assert kept == len(saved.split("\n")) - 1


def test_one_huge_line_keeps_its_end() -> None:
    saved, kept, cut = rules.cut_tail("x" * 5000 + "END", max_lines=10, max_bytes=1024)
    assert cut and kept == 1 and saved.endswith("END") and len(saved.encode()) <= 1024


def test_many_replicas_share_the_job_budget_under_the_configmap_limit() -> None:
    assert rules.replica_budget(1) == rules.MAX_REPLICA_BYTES
    assert rules.replica_budget(2) == rules.MAX_REPLICA_BYTES
    assert rules.replica_budget(8) * 8 <= rules.TOTAL_BYTES < 1024 * 1024
    assert rules.replica_budget(10_000) == rules.MIN_REPLICA_BYTES


def test_the_configmap_is_named_labelled_and_owned_by_the_job() -> None:
    decision = rules.LogDecision("save", replica=1, container="trainer")
    saved = rules.saved_entry(pod(), decision, "hello\nworld\n", 2, NOW)
    body = rules.configmap_body(JOB, saved)
    assert body["metadata"]["name"] == saved_logs_name("train") == "train-logs"
    assert body["metadata"]["namespace"] == "ml"
    assert body["metadata"]["labels"]["gryvia.io/job"] == "train"
    assert body["metadata"]["labels"]["gryvia.io/saved-logs"] == "true"
    assert body["metadata"]["ownerReferences"][0]["uid"] == "u-job"
    assert rules.owned_by(body, "u-job") and not rules.owned_by(body, "other")
    assert body["data"]["replica-1.log"] == "hello\nworld"
    meta = json.loads(body["data"]["replica-1.json"])
    assert meta == {
        "container": "trainer",
        "cut": False,
        "lines": 2,
        "pod": "train-1-abc",
        "podCreated": "2026-12-01T11:00:00Z",
        "savedAt": "2026-12-01T12:00:00Z",
    }
    assert parse_saved_logs(body) == {1: saved}


def test_parsing_skips_foreign_and_broken_keys() -> None:
    good = SavedLog(0, "p", "trainer", "", "2026-12-01T12:00:00Z", True, "m\na", 1)
    data = {**entry_data(good), "replica-x.json": "{}", "replica-2.json": "not json", "k": "v"}
    assert parse_saved_logs({"data": data}) == {0: good}
    assert parse_saved_logs(None) == {}
    assert good.text_lines() == ["m", "a"]


def test_a_newer_pod_of_the_replica_wins() -> None:
    old = SavedLog(1, "p", "trainer", "2026-12-01T11:00:00Z", "", False, "", 0)
    assert rules.should_replace(None, "2026-12-01T10:00:00Z")
    assert rules.should_replace(old, "2026-12-01T11:30:00Z")
    assert not rules.should_replace(old, "2026-12-01T10:30:00Z")


def test_the_finalizer_removal_tests_its_position() -> None:
    assert rules.finalizer_removal(pod()) == [
        {"op": "test", "path": "/metadata/finalizers/1", "value": FINALIZER_SAVE_LOG},
        {"op": "remove", "path": "/metadata/finalizers/1"},
    ]
    assert rules.finalizer_removal(pod(finalizers=())) is None
