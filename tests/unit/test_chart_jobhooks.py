"""The chart's opt-in job hooks (`aiOperator.jobHooks.*`, issue 18 part 1)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gryvia_operator.settings import parse_settings
from tests.unit.test_chart import container, render, render_error


def test_job_hooks_are_off_by_default() -> None:
    args = container(render())["args"]
    assert not [a for a in args if "job-hook" in a]


def test_job_hooks_switch_workers_and_allowed_cidrs_reach_the_operator() -> None:
    objs = render(
        "--set",
        "aiOperator.jobHooks.enabled=true,aiOperator.jobHooks.workers=8",
        "--set",
        "aiOperator.jobHooks.allowedCIDRs={10.96.0.0/12,fd00::/8}",
    )
    args = container(objs)["args"]
    assert "--enable-job-hooks" in args
    assert "--job-hook-workers=8" in args
    assert [a for a in args if a.startswith("--job-hook-allowed-cidr=")] == [
        "--job-hook-allowed-cidr=10.96.0.0/12",
        "--job-hook-allowed-cidr=fd00::/8",
    ]
    settings = parse_settings([a for a in args if "job-hook" in a])
    assert settings.enable_job_hooks and settings.job_hook_workers == 8
    assert settings.job_hook_allowed_cidrs == ["10.96.0.0/12", "fd00::/8"]


def test_schema_refuses_a_bad_worker_count() -> None:
    error = render_error("--set", "aiOperator.jobHooks.workers=0")
    assert "values don't meet the specifications of the schema" in error


def test_operator_refuses_a_bad_allowed_cidr_naming_it() -> None:
    with pytest.raises(ValidationError, match=r"'10\.0\.0/33'"):
        parse_settings(["--enable-job-hooks", "--job-hook-allowed-cidr", "10.0.0/33"])
