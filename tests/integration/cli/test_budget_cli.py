"""`gryvia budget create|list|get|delete` against the sandbox, operator running: the budget is
stored as given, the operator fills its status, `cost` and `quota` show its line."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import Gryvia, kubectl_json
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def test_budget_create_list_get_delete(
    sandbox: SandboxHandle, gryvia: Gryvia, operator: OperatorProcess
) -> None:
    operator.ensure_running()
    name = f"cli-{uuid.uuid4().hex[:6]}"
    made = gryvia(
        "budget", "create", name, "--scope", f"namespace:{name}", "--period", "weekly",
        "--week-start", "monday", "--cost-usd", "25", "--alert", "50", "--alert", "90:block",
        "--enforce", "block", "--grace-period", "1h", "--rollover", "20",
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    try:
        stored = kubectl_json(sandbox, "get", "gryviabudget", name)
        assert stored["spec"]["period"] == {"type": "weekly", "weekStart": "monday"}
        assert stored["spec"]["enforcement"]["gracePeriod"] == "1h"
        status = wait_for(
            lambda: (
                (kubectl_json(sandbox, "get", "gryviabudget", name).get("status") or {}).get(
                    "state"
                )
                and kubectl_json(sandbox, "get", "gryviabudget", name)["status"]
            ),
            timeout=90,
            what="budget status",
        )
        assert status["state"] == "active" and status["usage"]["costUSD"] == 0
        assert status["currentPeriod"]["costLimitUSD"] >= 25
        listed = gryvia("budget", "list")
        assert listed.returncode == 0, listed.stderr
        row = next(line for line in listed.stdout.splitlines() if line.startswith(name))
        assert "active" in row and "0.00 USD" in row
        shown = gryvia("budget", "get", name)
        assert shown.returncode == 0 and "Enforcement:" in shown.stdout
        assert "block, grace period 1h" in shown.stdout
        report = json.loads(gryvia("cost", "-o", "json").stdout)
        assert name in [b["name"] for b in report["budgets"]]
        bad = gryvia("budget", "create", "x", "--scope", "tenant:a", "--period", "custom")
        assert bad.returncode == 2 and "--start-date and --end-date" in bad.stderr
    finally:
        gone = gryvia("budget", "delete", name, "--yes")
    assert gone.returncode == 0, gone.stderr
    assert sandbox.kubectl_run("get", "gryviabudget", name, check=False).returncode != 0
