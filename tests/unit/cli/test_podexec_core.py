"""Exec and port-forward choices: replica -> pod, container, LOCAL:REMOTE, exit codes."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_cli.core.podexec import (
    EXIT_CANNOT_RUN,
    EXIT_NOT_FOUND,
    PodNotReadyError,
    PortPair,
    choose_container,
    choose_pod,
    exit_code_of,
    parse_ports,
)
from gryvia_cli.errors import NotFoundError, UsageError


def pod(
    name: str,
    replica: int,
    phase: str = "Running",
    *,
    created: str = "2026-01-01T00:00:00Z",
    state: dict[str, Any] | None = None,
    deleting: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "creationTimestamp": created,
        "annotations": {"batch.kubernetes.io/job-completion-index": str(replica)},
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:10:00Z"
    return {
        "metadata": meta,
        "spec": {"containers": [{"name": "trainer"}, {"name": "sidecar"}]},
        "status": {
            "phase": phase,
            "containerStatuses": [
                {"name": "trainer", "state": state or {"running": {}}},
                {
                    "name": "sidecar",
                    "state": {"terminated": {"reason": "Completed", "exitCode": 0}},
                },
            ],
        },
    }


def test_replica_picks_its_running_pod_and_the_default_is_replica_0() -> None:
    pods = [pod("j-1-a", 1), pod("j-0-a", 0)]
    assert choose_pod(pods, 1, job="j", job_phase="Running")["metadata"]["name"] == "j-1-a"
    assert choose_pod(pods, None, job="j", job_phase="Running")["metadata"]["name"] == "j-0-a"


def test_default_falls_back_to_the_first_running_replica() -> None:
    pods = [pod("j-0-a", 0, "Failed"), pod("j-2-a", 2), pod("j-1-a", 1)]
    assert choose_pod(pods, None, job="j", job_phase="Running")["metadata"]["name"] == "j-1-a"


def test_the_newest_running_pod_of_a_replica_wins_and_deleting_ones_are_skipped() -> None:
    old = pod("j-1-old", 1, created="2026-01-01T00:00:00Z")
    new = pod("j-1-new", 1, created="2026-01-01T00:05:00Z")
    assert choose_pod([old, new], 1, job="j", job_phase="Running")["metadata"]["name"] == "j-1-new"
    gone = pod("j-1-new", 1, created="2026-01-01T00:05:00Z", deleting=True)
    assert choose_pod([old, gone], 1, job="j", job_phase="Running")["metadata"]["name"] == "j-1-old"


def test_a_replica_without_a_running_pod_names_the_phase_and_the_running_replicas() -> None:
    pods = [pod("j-0-a", 0), pod("j-1-a", 1, "Pending")]
    with pytest.raises(PodNotReadyError) as err:
        choose_pod(pods, 1, job="j", job_phase="Running")
    text = str(err.value)
    assert "job j (phase Running) has no running pod for replica 1" in text
    assert "its pod j-1-a is Pending" in text
    assert "Replicas with a running pod: 0; wait for it to run" in text
    assert "--replica N" in text


def test_an_ended_job_says_it_has_ended() -> None:
    pods = [pod("j-0-a", 0, "Succeeded"), pod("j-1-a", 1, "Failed")]
    with pytest.raises(PodNotReadyError) as err:
        choose_pod(pods, None, job="j", job_phase="Failed")
    assert str(err.value) == (
        "job j (phase Failed) has no running pod for any replica; its pods are Failed, "
        "Succeeded. Replicas with a running pod: none; it has ended, and exec and "
        "port-forward need a running container"
    )


def test_a_job_without_pods_says_so() -> None:
    with pytest.raises(PodNotReadyError, match=r"phase Queued\) has no running pod for any"):
        choose_pod([], None, job="j", job_phase="Queued")


def test_a_replica_the_job_does_not_have_is_a_usage_error() -> None:
    """`--replica 5` of a 2-pod job (or -1) cannot come by waiting: exit 2 naming the range."""
    pods = [pod("j-0-a", 0), pod("j-1-a", 1)]
    with pytest.raises(UsageError, match=r"^--replica 5: job j has 2 replicas, numbered 0 to 1$"):
        choose_pod(pods, 5, job="j", job_phase="Running", replicas=2)
    with pytest.raises(UsageError, match=r"job j has 2 replicas"):
        choose_pod(pods, -1, job="j", job_phase="Running", replicas=2)
    with pytest.raises(UsageError, match=r"job j has 1 replica, numbered 0 only"):
        choose_pod(pods[:1], 1, job="j", job_phase="Running", replicas=1)
    with pytest.raises(UsageError, match=r"numbered from 0"):
        choose_pod(pods, -1, job="j", job_phase="Running")
    assert choose_pod(pods, 1, job="j", job_phase="Running", replicas=2) is pods[1]


def test_no_running_replica_does_not_suggest_picking_another() -> None:
    with pytest.raises(PodNotReadyError) as err:
        choose_pod([], None, job="j", job_phase="Pending", replicas=1)
    assert str(err.value).endswith("wait for it to run (`gryvia status j --watch`)")


def test_container_is_the_first_unless_named_and_must_run() -> None:
    p = pod("j-0-a", 0)
    assert choose_container(p, None) == "trainer"
    with pytest.raises(NotFoundError, match="container 'nope' not found in pod j-0-a; its"):
        choose_container(p, "nope")
    with pytest.raises(PodNotReadyError, match=r"sidecar .* not running \(terminated: Completed"):
        choose_container(p, "sidecar")
    waiting = pod("j-0-a", 0, state={"waiting": {"reason": "ContainerCreating"}})
    with pytest.raises(PodNotReadyError, match=r"\(waiting: ContainerCreating\)"):
        choose_container(waiting, None)


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("8888:8000", PortPair(8888, 8000)),
        ("8000", PortPair(8000, 8000)),
        (":8000", PortPair(0, 8000)),
        ("0:22", PortPair(0, 22)),
    ],
)
def test_port_pairs(text: str, pair: PortPair) -> None:
    assert parse_ports(text) == pair


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("8000:http", "expected LOCAL:REMOTE"),
        ("", "expected LOCAL:REMOTE"),
        ("8000:0", "remote port must be 1-65535"),
        ("70000:80", "local port must be 0-65535"),
        ("1:2:3", "expected LOCAL:REMOTE"),
    ],
)
def test_bad_port_pairs_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_ports(text)


def test_exit_codes_from_the_status() -> None:
    assert exit_code_of({"status": "Success"}) == (0, "")
    kubelet = {
        "status": "Failure",
        "reason": "NonZeroExitCode",
        "message": "command terminated with non-zero exit code: error executing command",
        "details": {"causes": [{"reason": "ExitCode", "message": "3"}]},
    }
    assert exit_code_of(kubelet) == (3, "")
    kwok = {
        "status": "Failure",
        "reason": "InternalError",
        "message": "error executing command in container: cmd wait: sh -c exit 7: exit status 7",
    }
    assert exit_code_of(kwok) == (7, "")
    killed = {"status": "Failure", "message": "cmd wait: sleep 9: signal: killed"}
    assert exit_code_of(killed) == (137, "")


def test_commands_that_cannot_run_and_cut_streams() -> None:
    missing = {"status": "Failure", "message": 'exec: "nope": executable file not found in $PATH'}
    assert exit_code_of(missing)[0] == EXIT_NOT_FOUND
    other = {"status": "Failure", "message": "container not found"}
    assert exit_code_of(other) == (EXIT_CANNOT_RUN, "container not found")
    wrapped = {"message": "Internal error occurred: Internal error occurred: cmd start: denied"}
    assert exit_code_of({"status": "Failure", **wrapped}) == (EXIT_CANNOT_RUN, "cmd start: denied")
    code, message = exit_code_of(None)
    assert code == 1 and "closed before" in message
