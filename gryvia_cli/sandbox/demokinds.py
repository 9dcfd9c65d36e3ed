"""The demo's object of every other kind (examples/demo/40-kinds.yaml): seeding it and its
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

MANIFEST = "40-kinds.yaml"
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


def _get(box: cluster.Sandbox, resource: str, name: str, namespace: str = "") -> dict[str, Any]:
    where = ("-n", namespace) if namespace else ()
    proc = kubectl(box, "get", resource, *where, name, "-o", "json", check=False)
    found: dict[str, Any] = json.loads(proc.stdout) if proc.returncode == 0 else {}
    return found.get("status") or {}


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

    def ready(what: str, resource: str, name: str, ns: str = "", extra: str = "") -> Any:
        cond = _ready(_get(box, resource, name, ns))
        seen = f"{cond.get('status', '-')}/{cond.get('reason', '-')}{extra}"
        return check(what, "Ready=True", seen[:90], cond.get("status") == "True")

    def phase(what: str, resource: str, name: str, want: str, show: str = "") -> Any:
        status = _get(box, resource, name, namespace)
        got = status.get("phase") or "-"
        return check(what, want, _said(status, got, show), got == want)

    reservation = _get(box, "gryviareservation", "vision-l40")
    nodes = ", ".join(reservation.get("allocatedNodes") or [])
    tuner = _get(box, "gryviaautotuner", "lr-grid", namespace)
    best = tuner.get("best") or {}
    hook = _get(box, "gryviajobhook", "research-ends", namespace)
    deliveries = f", {hook.get('deliveries', 0)} delivered"
    return [
        check(
            "reservation vision-l40",
            "active, 4 L40 GPUs held",
            _said(reservation, reservation.get("state", "-"), nodes),
            reservation.get("state") == "active" and reservation.get("allocatedGPUs") == 4,
        ),
        ready("priority deadline", "gryviapriority", "deadline"),
        ready(
            f"job hook {namespace}/research-ends",
            "gryviajobhook",
            "research-ends",
            namespace,
            deliveries,
        ),
        ready(
            "checkpoint guard tenant-nlp/nlp-guard",
            "gryviacheckpointguard",
            "nlp-guard",
            "tenant-nlp",
        ),
        phase(
            f"workflow {namespace}/tiny-pipeline", "gryviaworkflow", "tiny-pipeline", "Succeeded"
        ),
        check(
            f"tuner {namespace}/lr-grid",
            "Succeeded, best accuracy 0.86",
            _said(tuner, tuner.get("phase", "-"), _best(best)),
            tuner.get("phase") == "Succeeded" and best.get("value") == 0.86,
        ),
        phase(f"workspace {namespace}/notebook", "gryviaworkspace", "notebook", "Running"),
        phase(
            f"inference service {namespace}/echo-llm", "gryviainferenceservice", "echo-llm", "Ready"
        ),
        phase(f"model registry {namespace}/mmlu-llm", "gryviamodelregistry", "mmlu-llm", "Ready"),
    ]


def _best(best: Mapping[str, Any]) -> str:
    if not best:
        return ""
    return f"best {best.get('name', '-')} {best.get('value', '-')}"
