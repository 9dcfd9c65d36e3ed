"""`core.pods.restart_count`: whether a container has a previous run (and so a previous log)."""

from __future__ import annotations

from gryvia_cli.core.pods import restart_count


def _pod(*statuses: dict[str, object]) -> dict[str, object]:
    return {"status": {"containerStatuses": list(statuses)}}


def test_restart_count_of_the_named_container() -> None:
    pod = _pod({"name": "sidecar", "restartCount": 4}, {"name": "trainer", "restartCount": 0})
    assert restart_count(pod, "trainer") == 0
    assert restart_count(pod, "sidecar") == 4


def test_unknown_when_the_pod_reports_no_status_for_it() -> None:
    assert restart_count({}, "trainer") is None
    assert restart_count(_pod({"name": "other", "restartCount": 1}), "trainer") is None
    assert restart_count(_pod({"name": "trainer"}), "trainer") is None
