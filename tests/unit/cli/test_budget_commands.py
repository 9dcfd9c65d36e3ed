"""`gryvia budget create|list|get|delete` and the budget lines of `gryvia cost` and
`gryvia quota`, through CliRunner with a fake access layer."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.core.budgets import parse_alert, parse_scope, parse_secret, parse_type_hours
from tests.unit.cli.test_tenancy_commands import TenancyFake, cluster, run

STATUS = {
    "currentPeriod": {"startDate": "2026-11-01", "endDate": "2026-11-30", "costLimitUSD": 10.0},
    "usage": {"costUSD": 6.2, "gpuHours": 0.5},
    "utilization": {"percent": 62.0, "costPercent": 62.0},
    "state": "warning",
    "forecast": {
        "projectedCostUSD": 18.6,
        "budgetSufficient": False,
        "estimatedExhaustionDate": "2026-11-20",
    },
    "alerts": [
        {
            "threshold": 50,
            "timestamp": "2026-11-10T10:00:00Z",
            "key": "u/2026-11-01/50",
            "delivered": True,
        }
    ],
}


def _budget(name: str = "vision-monthly", **spec: Any) -> dict[str, Any]:
    body = {
        "scope": {"type": "tenant", "name": "vision"},
        "period": {"type": "monthly"},
        "limits": {"costUSD": 10},
        "alerts": [{"threshold": 50}, {"threshold": 90}],
    }
    body.update(spec)
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaBudget",
        "metadata": {"name": name},
        "spec": body,
        "status": STATUS,
    }


def test_create_from_options_builds_the_spec() -> None:
    fake = TenancyFake()
    args = [
        "budget", "create", "b1", "--scope", "tenant:acme", "--cost-usd", "10",
        "--alert", "50", "--alert", "90:notify,block", "--enforce", "block",
        "--grace-period", "2h", "--period", "weekly", "--week-start", "monday",
        "--gpu-type-hours", "H100=5", "--rollover", "50",
        "--receiver", "http://127.0.0.1:9/x", "--secret", "ops/alerts:key",
    ]  # fmt: skip
    result = run(args, fake)
    assert result.exit_code == 0, result.output
    (_, _, body) = fake.applied[0]
    assert body["spec"] == {
        "scope": {"type": "tenant", "name": "acme"},
        "period": {"type": "weekly", "weekStart": "monday"},
        "limits": {"costUSD": 10.0, "gpuTypeHours": {"H100": 5.0}},
        "alerts": [{"threshold": 50.0}, {"threshold": 90.0, "actions": ["notify", "block"]}],
        "enforcement": {"enabled": True, "action": "block", "gracePeriod": "2h"},
        "rollover": {"enabled": True, "maxRolloverPercent": 50.0},
        "receiver": {
            "url": "http://127.0.0.1:9/x",
            "format": "gryvia",
            "secretRef": {"namespace": "ops", "name": "alerts", "key": "key"},
        },
    }


def test_create_refuses_bad_input_naming_the_field(tmp_path: Path) -> None:
    bad = run(["budget", "create", "b", "--scope", "tenant:a", "--enforce", "stop"], TenancyFake())
    assert bad.exit_code == 2 and "spec.enforcement.action" in bad.output
    assert "--scope is required" in run(["budget", "create", "b"], TenancyFake()).output
    custom = run(
        ["budget", "create", "b", "--scope", "tenant:a", "--period", "custom"], TenancyFake()
    )
    assert custom.exit_code == 2 and "period" in custom.output
    file = tmp_path / "b.yaml"
    file.write_text(
        "kind: GryviaBudget\nspec:\n  scope: {type: team, name: ml}\n  period: {type: daily}\n"
    )
    fake = TenancyFake()
    ok = run(["budget", "create", "b", "-f", str(file)], fake)
    assert ok.exit_code == 0, ok.output
    assert fake.applied[0][2]["spec"]["scope"] == {"type": "team", "name": "ml"}


def test_create_from_a_file_with_unquoted_dates(tmp_path: Path) -> None:
    file = tmp_path / "q4.yaml"
    file.write_text(
        "kind: GryviaBudget\nmetadata: {name: q4}\nspec:\n  scope: {type: tenant, name: a}\n"
        "  period: {type: custom, startDate: 2026-10-01, endDate: 2026-12-31}\n"
        "  limits: {costUSD: 3}\n"
    )
    fake = TenancyFake()
    ok = run(["budget", "create", "q4", "-f", str(file)], fake)
    assert ok.exit_code == 0, ok.output
    period = fake.applied[0][2]["spec"]["period"]
    assert period == {"type": "custom", "startDate": "2026-10-01", "endDate": "2026-12-31"}
    json.dumps(fake.applied[0][2])


def test_create_from_a_file_refuses_what_it_would_ignore(tmp_path: Path) -> None:
    file = tmp_path / "q4.yaml"
    file.write_text(
        "kind: GryviaBudget\nmetadata: {name: q4}\nspec:\n  scope: {type: tenant, name: a}\n"
        "  period: {type: monthly}\n"
    )
    mixed = run(["budget", "create", "q4", "-f", str(file), "--cost-usd", "5"], TenancyFake())
    assert mixed.exit_code == 2 and "--cost-usd cannot be combined with -f" in mixed.output
    renamed = run(["budget", "create", "other", "-f", str(file)], TenancyFake())
    assert renamed.exit_code == 2 and "metadata.name is 'q4'" in renamed.output
    quota = tmp_path / "quota.yaml"
    quota.write_text("kind: GryviaQuota\nspec: {team: a}\n")
    wrong = run(["budget", "create", "a", "-f", str(quota)], TenancyFake())
    assert wrong.exit_code == 2 and "not GryviaBudget" in wrong.output


def test_create_checks_the_period_dates_and_grace_period() -> None:
    base = ["budget", "create", "b", "--scope", "tenant:a", "--cost-usd", "5"]
    stray = run([*base, "--start-date", "2026-12-01"], TenancyFake())
    assert stray.exit_code == 2 and "only to --period custom" in stray.output
    dates = ["--period", "custom", "--start-date", "2026-12-10", "--end-date", "2026-12-01"]
    backwards = run([*base, *dates], TenancyFake())
    assert backwards.exit_code == 2 and "after --end-date 2026-12-01; swap them" in backwards.output
    warn = run([*base, "--enforce", "warn", "--grace-period", "2h"], TenancyFake())
    assert warn.exit_code == 2 and "--grace-period needs --enforce block" in warn.output
    grace = run([*base, "--enforce", "block", "--grace-period", "forever"], TenancyFake())
    assert grace.exit_code == 2
    assert "spec.enforcement.gracePeriod: 'forever' is not a duration" in grace.output


def test_limits_count_jobs_and_gpus_in_the_singular() -> None:
    from gryvia_cli.core.budgets import limit_text
    from gryvia_operator.api import GryviaBudget

    one = _budget(limits={"maxConcurrentJobs": 1, "maxConcurrentGPUs": 1})
    assert limit_text(GryviaBudget.model_validate(one)).endswith(", 1 job, 1 GPU")


def test_get_says_when_a_custom_period_has_not_begun_or_is_over() -> None:
    from gryvia_cli.core.budgets import budget_details
    from gryvia_operator.api import GryviaBudget

    dates = {"type": "custom", "startDate": "2027-01-01", "endDate": "2027-01-31"}
    body = _budget(period=dates)
    body["status"] = {
        "currentPeriod": {"startDate": "2027-01-01", "endDate": "2027-01-31", "daysRemaining": 62}
    }
    budget = GryviaBudget.model_validate(body)
    lines = dict(budget_details(budget, dt.date(2026, 12, 1)))
    assert lines["Current period"] == "2027-01-01 to 2027-01-31, not started (starts in 31 day(s))"
    assert dict(budget_details(budget, dt.date(2027, 2, 1)))["Current period"].endswith(", ended")
    assert dict(budget_details(budget, dt.date(2027, 1, 20)))["Current period"].endswith(
        "62 day(s) left"
    )


def test_submit_warning_says_a_spent_budget_holds_the_job_even_without_the_gate() -> None:
    from decimal import Decimal

    from gryvia_cli.core.estimate import gate_warnings
    from gryvia_operator.api.budgetgate import HardBudget, check_budgets, estimate_job
    from gryvia_operator.api.pricing import Rate

    rate = Rate("l40", "L40", 2.5)
    job = estimate_job(1, 3600, rate)
    spent = HardBudget("GryviaBudget", "budget b1", Decimal(10), Decimal(12))
    (text,) = gate_warnings(check_budgets(job, [spent]))
    assert "without the gate, budget b1 is already at its limit" in text
    room = HardBudget("GryviaBudget", "budget b1", Decimal(10), Decimal(9))
    (text,) = gate_warnings(check_budgets(job, [room]))
    assert "without the gate it is admitted while the budget is not spent yet" in text


def test_parsers() -> None:
    assert parse_scope("team:ml") == {"type": "team", "name": "ml"}
    assert parse_alert("75.5") == {"threshold": 75.5}
    assert parse_type_hours("A100-80G=12") == ("A100-80G", 12.0)
    assert parse_secret("ns/s") == {"namespace": "ns", "name": "s"}
    for parse, text in (
        (parse_scope, "org:x"),
        (parse_alert, "90:page"),
        (parse_type_hours, "H100"),
        (parse_secret, "justname"),
    ):
        with pytest.raises(ValueError, match="use"):
            parse(text)  # type: ignore[operator]


def test_list_and_get_show_state_and_forecast() -> None:
    fake = TenancyFake(_budget())
    listed = run(["budget", "list"], fake)
    assert listed.exit_code == 0, listed.output
    header, row = listed.stdout.splitlines()
    assert header.split()[:3] == ["NAME", "SCOPE", "PERIOD"]
    assert "6.20 USD" in row and "62.0%" in row and "warning" in row
    assert "18.60 USD at period end, limit reached 2026-11-20" in row
    wide = run(["budget", "list", "-o", "wide"], fake).stdout.splitlines()
    assert wide[0].split()[-4:] == ["GPU-HOURS", "ENFORCEMENT", "ALERTS", "RECEIVER"]
    assert wide[1].split()[-6:] == ["2026-11-20", "0.50", "off", "50%,", "90%", "-"]
    shown = run(["budget", "get", "vision-monthly"], fake)
    assert shown.exit_code == 0, shown.output
    assert "State:" in shown.stdout and "50 % at 2026-11-10T10:00:00Z" in shown.stdout
    assert run(["budget", "get", "nope"], fake).exit_code == 1
    gone = run(["budget", "delete", "vision-monthly", "--yes"], fake)
    assert gone.exit_code == 0, gone.output
    assert "No budgets found." in run(["budget", "list"], fake).output


def test_cost_and_quota_show_the_budget_line() -> None:
    fake = cluster().add(_budget())
    text = run(["cost", "vision"], fake)
    assert text.exit_code == 0, text.output
    assert (
        "budget vision-monthly (tenant vision, monthly): 6.20 USD of 10.00 USD (62.0 %), "
        "warning; alerts at 50 %, 90 %; forecast 18.60 USD at period end, limit reached "
        "2026-11-20"
    ) in text.stderr
    data = json.loads(run(["cost", "-o", "json"], fake).stdout)
    assert [b["name"] for b in data["budgets"]] == ["vision-monthly"]
    assert data["budgets"][0]["state"] == "warning"
    bare = run(["cost", "vision"], cluster().add(_budget(alerts=[])))
    assert "(62.0 %), warning; no alerts; forecast" in bare.stderr
    quota = run(["quota", "vision"], fake)
    assert quota.exit_code == 0, quota.output
    assert "budget vision-monthly (tenant vision, monthly)" in quota.stdout
