"""`gryvia priority`'s pure helpers: the body it applies, its rows and details."""

from __future__ import annotations

import pytest

from gryvia_cli.core.priorities import build_priority, name_problem, priority_details, priority_row
from gryvia_operator.api import GryviaPriority


def test_body_and_field_errors() -> None:
    body = build_priority("urgent", 50000, "Never", "deadline work")
    assert body["spec"] == {
        "value": 50000,
        "preemptionPolicy": "Never",
        "description": "deadline work",
    }
    assert GryviaPriority.model_validate(body).spec.value == 50000
    with pytest.raises(ValueError, match="--value 2000000000"):
        build_priority("x", 2_000_000_000, "Never", None)
    with pytest.raises(ValueError, match="--preemption Sometimes"):
        build_priority("x", 1, "Sometimes", None)
    assert "reserved" in name_problem("system-critical")
    assert "lowercase" in name_problem("Urgent")
    assert name_problem("team.urgent-1") == ""


def test_rows_and_details() -> None:
    prio = GryviaPriority.model_validate(
        {
            "metadata": {"name": "gryvia-low"},
            "spec": {"value": 1000},
            "status": {
                "priorityClassName": "gryvia-low",
                "conditions": [{"type": "Ready", "status": "True", "reason": "Applied"}],
            },
        }
    )
    assert priority_row(prio) == ["gryvia-low", 1000, "PreemptLowerPriority", "yes", "1-29"]
    assert priority_row(prio, wide=True)[5:] == ["gryvia-low", ""]
    details = dict(priority_details(prio, {"ml": 2}))
    assert details["Jobs naming it"] == "ml (2)" and details["spec.priority"] == "1-29"
    fresh = GryviaPriority.model_validate({"metadata": {"name": "u"}, "spec": {"value": 5}})
    assert priority_row(fresh)[3:] == ["pending", "-"]


def test_job_priority_and_preemption_texts() -> None:
    from gryvia_cli.core.jobs import preemption_text, priority_text, summarize_job

    job = {
        "metadata": {"name": "low", "namespace": "ml"},
        "spec": {"priority": 10, "gpus": 1, "image": "i", "type": "training"},
        "status": {
            "phase": "Preempted",
            "preemptions": 2,
            "conditions": [
                {
                    "type": "Preempted",
                    "status": "True",
                    "reason": "PreemptedByPriority",
                    "message": "preempted by ml/high (priority 10000 > 1000); requeued once ...",
                }
            ],
        },
    }
    s = summarize_job(job)
    assert priority_text(s) == "10"
    assert preemption_text(s) == "preempted 2 times, last by ml/high"
    assert not s.terminal  # requeued: waits and follows go on
    named = summarize_job({**job, "spec": {**job["spec"], "priorityClassName": "urgent"}})
    assert priority_text(named) == "urgent (GryviaPriority)"
    done = summarize_job({**job, "status": {"phase": "Preempted"}})
    assert done.terminal and preemption_text(done) == ""
