"""The pod runner's status builders: phases, container states, conditions, kwok Logs."""

from __future__ import annotations

from pathlib import Path

from gryvia_cli.sandbox.podstatus import (
    ContainerRecord,
    build_cannot_run_status,
    build_conditions,
    build_failed_status,
    build_logs_object,
    build_status,
    cannot_run,
)

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:05Z"
POD = {
    "metadata": {"name": "p", "namespace": "ns", "uid": "u-1"},
    "spec": {
        "initContainers": [{"name": "init", "image": "i"}],
        "containers": [{"name": "a", "image": "img:1"}, {"name": "b", "image": "img:2"}],
    },
}


def _status(containers: dict[str, ContainerRecord], alive: set[str], *, final: bool = False):
    return build_status(
        POD,
        uid="u-1",
        pod_ip="10.0.0.2",
        host_ip="127.0.0.1",
        started=T0,
        containers=containers,
        alive=alive,
        stamp=T1,
        final=final,
    )


def test_running_pod_reports_its_address_and_ready() -> None:
    status = _status({"a": ContainerRecord("a", started_at=T0)}, {"a"})
    assert status["phase"] == "Running"
    assert status["podIP"] == "10.0.0.2" and status["podIPs"] == [{"ip": "10.0.0.2"}]
    assert status["hostIPs"] == [{"ip": "127.0.0.1"}]
    a, b = status["containerStatuses"]
    assert a["ready"] is True and a["state"] == {"running": {"startedAt": T0}}
    # not started yet: waiting, as the kubelet reports it (no startedAt to bill from)
    assert b["ready"] is False and b["state"] == {"waiting": {"reason": "ContainerCreating"}}
    ready = {c["type"]: c["status"] for c in status["conditions"]}
    assert ready["Ready"] == "True" and ready["ContainersReady"] == "True"


def test_final_status_succeeds_only_when_every_container_exited_zero() -> None:
    done = {
        "a": ContainerRecord("a", T0, exit_code=0, finished_at=T1),
        "b": ContainerRecord("b", T0, restarts=2, exit_code=0, finished_at=T1),
    }
    ok = _status(done, set(), final=True)
    assert ok["phase"] == "Succeeded"
    term = ok["containerStatuses"][1]["state"]["terminated"]
    assert term == {
        "exitCode": 0,
        "reason": "Completed",
        "startedAt": T0,
        "finishedAt": T1,
        "containerID": "gryvia://u-1/b",
    }
    assert ok["containerStatuses"][1]["restartCount"] == 2
    conds = {c["type"]: c for c in ok["conditions"]}
    assert conds["Ready"]["status"] == "False" and conds["Ready"]["reason"] == "PodCompleted"

    done["b"] = ContainerRecord("b", T0, exit_code=3, finished_at=T1, message="boom")
    failed = _status(done, set(), final=True)
    assert failed["phase"] == "Failed"
    term = failed["containerStatuses"][1]["state"]["terminated"]
    assert term["reason"] == "Error" and term["exitCode"] == 3 and term["message"] == "boom"


def test_failed_status_and_conditions_carry_the_reason_and_stamp() -> None:
    status = build_failed_status("init container x exited with 1", T1)
    assert status["phase"] == "Failed" and status["message"].startswith("init container x")
    assert {c["lastTransitionTime"] for c in status["conditions"]} == {T1}
    assert [c["type"] for c in build_conditions("True", "ignored", T0)] == [
        "PodScheduled",
        "PodReadyToStartContainers",
        "Initialized",
        "ContainersReady",
        "Ready",
    ]
    assert not any("reason" in c for c in build_conditions("True", "ignored", T0))


def test_logs_object_serves_every_container_file_and_is_owned_by_the_pod() -> None:
    body = build_logs_object(POD, Path("/s/pods/p/logs"))
    assert body["metadata"]["ownerReferences"][0]["uid"] == "u-1"
    assert [(e["containers"], e["logsFile"]) for e in body["spec"]["logs"]] == [
        (["a"], "/s/pods/p/logs/a.log"),
        (["b"], "/s/pods/p/logs/b.log"),
        (["init"], "/s/pods/p/logs/init.log"),
    ]
    assert body["spec"]["logs"][0]["previousLogsFile"] == "/s/pods/p/logs/a.previous.log"


def test_the_charts_operator_pod_is_not_started_and_says_why() -> None:
    labels = {"app.kubernetes.io/part-of": "gryvia", "app.kubernetes.io/component": "operator"}
    operator = {**POD, "metadata": {**POD["metadata"], "labels": labels}}
    why = cannot_run(operator)
    assert "cannot run Gryvia's operator as a pod" in why and "`gryvia sandbox up`" in why
    assert cannot_run(POD) == ""
    webhook = {**labels, "app.kubernetes.io/component": "webhook"}
    assert cannot_run({**POD, "metadata": {"labels": webhook}}) == ""
    status = build_cannot_run_status(operator, why, T1)
    assert status["phase"] == "Pending" and status["reason"] == "SandboxCannotRun"
    assert [c["name"] for c in status["containerStatuses"]] == ["a", "b"]
    for ctr in status["containerStatuses"]:
        assert ctr["state"] == {"waiting": {"reason": "SandboxCannotRun", "message": why}}
        assert ctr["restartCount"] == 0 and not ctr["ready"]
