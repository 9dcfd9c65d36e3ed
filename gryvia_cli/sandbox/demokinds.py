"""The demo's object of every other kind (examples/demo/15-kinds.yaml): seeding it and its
checks for `demo check`.

`seed` starts the local job-hook receiver (`hookreceiver`) and writes its URL into the hook,
makes the hostPath volume of class `demo-home` that the workspace's home binds to (the
sandbox has no provisioner), then applies the manifests. `checks` reads each object's status
as the operator writes it. Reads go through kubectl, as the rest of the demo's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gryvia_cli.sandbox import cluster, hookreceiver
from gryvia_cli.sandbox.bootstrap import run_kubectl as kubectl

MANIFEST = "15-kinds.yaml"
HOME_CLASS = "demo-home"
"""The StorageClass name of the workspace's home volume (a static hostPath PV)."""
Check = Callable[[str, str, str, bool], Any]


def home_volume(box: cluster.Sandbox) -> dict[str, Any]:
    """The PersistentVolume the demo workspace's home binds to: a folder of the sandbox."""
    folder = box.workdir / "volumes" / HOME_CLASS
    folder.mkdir(parents=True, exist_ok=True)
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": HOME_CLASS},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": HOME_CLASS,
            "persistentVolumeReclaimPolicy": "Retain",
            "hostPath": {"path": str(folder)},
        },
    }


def prepared(box: cluster.Sandbox, docs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """`docs` (the manifests of MANIFEST) after the home volume, the hook's URL pointing at
    the receiver, which this starts (see `hookreceiver.start`)."""
    receiver = hookreceiver.start(box)
    out = [home_volume(box)]
    for doc in docs:
        if doc["kind"] == "GryviaJobHook":
            doc["spec"]["webhook"]["url"] = receiver
        out.append(doc)
    return out


KINDS = (
    "GryviaReservation",
    "GryviaPriority",
    "GryviaGPUSharingPolicy",
    "GryviaJobHook",
    "GryviaCheckpointGuard",
    "GryviaWorkflow",
    "GryviaAutoTuner",
    "GryviaWorkspace",
    "GryviaInferenceService",
    "GryviaModelRegistry",
)
"""The kinds `checks` reads, all in one kubectl call per pass."""


def statuses(box: cluster.Sandbox) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(kind, namespace or "", name) -> status of every object of KINDS (one LIST each, in
    one kubectl call); empty when kubectl fails."""
    kinds = ",".join(k.lower() for k in KINDS)
    proc = kubectl(box, "get", kinds, "-A", "-o", "json", check=False)
    items = json.loads(proc.stdout or "{}").get("items", []) if proc.returncode == 0 else []
    return {
        (
            str(i.get("kind")),
            str(i["metadata"].get("namespace") or ""),
            str(i["metadata"]["name"]),
        ): i.get("status") or {}
        for i in items
    }


def _ready(status: Mapping[str, Any]) -> dict[str, Any]:
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Ready":
            return dict(cond)
    return {}


def _said(status: Mapping[str, Any], *parts: str) -> str:
    shown = ", ".join(p for p in parts if p) or "-"
    message = status.get("message")
    return (f"{shown}: {message}" if message else shown)[:90]


def checks(box: cluster.Sandbox, check: Check, namespace: str) -> list[Any]:
    """One check per object of MANIFEST (in `namespace` when namespaced) and the checkpoint
    guard of 30-policies.yaml, made with `check(what, expected, observed, ok)`: each holds on
    the phase or Ready condition the operator writes."""

    found = statuses(box)

    def _get(kind: str, name: str, ns: str = "") -> dict[str, Any]:
        return found.get((kind, ns, name), {})

    def ready(what: str, kind: str, name: str, ns: str = "", extra: str = "") -> Any:
        cond = _ready(_get(kind, name, ns))
        seen = f"{cond.get('status', '-')}/{cond.get('reason', '-')}{extra}"
        return check(what, "Ready=True", seen[:90], cond.get("status") == "True")

    def phase(what: str, kind: str, name: str, want: str, show: str = "") -> Any:
        status = _get(kind, name, namespace)
        got = status.get("phase") or "-"
        return check(what, want, _said(status, got, show), got == want)

    reservation = _get("GryviaReservation", "vision-l40")
    nodes = ", ".join(reservation.get("allocatedNodes") or [])
    tuner = _get("GryviaAutoTuner", "lr-grid", namespace)
    best = tuner.get("best") or {}
    hook = _get("GryviaJobHook", "research-ends", namespace)
    deliveries = f", {hook.get('deliveries', 0)} delivered"
    return [
        check(
            "reservation vision-l40",
            "active, 4 L40 GPUs held",
            _said(reservation, reservation.get("state", "-"), nodes),
            reservation.get("state") == "active" and reservation.get("allocatedGPUs") == 4,
        ),
        ready("priority deadline", "GryviaPriority", "deadline"),
        ready("GPU sharing policy time-slicing-x4", "GryviaGPUSharingPolicy", "time-slicing-x4"),
        ready(
            f"job hook {namespace}/research-ends",
            "GryviaJobHook",
            "research-ends",
            namespace,
            deliveries,
        ),
        ready(
            "checkpoint guard tenant-nlp/nlp-guard",
            "GryviaCheckpointGuard",
            "nlp-guard",
            "tenant-nlp",
        ),
        phase(
            f"workflow {namespace}/tiny-pipeline", "GryviaWorkflow", "tiny-pipeline", "Succeeded"
        ),
        check(
            f"tuner {namespace}/lr-grid",
            "Succeeded, best accuracy 0.86",
            _said(tuner, tuner.get("phase", "-"), _best(best)),
            tuner.get("phase") == "Succeeded" and best.get("value") == 0.86,
        ),
        phase(f"workspace {namespace}/notebook", "GryviaWorkspace", "notebook", "Running"),
        phase(
            f"inference service {namespace}/echo-llm", "GryviaInferenceService", "echo-llm", "Ready"
        ),
        phase(f"model registry {namespace}/mmlu-llm", "GryviaModelRegistry", "mmlu-llm", "Ready"),
    ]


def _best(best: Mapping[str, Any]) -> str:
    if not best:
        return ""
    return f"best {best.get('name', '-')} {best.get('value', '-')}"
