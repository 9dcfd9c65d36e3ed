"""`gryvia status`: deleted job pods held by the save-log finalizer while no operator runs
are a required Error naming the fix (issue #38, failure 6: status said OK)."""

from __future__ import annotations

from typing import Any

from gryvia_cli.core.finalizers import finalizer_state, held_pods, patch_command
from gryvia_cli.core.platform import build_report
from gryvia_operator.api.names import FINALIZER_SAVE_LOG
from tests.unit.cli.helpers import NOW
from tests.unit.cli.test_core_platform import _deployment, _inputs

TRACKING = "batch.kubernetes.io/job-tracking"


def _pod(name: str, ns: str, *, deleting: bool = True, finalizers: tuple[str, ...] = ()) -> Any:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "finalizers": list(finalizers or (TRACKING, FINALIZER_SAVE_LOG)),
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-12-01T11:00:00Z"
    return {"metadata": meta}


PODS = [
    _pod("a-0", "ml"),
    _pod("a-1", "ml"),
    _pod("b-0", "cv"),
    _pod("live", "ml", deleting=False),
    _pod("other", "ml", finalizers=(TRACKING,)),
]


def test_only_deleting_pods_with_the_finalizer_are_held() -> None:
    assert [p["metadata"]["name"] for p in held_pods(PODS)] == ["a-0", "a-1", "b-0"]
    assert finalizer_state([PODS[3], PODS[4]], operator_running=False) is None
    assert finalizer_state(None, operator_running=False) is None
    one = finalizer_state([PODS[2]], operator_running=True)
    assert one == (
        "OK",
        "1 deleted job pod in 1 namespace (cv) waits for the operator to save its log",
        False,
    )


def test_the_fix_removes_the_finalizer_at_its_position() -> None:
    assert patch_command(PODS[0]) == (
        "kubectl patch pod a-0 -n ml --type=json "
        """-p '[{"op":"remove","path":"/metadata/finalizers/1"}]'"""
    )


def test_held_pods_without_an_operator_break_the_status_and_name_the_fix() -> None:
    report = build_report(_inputs(deployments=[_deployment(0)], job_pods=PODS), NOW)
    assert report.broken
    [line] = [c for c in report.components if c.name == "Pod finalizers"]
    assert line.state == "Error" and line.required
    assert line.message.startswith("3 deleted job pods in 2 namespaces (cv, ml) wait for the")
    assert "python -m gryvia_operator.release_finalizers" in line.message
    assert "kubectl patch pod a-0 -n ml" in line.message


def test_held_pods_with_a_running_operator_are_fine_and_no_line_without_any() -> None:
    report = build_report(_inputs(deployments=[_deployment(1)], job_pods=PODS), NOW)
    assert not report.broken and report.overall == "ok"
    [line] = [c for c in report.components if c.name == "Pod finalizers"]
    assert line.state == "OK" and not line.required
    quiet = build_report(_inputs(deployments=[_deployment(1)], job_pods=PODS[3:]), NOW)
    assert [c.name for c in quiet.components][-1] == "Jobs"
