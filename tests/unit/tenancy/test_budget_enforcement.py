"""Budget enforcement at admission: block rejects new and holds queued jobs, throttle caps
concurrency in release order, warn admits with a warning."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_operator.api import GryviaBudget
from gryvia_operator.api.budgetscope import Scope
from gryvia_operator.reconcile.admission import ALLOW, AdmissionDecision
from gryvia_operator.reconcile.budget_gate import BudgetView, combine, decide
from gryvia_operator.reconcile.quotas import JobView

T0 = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
SCOPE = Scope(frozenset({"tenant-acme"}), frozenset({"acme"}))


def _view(action: str, state: str = "active", **limits: Any) -> BudgetView:
    budget = GryviaBudget.model_validate(
        {
            "metadata": {"name": "acme-monthly"},
            "spec": {
                "scope": {"type": "tenant", "name": "acme"},
                "period": {"type": "monthly"},
                "limits": {"costUSD": 10.0, **limits},
                "enforcement": {"enabled": True, "action": action},
            },
            "status": {
                "state": state,
                "usage": {"costUSD": 10.25},
                "utilization": {"percent": 102.5},
                "currentPeriod": {"costLimitUSD": 10.0},
            },
        }
    )
    return BudgetView(budget, SCOPE)


def _job(name: str, phase: str = "Pending", gpus: int = 1, minutes: int = 0, **kw: Any) -> JobView:
    return JobView(
        "tenant-acme", name, T0 + dt.timedelta(minutes=minutes), 0, phase, gpus, "H100", **kw
    )


def test_block_rejects_new_jobs_naming_budget_spend_and_limit() -> None:
    decision = decide(_job("new"), [_view("block", "blocked")], [])
    assert decision == AdmissionDecision(
        "reject",
        "BudgetExceeded",
        "budget acme-monthly is spent: 10.25 of 10.00 USD (102.5 %)",
    )
    queued = decide(_job("old", "Queued"), [_view("block", "blocked")], [])
    assert queued.verdict == "queue" and "acme-monthly is spent" in queued.message
    assert decide(_job("new"), [_view("block", "exceeded")], []) == ALLOW  # grace period


def test_out_of_scope_cpu_only_and_unenforced_jobs_pass() -> None:
    other = JobView("elsewhere", "x", T0, 0, "Pending", 1, "H100")
    assert decide(other, [_view("block", "blocked")], []) == ALLOW
    assert decide(_job("cpu", gpus=0), [_view("block", "blocked")], []) == ALLOW


def test_throttle_caps_running_jobs_and_releases_oldest_first() -> None:
    view = _view("throttle", maxConcurrentJobs=2)
    running = _job("r1", "Running")
    first = _job("a", "Queued", minutes=1, held_by="BudgetThrottled")
    second = _job("b", minutes=2)
    jobs = [running, first, second]
    assert decide(first, [view], jobs) == ALLOW
    held = decide(second, [view], jobs)
    assert held.verdict == "queue" and held.reason == "BudgetThrottled"
    assert "allows 2 jobs at once in scope (1 job, 1 GPU running, 1 job ahead" in held.message
    alone = decide(first, [_view("throttle", maxConcurrentJobs=1)], jobs)
    assert "allows 1 job at once in scope (1 job, 1 GPU running)" in alone.message
    done = _job("r1", "Succeeded")
    assert decide(second, [view], [done, first, second]) == ALLOW


def test_throttle_counts_only_jobs_in_flight_and_skips_jobs_that_cannot_start() -> None:
    """Issue #37: an older Pending job no node can place (and an admitted one still Pending)
    took the only slot forever and was reported as running."""
    view = _view("throttle", maxConcurrentJobs=1)
    stuck = _job("v100", minutes=0)  # Pending, no pods: no node has its GPU type
    admitted_stuck = _job("v100b", minutes=1, admitted=True)
    mine = _job("mine", minutes=5)
    assert decide(mine, [view], [stuck, admitted_stuck, mine]) == ALLOW
    starting = _job("s", "Scheduling", minutes=2)
    held = decide(mine, [view], [stuck, starting, mine])
    assert held.reason == "BudgetThrottled"
    assert "(0 jobs, 0 GPUs running, 1 job starting)" in held.message


def test_throttle_on_gpus() -> None:
    view = _view("throttle", maxConcurrentGPUs=8)
    jobs = [_job("r", "Running", gpus=6), _job("a", gpus=4)]
    assert decide(jobs[1], [view], jobs).reason == "BudgetThrottled"


def test_warn_admits_with_a_warning_and_combines_with_the_quota() -> None:
    warned = decide(_job("a"), [_view("warn", "warning")], [])
    assert warned.verdict == "allow" and warned.reason == "BudgetWarning"
    assert decide(_job("a"), [_view("warn", "active")], []) == ALLOW
    quota = AdmissionDecision("allow", "QuotaReserved", "admitted within the quota of team t")
    both = combine(quota, warned)
    assert both.reason == "BudgetWarning" and both.message.endswith(quota.message)
    held = AdmissionDecision("queue", "QuotaExceeded", "waiting for quota")
    assert combine(held, warned) == held
    rejected = decide(_job("a"), [_view("block", "blocked")], [])
    assert combine(quota, rejected) == rejected
    assert combine(quota, ALLOW) == quota


def test_a_spent_project_budget_blocks_the_next_job_of_that_project_only() -> None:
    spent = _view("block", "blocked")
    project = BudgetView(spent.budget, Scope(frozenset(), frozenset(), projects=frozenset({"llm"})))
    same = _job("llm-2", project="llm", user="ada")
    other = _job("cv-1", project="cv", user="ada")
    unlabelled = _job("plain", user="ada")
    assert decide(same, [project], []).reason == "BudgetExceeded"
    assert decide(other, [project], []) == ALLOW
    assert decide(unlabelled, [project], []) == ALLOW


def test_a_spent_user_budget_blocks_that_users_jobs_in_any_namespace() -> None:
    spent = _view("block", "blocked")
    user = BudgetView(spent.budget, Scope(frozenset(), frozenset(), users=frozenset({"ada"})))
    elsewhere = JobView("team-b", "x", T0, 0, "Pending", 1, "H100", user="ada")
    assert decide(elsewhere, [user], []).reason == "BudgetExceeded"
    assert decide(_job("y", user="bob"), [user], []) == ALLOW
    assert decide(_job("z"), [user], []) == ALLOW  # no submitter: not in a user's scope
