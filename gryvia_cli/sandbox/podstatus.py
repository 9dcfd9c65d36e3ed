"""What the sandbox's pod runner reports to the API server: pod status, conditions, kwok Logs.

Pure builders. Clocks are injected: every builder takes the time stamp to write (RFC 3339,
seconds, as `now()` returns it); which containers are still running is passed in too, so
nothing here looks at a process.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gryvia_cli.sandbox.crilog import previous_log

KWOK_GROUP, KWOK_VERSION = "kwok.x-k8s.io", "v1alpha1"


def now() -> str:
    """Return the current UTC time in the API's RFC 3339 form (seconds)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class ContainerRecord:
    """What the runner knows of one container's current (or last) run.

    `exit_code` is None while the process runs (or before it first started); times are
    RFC 3339 strings, empty when unknown.
    """

    name: str
    started_at: str = ""
    restarts: int = 0
    exit_code: int | None = None
    finished_at: str = ""
    message: str = ""


def build_conditions(ready: str, reason: str, stamp: str) -> list[dict[str, str]]:
    """Return the pod conditions: scheduled, initialized, and Ready/ContainersReady = `ready`
    ("True"/"False"), with `reason` on the latter two when they are False."""
    out = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp}]
    for kind in ("PodReadyToStartContainers", "Initialized"):
        out.append({"type": kind, "status": "True", "lastTransitionTime": stamp})
    for kind in ("ContainersReady", "Ready"):
        cond = {"type": kind, "status": ready, "lastTransitionTime": stamp}
        if reason and ready == "False":
            cond["reason"] = reason
        out.append(cond)
    return out


def build_status(
    pod: Mapping[str, Any],
    *,
    uid: str,
    pod_ip: str,
    host_ip: str,
    started: str,
    containers: Mapping[str, ContainerRecord],
    alive: Collection[str],
    stamp: str,
    final: bool = False,
    unready: Collection[str] = (),
) -> dict[str, Any]:
    """Return the pod's `status` while its containers run, or once all ended (`final`).

    `containers` maps container name to its record (missing: not started yet); `alive` names
    the containers whose process is running now; `unready` those running whose readiness
    probe has not passed (sandbox/probes.py). Phase is Running until `final`, then
    Succeeded when every container exited 0, else Failed. The pod is Ready when every
    running container is ready (as the kubelet says) and at least one runs.
    """
    statuses, all_ok, any_running, all_ready = [], True, False, True
    for spec in pod["spec"]["containers"]:
        ctr = containers.get(spec["name"]) or ContainerRecord(spec["name"])
        running = spec["name"] in alive and ctr.exit_code is None
        any_running |= running
        ready = running and spec["name"] not in unready
        all_ready &= ready or not running
        if not ctr.started_at and ctr.exit_code is None:  # not started yet, as the kubelet says
            state: dict[str, Any] = {
                "waiting": (
                    {"reason": "CreateContainerConfigError", "message": ctr.message}
                    if ctr.message  # a ConfigMap or Secret it needs is missing
                    else {"reason": "ContainerCreating"}
                )
            }
        elif running or ctr.exit_code is None:
            state = {"running": {"startedAt": ctr.started_at}}
        else:
            all_ok &= ctr.exit_code == 0
            state = {
                "terminated": {
                    "exitCode": ctr.exit_code,
                    "reason": "Completed" if ctr.exit_code == 0 else "Error",
                    **({"startedAt": ctr.started_at} if ctr.started_at else {}),
                    "finishedAt": ctr.finished_at,
                    "containerID": f"gryvia://{uid}/{ctr.name}",
                    **({"message": ctr.message} if ctr.message else {}),
                }
            }
        statuses.append(
            {
                "name": spec["name"],
                "image": spec.get("image", ""),
                "imageID": spec.get("image", ""),
                "containerID": f"gryvia://{uid}/{ctr.name}",
                "ready": ready,
                "started": running,
                "restartCount": ctr.restarts,
                "state": state,
            }
        )
    phase = ("Succeeded" if all_ok else "Failed") if final else "Running"
    pod_ready = "True" if any_running and all_ready and not final else "False"
    return {
        "phase": phase,
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "startTime": started,
        "conditions": build_conditions(
            pod_ready,
            "PodCompleted" if final else ("" if all_ready else "ContainersNotReady"),
            stamp,
        ),
        "containerStatuses": statuses,
    }


def build_failed_status(message: str, stamp: str) -> dict[str, Any]:
    """Return the status of a pod that failed before (or without) running its containers."""
    return {
        "phase": "Failed",
        "reason": "Error",
        "message": message,
        "conditions": build_conditions("False", "PodFailed", stamp),
    }


CANNOT_RUN = "SandboxCannotRun"
"""The waiting reason of a container the sandbox will not start (`cannot_run`)."""
OPERATOR_POD_MESSAGE = (
    "the sandbox cannot run Gryvia's operator as a pod: its pods are host processes, with no "
    "image, no in-cluster service account token and none of the chart's volumes, so the "
    "operator would crash-loop on 'Invalid kube-config file'. `gryvia sandbox up` installs the "
    "chart with replicaCount=0 and runs the same operator beside the sandbox with the chart's "
    "ServiceAccount token (`gryvia sandbox status` shows it); on a real cluster this pod runs"
)


def cannot_run(pod: Mapping[str, Any]) -> str:
    """Why the sandbox will not start `pod`'s containers ("" when it will): the chart's
    operator pod (labels app.kubernetes.io/part-of=gryvia, app.kubernetes.io/component=
    operator), which needs what only a real kubelet gives (README, "what is real and what is
    simulated")."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if (
        labels.get("app.kubernetes.io/part-of") == "gryvia"
        and labels.get("app.kubernetes.io/component") == "operator"
    ):
        return OPERATOR_POD_MESSAGE
    return ""


def build_cannot_run_status(pod: Mapping[str, Any], message: str, stamp: str) -> dict[str, Any]:
    """The status of a pod the sandbox will not start: Pending, every container waiting with
    reason `CANNOT_RUN` and `message` (what `kubectl get pods` and `describe` show)."""
    waiting = {"waiting": {"reason": CANNOT_RUN, "message": message}}
    return {
        "phase": "Pending",
        "message": message,
        "reason": CANNOT_RUN,
        "conditions": build_conditions("False", "ContainersNotReady", stamp),
        "containerStatuses": [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": waiting,
            }
            for c in pod["spec"]["containers"]
        ],
    }


def container_names(pod: Mapping[str, Any]) -> list[str]:
    """Return the names of the pod's containers, then of its init containers."""
    spec = pod["spec"]
    names = [str(c["name"]) for c in spec["containers"]]
    return names + [str(c["name"]) for c in spec.get("initContainers") or []]


def build_logs_object(pod: Mapping[str, Any], logs_dir: Path) -> dict[str, Any]:
    """Return the kwok `Logs` object that serves `<logs_dir>/<container>.log` to `kubectl logs`
    (and `<container>.previous.log` to `--previous`) for every container of `pod`, owned by
    the pod (deleted with it)."""
    meta = pod["metadata"]
    return {
        "apiVersion": f"{KWOK_GROUP}/{KWOK_VERSION}",
        "kind": "Logs",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]}
            ],
        },
        "spec": {
            "logs": [
                {
                    "containers": [n],
                    "follow": True,
                    "logsFile": str(logs_dir / f"{n}.log"),
                    "previousLogsFile": str(previous_log(logs_dir, n)),
                }
                for n in container_names(pod)
            ]
        },
    }
