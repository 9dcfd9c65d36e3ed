"""Rows and details of GryviaIdlePolicies: what `gryvia idle-policy list` and `get` print and
the console's `:idle` view shows (docs/idle-policies.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gryvia_cli.core import timefmt
from gryvia_cli.core.manifests import new_object
from gryvia_operator.api.idlepolicy import GryviaIdlePolicy

IDLE_POLICY_COLUMNS = ("NAME", "ACTION", "THRESHOLD", "WINDOW", "GRACE", "COVERED", "IDLE", "AGE")
IDLE_POLICY_WIDE_COLUMNS = (*IDLE_POLICY_COLUMNS, "SCOPE", "JOB-TYPES", "MESSAGE")


def build_idle_policy(
    name: str,
    namespace: str,
    *,
    threshold_percent: float,
    window_seconds: int,
    grace_seconds: int,
    action: str,
    job_types: list[str] | None,
    scope: str,
) -> dict[str, Any]:
    """A GryviaIdlePolicy body, validated by the model. Raises ValueError naming the field
    (`spec.windowSeconds`, ...) and its limit when a value is out of range."""
    from gryvia_operator.api.controlled import checked_body

    spec: dict[str, Any] = {
        "thresholdPercent": threshold_percent,
        "windowSeconds": window_seconds,
        "graceSeconds": grace_seconds,
        "action": action,
        "scope": scope,
    }
    if job_types:
        spec["jobTypes"] = job_types
    body = new_object("GryviaIdlePolicy", name, spec, namespace)
    return checked_body(GryviaIdlePolicy, body)


def idle_policy_row(policy: GryviaIdlePolicy, now: datetime) -> list[Any]:
    """The cells of IDLE_POLICY_COLUMNS: threshold as a percentage, window and grace as
    durations (`30m`), covered and idle job counts (`-` before the operator's first pass)."""
    spec, status = policy.spec, policy.status
    covered = status.covered_jobs if status is not None else None
    idle = len(status.jobs or []) if status is not None and status.jobs is not None else None
    return [
        policy.name,
        spec.action,
        f"{spec.threshold_percent:g}%",
        timefmt.human_duration(spec.window_seconds),
        timefmt.human_duration(spec.grace_seconds) if spec.action != "warn" else "-",
        timefmt.MISSING if covered is None else covered,
        timefmt.MISSING if idle is None else idle,
        timefmt.age(policy.metadata.creation_timestamp, now),
    ]


def idle_policy_wide_row(policy: GryviaIdlePolicy, now: datetime) -> list[Any]:
    """The cells of IDLE_POLICY_WIDE_COLUMNS."""
    spec, status = policy.spec, policy.status
    types = ",".join(spec.job_types) if spec.job_types is not None else "all"
    message = (status.message if status is not None else None) or timefmt.MISSING
    return [*idle_policy_row(policy, now), spec.scope, types, message]


def idle_policy_details(policy: GryviaIdlePolicy, now: datetime) -> list[tuple[str, str]]:
    """(label, value) lines for `gryvia idle-policy get` and the console's detail view: the
    rule in words, then each idle job with what was measured and done."""
    spec, status = policy.spec, policy.status
    act = {
        "warn": "warn (an Event on the job)",
        "suspend": f"warn, then suspend after {timefmt.human_duration(spec.grace_seconds)}",
        "cancel": f"warn, then cancel after {timefmt.human_duration(spec.grace_seconds)}",
    }[spec.action]
    scope = "its namespace" if spec.scope == "Namespace" else "every namespace of its tenant"
    lines = [
        ("Name", f"{policy.namespace}/{policy.name}"),
        ("Covers", f"running {', '.join(spec.job_types or ['all'])} jobs of {scope}"),
        ("Idle when", f"GPU activity below {spec.threshold_percent:g}% for "
                      f"{timefmt.human_duration(spec.window_seconds)}"),
        ("Action", act),
        ("Exempt", "jobs annotated gryvia.io/idle-exempt=true"),
    ]  # fmt: skip
    if status is None:
        return [*lines, ("Status", "not seen by the operator yet")]
    if status.phase == "Invalid":
        return [*lines, ("Status", f"Invalid: {status.message or ''}")]
    lines.append(("Status", status.message or timefmt.MISSING))
    for job in status.jobs or []:
        done = "not warned yet"
        if job.warned_at is not None:
            done = f"warned {timefmt.age(job.warned_at, now)} ago"
        if job.action is not None and job.acted_at is not None:
            done += f", {job.action} {timefmt.age(job.acted_at, now)} ago"
        lines.append((f"{job.namespace}/{job.job}", f"{job.message} ({done})"))
    return lines
