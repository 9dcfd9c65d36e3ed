"""`gryvia maintenance` against the sandbox: `start --drain` cordons a node, evicts through
the Eviction API the pod no PodDisruptionBudget protects, reports the job pod a budget
(minAvailable 1) protects as not evicted and exits 5; `list`, `capacity` and the waiting
reason of a job only that node could take name it with its reason (and `list` its start);
`end` uncordons it and removes the marks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gryvia_cli.errors import EXIT_NOT_DRAINED
from gryvia_operator.api.names import ANNOTATION_MAINTENANCE, ANNOTATION_MAINTENANCE_REASON
from tests.builders import job_yaml
from tests.integration.cli.conftest import CliCase, apply, kubectl_json
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

REASON = "XID 79 on GPU 0 (test)"


def _running_pod(case: CliCase, selector: str) -> dict[str, Any] | None:
    pods = kubectl_json(case.sandbox, "get", "pods", "-n", case.namespace, "-l", selector)
    running = [p for p in pods["items"] if (p.get("status") or {}).get("phase") == "Running"]
    return running[0] if running else None


def _loose_pod(node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "loose", "labels": {"app": "loose"}},
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "600"]}],
        },
    }


def _budget() -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "guarded-pdb"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"gryvia.io/job": "guarded"}}},
    }


def test_start_drains_what_budgets_allow_list_shows_it_end_uncordons(case: CliCase) -> None:
    path = case.tmp_path / "guarded.yaml"
    path.write_text(job_yaml("guarded", gpus=1, gpu_type="L40", script="sleep 600"))
    assert case.gryvia("submit", "-f", str(path), "-n", case.namespace).returncode == 0
    guarded = wait_for(
        lambda: _running_pod(case, "gryvia.io/job=guarded"), timeout=40, what="guarded's pod"
    )
    node = guarded["spec"]["nodeName"]
    apply(case.sandbox, case.namespace, _budget(), _loose_pod(node))
    wait_for(lambda: _running_pod(case, "app=loose"), timeout=30, what="the loose pod running")

    def budget_counted() -> dict[str, Any] | None:
        pdb = kubectl_json(case.sandbox, "get", "pdb", "guarded-pdb", "-n", case.namespace)
        status = pdb.get("status") or {}
        return status if status.get("currentHealthy") == 1 else None

    wait_for(budget_counted, timeout=30, what="the disruption controller counting the budget")
    try:
        start = [
            *("maintenance", "start", node, "--reason", REASON, "--drain"),
            *("--timeout", "4s", "--yes"),
        ]
        done = case.gryvia(*start)
        assert done.returncode == EXIT_NOT_DRAINED, done.stdout + done.stderr
        assert f"evicted {case.namespace}/loose" in done.stderr
        pod = guarded["metadata"]["name"]
        assert f"not evicted {case.namespace}/{pod}: PodDisruptionBudget " in done.stderr
        assert f"{case.namespace}/guarded-pdb" in done.stderr
        assert "could not be evicted" in done.stderr  # the error line, with its hint

        def loose_gone() -> bool:
            pods = kubectl_json(case.sandbox, "get", "pods", "-n", case.namespace)["items"]
            return all(p["metadata"]["name"] != "loose" for p in pods)

        wait_for(loose_gone, timeout=40, what="the evicted pod gone")
        assert _running_pod(case, "gryvia.io/job=guarded") is not None  # the budget held
        shown = kubectl_json(case.sandbox, "get", "node", node)
        assert shown["spec"].get("unschedulable") is True
        notes = shown["metadata"]["annotations"]
        assert notes[ANNOTATION_MAINTENANCE_REASON] == REASON

        listed = case.gryvia("maintenance", "list", "-o", "json")
        assert listed.returncode == 0, listed.stderr
        mine = [i for i in json.loads(listed.stdout)["items"] if i["node"] == node]
        assert len(mine) == 1 and mine[0]["reason"] == REASON and mine[0]["cordoned"]
        assert mine[0]["since"] == notes[ANNOTATION_MAINTENANCE]
        table = case.gryvia("maintenance", "list")
        row = next(line for line in table.stdout.splitlines() if line.startswith(node))
        assert REASON in row and notes[ANNOTATION_MAINTENANCE] in row and "in maintenance" in row

        # a job only this node could take waits, and its reason names the maintenance
        blocked = case.tmp_path / "blocked.yaml"
        only_here = f"  nodeSelector:\n    kubernetes.io/hostname: {node}\n"
        blocked.write_text(job_yaml("blocked", gpus=4, gpu_type="L40", extra=only_here))
        assert case.gryvia("submit", "-f", str(blocked), "-n", case.namespace).returncode == 0

        def waiting_reason() -> str | None:
            job = kubectl_json(case.sandbox, "get", "gryviaaijob", "blocked", "-n", case.namespace)
            return ((job.get("status") or {}).get("pending") or {}).get("message")

        reason = wait_for(waiting_reason, timeout=20, what="blocked's waiting reason")
        assert f"out of service: {node} in maintenance: {REASON}" in reason, reason

        capacity = case.gryvia("capacity", "-o", "json")
        notes_of_type = [n for t in json.loads(capacity.stdout)["types"] for n in t["notes"]]
        assert f"node {node} in maintenance: {REASON}" in notes_of_type

        ended = case.gryvia("maintenance", "end", node)
        assert ended.returncode == 0, ended.stderr
        after = kubectl_json(case.sandbox, "get", "node", node)
        assert not after["spec"].get("unschedulable")
        assert ANNOTATION_MAINTENANCE not in (after["metadata"].get("annotations") or {})
    finally:  # never leave a sandbox node cordoned for the tests after this one
        case.sandbox.kubectl_run("uncordon", node)
        marks = [f"{ANNOTATION_MAINTENANCE}-", f"{ANNOTATION_MAINTENANCE_REASON}-"]
        case.sandbox.kubectl_run("annotate", "node", node, *marks)
