"""An idle operator's reads: a fresh sandbox, the operator with every opt-in feature (the
test session's flags plus GPU sharing), one object of each kind a person creates, then a
window of quiet in which the API server counts what it is asked. Prints the LIST calls per
resource in the window, read from the API server's own `apiserver_request_total` (no
controller's periodic full LIST: the target is 0 for every Gryvia kind and child, issue 35),
and the WATCH and GET calls beside them.

`python -m tests.bench_idle [SECONDS]` (default 600, the issue's ten minutes); the window
opens once the operator has written the first statuses.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from typing import Any

from tests.support.benchbox import BenchBox, kubectl_run, operator_sandbox
from tests.support.operator import FEATURES
from tests.support.wait import wait_for

NS = "idle"
NODES = "1xH100:8,1xL40:4,1xcpu"
REPORTED = ("GryviaWorkspace", "GryviaInferenceService", "GryviaBudget", "GryviaGPUSharingPolicy")
"""Kinds whose status the operator writes on its first pass: the window opens once each of
them has one (start-up and the first passes are over)."""
SAMPLE = re.compile(r"^apiserver_request_total\{(?P<labels>[^}]*)\} (?P<value>[0-9.e+]+)$")


def _obj(kind: str, name: str, spec: dict[str, Any], namespaced: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespaced:
        meta["namespace"] = NS
    return {"apiVersion": "gryvia.io/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


def objects() -> list[dict[str, Any]]:
    """One object of each kind a person creates (the operator writes the others)."""
    step = {"type": "training", "gpus": 0, "image": "none", "command": ["sleep", "3600"]}
    end = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 86400))
    job = _obj("GryviaAIJob", "train", step)
    job["metadata"]["labels"] = {"checkpoint": "on"}
    return [
        job,
        _obj("GryviaTenant", "acme", {}, namespaced=False),
        _obj("GryviaBudget", "monthly", {"scope": {"type": "tenant", "name": "acme"},
                                         "period": {"type": "monthly"}}, namespaced=False),
        _obj("GryviaPriority", "urgent", {"value": 100}, namespaced=False),
        _obj("GryviaReservation", "window", {
            "owner": {"type": "namespace", "name": NS},
            "resources": {"gpuType": "L40", "gpuCount": 4},
            "schedule": {"type": "immediate", "endTime": end},
        }),
        _obj("GryviaCheckpointGuard", "guard", {
            "jobSelector": {"matchLabels": {"checkpoint": "on"}},
            "checkpointPolicy": {"intervalSeconds": 60},
        }),
        _obj("GryviaGPUSharingPolicy", "shared", {
            "strategy": "time-slicing",
            "nodeSelector": {"matchLabels": {"pool": "shared"}},
            "timeSlicing": {"replicas": 4},
        }, namespaced=False),
        _obj("GryviaJobHook", "hook", {"events": ["Succeeded"],
                                       "webhook": {"url": "http://127.0.0.1:9/hook"}}),
        _obj("GryviaWorkflow", "flow", {"steps": [{"name": "a", "template": step}],
                                        "schedule": {"cron": "0 0 1 1 *"}}),
        _obj("GryviaAutoTuner", "tune", {
            "jobTemplate": step,
            "parameterSpace": [{"name": "lr", "type": "choice", "values": ["0.1"]}],
            "objective": {"name": "loss", "goal": "minimize"},
            "maxTrials": 1,
        }),
        _obj("GryviaWorkspace", "dev", {"image": "python:3.11"}),
        _obj("GryviaInferenceService", "llm", {"image": "python:3.11"}),
        _obj("GryviaModelRegistry", "models", {"modelName": "llm"}),
    ]  # fmt: skip


def _reported(box: BenchBox) -> bool:
    """True when every object of the REPORTED kinds has a status."""
    for kind in REPORTED:
        found = json.loads(kubectl_run(box.kubectl, "get", kind, "-A", "-o", "json"))["items"]
        if not found or not all(o.get("status") for o in found):
            return False
    return True


def request_counts(box: BenchBox) -> Counter[tuple[str, str]]:
    """apiserver_request_total summed by (verb, group/resource)."""
    out: Counter[tuple[str, str]] = Counter()
    for line in kubectl_run(box.kubectl, "get", "--raw", "/metrics").splitlines():
        found = SAMPLE.match(line)
        if not found:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', found["labels"]))
        resource = "/".join(p for p in (labels.get("group"), labels.get("resource")) if p)
        out[(labels.get("verb", ""), resource)] += int(float(found["value"]))
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the window and print the table; 1 when a Gryvia kind was LISTed in it."""
    args = sys.argv[1:] if argv is None else argv
    seconds = float(args[0]) if args else 600.0
    flags = (*FEATURES, "--enable-gpu-sharing")
    with operator_sandbox("idle", NODES, [NS], flags=flags) as box:
        for obj in objects():
            kubectl_run(box.kubectl, "create", "-f", "-", body=obj)
        wait_for(lambda: _reported(box), timeout=180, what="a status on " + ", ".join(REPORTED))
        before = request_counts(box)
        time.sleep(seconds)  # the measurement window itself: quiet, by definition
        after = request_counts(box)
    delta = {k: after[k] - before.get(k, 0) for k in after if after[k] > before.get(k, 0)}
    print(f"requests to the API server in {seconds:.0f} s of quiet (all clients):")
    print(f"  {'verb':<8} {'resource':<48} calls")
    for (verb, resource), calls in sorted(delta.items()):
        if verb in ("LIST", "WATCH", "GET"):
            print(f"  {verb:<8} {resource:<48} {calls}")
    gryvia = sum(c for (v, res), c in delta.items() if v == "LIST" and "gryvia.io" in res)
    print(f"LIST calls of Gryvia kinds in the window: {gryvia} (target 0)")
    return 1 if gryvia else 0


if __name__ == "__main__":
    sys.exit(main())
