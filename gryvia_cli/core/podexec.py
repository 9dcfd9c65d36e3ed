"""Exec and port-forward into a job's pods: which pod and container, LOCAL:REMOTE ports, and
the exit code of a remote command. Pure functions; `gryvia exec`, `shell` and `port-forward`
(and the console's Job view) call them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gryvia_cli.core.jobs import replica_of_pod, sort_pods
from gryvia_cli.core.phases import is_terminal
from gryvia_cli.errors import GryviaError, NotFoundError, UsageError

EXIT_CANNOT_RUN = 126
"""Exit code when the remote command could not be run (kubectl, the shells: not executable)."""
EXIT_NOT_FOUND = 127
"""Exit code when the remote command does not exist (the shells' convention)."""

_INTERNAL = "Internal error occurred: "
_EXIT_STATUS = re.compile(r"exit (?:status|code) (\d+)\s*$")
_SIGNAL = re.compile(r"signal: ([a-z ]+?)\s*$")
_SIGNALS = {
    "hangup": 1,
    "interrupt": 2,
    "quit": 3,
    "aborted": 6,
    "killed": 9,
    "segmentation fault": 11,
    "broken pipe": 13,
    "terminated": 15,
}
"""Go's names of the signals (`signal: killed`) that end a process, and their numbers."""


class PodNotReadyError(GryviaError):
    """The replica has no running pod, or the container is not running."""


@dataclass(frozen=True)
class PortPair:
    """A LOCAL:REMOTE pair: `local` 0 means any free port."""

    local: int
    remote: int


def parse_ports(text: str) -> PortPair:
    """Parse `LOCAL:REMOTE`, `PORT` (the same on both sides) or `:REMOTE` (any free local
    port), as kubectl port-forward does. Raises UsageError naming the bad part."""
    local_text, sep, remote_text = text.partition(":")
    if not sep:
        local_text = remote_text = text
    try:
        remote = int(remote_text)
        local = int(local_text) if local_text else 0
    except ValueError:
        raise UsageError(
            f"ports {text!r}: expected LOCAL:REMOTE with port numbers, e.g. 8888:8000, or "
            ":8000 for any free local port"
        ) from None
    if not 1 <= remote <= 65535:
        raise UsageError(f"ports {text!r}: the remote port must be 1-65535, not {remote}")
    if not 0 <= local <= 65535:
        raise UsageError(f"ports {text!r}: the local port must be 0-65535, not {local}")
    return PortPair(local, remote)


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def _usable(pod: Mapping[str, Any]) -> bool:
    return _phase(pod) == "Running" and not (pod.get("metadata") or {}).get("deletionTimestamp")


def choose_pod(
    pods: Sequence[Mapping[str, Any]],
    replica: int | None,
    *,
    job: str,
    job_phase: str,
    replicas: int | None = None,
) -> Mapping[str, Any]:
    """Return the running pod of replica `replica` (completion index or StatefulSet ordinal;
    None: replica 0, else the first replica with a running pod), newest first.

    Raises UsageError when `replica` is negative or not below the job's `replicas` (its pod
    count; None: unknown), PodNotReadyError naming the job's phase and the replicas that
    have a running pod.
    """
    if replica is not None and (replica < 0 or (replicas is not None and replica >= replicas)):
        if replicas is None:
            raise UsageError(f"--replica {replica}: replicas are numbered from 0")
        count = f"{replicas} replica" + ("" if replicas == 1 else "s")
        raise UsageError(
            f"--replica {replica}: job {job} has {count}, numbered 0"
            + (f" to {replicas - 1}" if replicas > 1 else " only")
        )
    ordered = sort_pods(pods)
    running = [p for p in ordered if _usable(p)]
    have = sorted({r for p in running if (r := replica_of_pod(p)) is not None})
    listed = ", ".join(map(str, have)) if have else "none"
    if replica is None:
        wanted = [p for p in running if replica_of_pod(p) == 0] or running
    else:
        wanted = [p for p in running if replica_of_pod(p) == replica]
    if wanted:
        return wanted[0]
    which = "any replica" if replica is None else f"replica {replica}"
    mine = [p for p in ordered if replica is None or replica_of_pod(p) == replica]
    if replica is not None and mine:
        seen = f"; its pod {mine[0]['metadata']['name']} is {_phase(mine[0])}"
    elif mine:
        seen = f"; its pods are {', '.join(sorted({_phase(p) for p in mine}))}"
    else:
        seen = "; it has no pods" if not ordered else ""
    if is_terminal(job_phase):
        hint = "it has ended, and exec and port-forward need a running container"
    else:
        hint = f"wait for it to run (`gryvia status {job} --watch`)"
        if have:
            hint += " or pick another with --replica N"
    raise PodNotReadyError(
        f"job {job} (phase {job_phase}) has no running pod for {which}{seen}. Replicas with a "
        f"running pod: {listed}; {hint}"
    )


def choose_container(pod: Mapping[str, Any], container: str | None) -> str:
    """Return the container to run in: `container`, else the pod's first. Raises
    NotFoundError when the pod has no such container, PodNotReadyError when it is not
    running (its state is named)."""
    spec_names = [str(c["name"]) for c in (pod.get("spec") or {}).get("containers") or []]
    name = container or (spec_names[0] if spec_names else "")
    pod_name = pod["metadata"]["name"]
    if name not in spec_names:
        raise NotFoundError(
            f"container {name!r} not found in pod {pod_name}; its containers: "
            f"{', '.join(spec_names)} (pick one with -c/--container)"
        )
    statuses = {s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or []}
    state = (statuses.get(name) or {}).get("state") or {}
    if "running" not in state:
        what = next(iter(state), "not started")
        detail = state.get("terminated") or state.get("waiting") or {}
        extra = detail.get("reason") or ""
        if "exitCode" in detail:
            extra += f", exit code {detail['exitCode']}"
        raise PodNotReadyError(
            f"container {name} of pod {pod_name} is not running ({what}"
            + (f": {extra.strip(', ')}" if extra else "")
            + "); exec and port-forward need a running container"
        )
    return name


def exit_code_of(status: Mapping[str, Any] | None) -> tuple[int, str]:
    """Return (exit code, message) from the Status a remote command ended with.

    `Success` is (0, ""). A `NonZeroExitCode` Status carries the code in its `ExitCode`
    cause (a kubelet's); otherwise a message ending in `exit status N` gives N (kwok's, the
    sandbox's), `signal: killed` gives 128+9, `executable file not found` 127; anything else
    is 126 (the command could not be run) with the Status's message. None (no Status: the
    stream was cut) is (1, a message saying so).
    """
    if not status:
        return 1, "the connection closed before the command's exit status arrived"
    if status.get("status") == "Success":
        return 0, ""
    message = str(status.get("message") or "")
    while message.startswith(_INTERNAL):  # the API server's wrapping, once per hop
        message = message[len(_INTERNAL) :]
    for cause in (status.get("details") or {}).get("causes") or []:
        if cause.get("reason") == "ExitCode" and str(cause.get("message", "")).isdigit():
            return int(cause["message"]), ""
    if m := _EXIT_STATUS.search(message):
        return int(m.group(1)), ""
    if (m := _SIGNAL.search(message)) and m.group(1) in _SIGNALS:
        return 128 + _SIGNALS[m.group(1)], ""
    if "executable file not found" in message or "no such file or directory" in message:
        return EXIT_NOT_FOUND, message
    return EXIT_CANNOT_RUN, message


LISTEN_WAIT_S = 30.0
"""How long one forwarded connection waits for the pod's port to listen (seconds): the
sandbox lists a new listener for forwarding some 10 s after it starts, on a loaded machine."""
_NOT_LISTENING = ("connection refused", "forward not found for port")
"""Nothing listens on the pod's port yet: the kubelet's dial error, and kwok's (the sandbox
lists a pod's port for forwarding once something listens on it)."""


def forward_retry_delay(
    error: str, *, answered: bool, waited_s: float, attempt: int
) -> float | None:
    """Seconds to wait before opening a forwarded connection's stream again, or None to
    give up and report `error`.

    Only the pod side's "connection refused" (nothing listens on the port yet, e.g. right
    after the pod started; in the sandbox, kwok's "forward not found for port") is retried,
    only while the pod has sent nothing on this connection (so what the client sent can be
    replayed as is), and only until LISTEN_WAIT_S have passed: 0.1 s, doubling to at most
    1 s between tries."""
    if answered or waited_s >= LISTEN_WAIT_S:
        return None
    if not any(text in error.lower() for text in _NOT_LISTENING):
        return None
    delay = min(0.1 * 2.0 ** min(attempt, 10), 1.0)
    return min(delay, LISTEN_WAIT_S - waited_s)
