"""Issue 44 acceptance, chargeback: a closed month with a reservation's idle GPUs and a 10 %
platform share. The operator writes the month's report once; every tenant's total is its
metered cost plus its shares, the shares add up to the whole to the cent, and
`gryvia chargeback show|export` read it back, the export's rows summing to the lines.

The month is the one before now (UTC); the policy closes it a minute after it ended. Other
tests' usage records of that month (if any) may add lines: the checks on amounts are the
invariants of the whole report and the lines of this test's own tenants."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import uuid
from decimal import Decimal
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import kubectl_json
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
API = "gryvia.io/v1alpha1"


def _last_month() -> tuple[str, dt.datetime]:
    first = dt.datetime.now(dt.UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    start = (first - dt.timedelta(days=1)).replace(day=1)
    return start.strftime("%Y-%m"), start


def _stamp(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _record(ns: str, name: str, tenant: str, start: dt.datetime, hours: float, gpus: int,
            rate: float, **extra: Any) -> dict[str, Any]:  # fmt: skip
    return {
        "apiVersion": API,
        "kind": "GryviaUsageRecord",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "tenant": tenant,
            "job": name,
            "jobUID": name,
            "gpus": gpus,
            "rate": rate,
            "currency": "USD",
            "start": _stamp(start),
            "end": _stamp(start + dt.timedelta(hours=hours)),
            "gpuHours": hours * gpus,
            "cost": round(hours * gpus * rate, 6),
            "final": True,
            **extra,
        },
    }


def test_a_closed_month_is_charged_back_once_with_idle_and_platform_shares(
    sandbox: SandboxHandle, live_operator: OperatorProcess, namespace: str, tmp_path: Any
) -> None:
    month, start = _last_month()
    tag = uuid.uuid4().hex[:6]
    vision, nlp, window = f"cbv-{tag}", f"cbn-{tag}", f"cbr-{tag}"
    held_from = start + dt.timedelta(days=9)
    sandbox.apply(
        {
            "apiVersion": API,
            "kind": "GryviaReservation",
            "metadata": {"name": window},
            "spec": {
                "owner": {"type": "tenant", "name": nlp},
                "resources": {"gpuType": "H100", "gpuCount": 8},
                "schedule": {
                    "type": "scheduled",
                    "startTime": _stamp(held_from),
                    "endTime": _stamp(held_from + dt.timedelta(hours=10)),
                },
            },
        }
    )
    wait_for(
        lambda: (
            (kubectl_json(sandbox, "get", "gryviareservation", window).get("status") or {}).get(
                "state"
            )
            == "expired"
        ),
        timeout=60,
        what="the past reservation marked expired",
    )
    # it held 8 GPUs for 10 h in that month (what its controller records when it releases)
    times = {"actualStartTime": _stamp(held_from),
             "actualEndTime": _stamp(held_from + dt.timedelta(hours=10))}  # fmt: skip
    sandbox.kubectl_run(
        "patch", "gryviareservation", window, "--subresource=status", "--type=merge",
        "-p", json.dumps({"status": times}),
    )  # fmt: skip
    records = [
        _record(namespace, f"a-{tag}", vision, start + dt.timedelta(days=1), 3, 8, 2.5),
        _record(namespace, f"b-{tag}", vision, start + dt.timedelta(days=4), 1.1, 1, 3.1),
        _record(namespace, f"c-{tag}", nlp, held_from, 5, 4, 2.5, reservation=window),
    ]
    sandbox.apply(*records)
    policy = f"cb-{tag}"
    sandbox.apply(
        {
            "apiVersion": API,
            "kind": "GryviaChargeback",
            "metadata": {"name": policy},
            "spec": {"platformSharePercent": "10", "startMonth": month, "closeAfterMinutes": 1},
        }
    )

    def report() -> dict[str, Any] | None:
        months = kubectl_json(sandbox, "get", "gryviachargeback", policy).get("status") or {}
        found = [m for m in months.get("months") or [] if m["month"] == month]
        return found[0] if found else None

    written = wait_for(report, timeout=60, what=f"the {month} chargeback report")
    lines = {(x["costCenter"], x["tenant"]): x for x in written["lines"]}
    money = Decimal
    assert lines[(vision, vision)]["metered"] == "63.41"  # 60.00 + 1.1 h x 3.10
    assert lines[(nlp, nlp)]["metered"] == "50.00"
    # 8 GPUs x 10 h held, 20 GPU-hours used by the job that opted in: at least 60 idle
    assert money(written["reservationIdleGpuHours"]) >= 60
    for line in written["lines"]:
        parts = money(line["metered"]) + money(line["reservationIdle"]) + money(line["platform"])
        assert money(line["total"]) == parts, line
    assert sum(money(x["reservationIdle"]) for x in written["lines"]) == money(
        written["reservationIdle"]
    )
    assert sum(money(x["platform"]) for x in written["lines"]) == money(written["platform"])
    assert money(written["shared"]) == money(written["reservationIdle"]) + money(
        written["platform"]
    )
    assert sum(money(x["total"]) for x in written["lines"]) == money(written["total"])
    metered = money(written["metered"])
    assert abs(money(written["platform"]) - metered / 10) <= money("0.005")

    env = {"KUBECONFIG": str(sandbox.kubeconfig), "GRYVIA_CONFIG_HOME": str(tmp_path)}
    shown = run_gryvia("chargeback", "show", month, "--name", policy, "-o", "json", env=env)
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["written"] is True and doc["recordsMatch"] is True
    assert doc["total"] == written["total"] and doc["writtenAt"] == written["writtenAt"]
    exported = run_gryvia("chargeback", "export", month, "--name", policy, env=env)
    assert exported.returncode == 0, exported.stderr
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    mine = [r for r in rows if r["tenant"] in (vision, nlp)]
    assert sorted(r["usageRecord"] for r in mine) == sorted(r["metadata"]["name"] for r in records)
    assert sum(money(r["cost"]) for r in mine if r["tenant"] == vision) == money("63.410000")

    # the report stays as written: a record added later shows as a digest mismatch
    sandbox.apply(
        _record(namespace, f"late-{tag}", vision, start + dt.timedelta(days=2), 1, 1, 9.0)
    )
    again = run_gryvia("chargeback", "show", month, "--name", policy, "-o", "json", env=env)
    assert json.loads(again.stdout)["total"] == written["total"]
    assert json.loads(again.stdout)["recordsMatch"] is False  # the late record is not in it
