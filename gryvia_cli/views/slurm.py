"""Reads `gryvia squeue` and `gryvia sacct` share: jobs of every readable namespace as
`core.slurmviews.SlurmJob`s, with their tenant, wait reason and batch exit code; and the lines
`gryvia sacct` prints."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from typing import Any

from gryvia_cli.cli.session import Session
from gryvia_cli.core.slurmviews import SlurmJob, pod_nodes
from gryvia_cli.errors import UsageError
from gryvia_cli.kube import resources as r


def read_slurm_jobs(state: Session, *, reasons: bool, exit_codes: bool) -> list[SlurmJob]:
    """Jobs across namespaces (the current one when listing all is forbidden); `reasons`
    also reads GPU supply and scheduling events for the pending reasons, `exit_codes` the
    pods for the batch step's exit code."""
    from gryvia_cli.core.jobs import job_of_pod, summarize_job
    from gryvia_cli.core.queue import build_queue, job_key, scheduling_events
    from gryvia_cli.core.slurmviews import exit_code_of, slurm_job
    from gryvia_cli.views.reads import read_jobs, read_supply, read_tenant_names, try_read
    from gryvia_operator.api.attribution import tenant_of_object

    access = state.access()
    raw, read_ns = read_jobs(access, None, state.resolve_namespace())
    summaries = [summarize_job(obj) for obj in raw]
    why: dict[tuple[str, str], str] = {}
    pods: list[dict[str, Any]] = []
    if reasons or exit_codes:
        pods = try_read(lambda: access.items(r.POD, read_ns), "pods") or []
    if reasons:
        supply = read_supply(access, summaries)
        events = try_read(
            lambda: access.items(r.EVENT, read_ns, field_selector="reason=FailedScheduling"),
            "events",
        )
        found = scheduling_events(events or [], pods)
        for entry in build_queue(summaries, supply.nodes, supply.allocated, found, state.now()):
            why[(entry.job.namespace, entry.job.name)] = entry.reason
    by_job: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for pod in pods:
        job = job_of_pod(pod)
        if job:
            ns = str((pod.get("metadata") or {}).get("namespace") or "")
            by_job.setdefault((ns, job), []).append(pod)
    tenants = read_tenant_names(access)
    out = []
    for obj, summary in zip(raw, summaries, strict=True):
        key = job_key(obj)
        if not summary.nodes_allocated and by_job.get(key):
            # Kueue places its jobs itself: the nodes are the ones its pods run on
            summary = replace(summary, nodes_allocated=pod_nodes(by_job[key]))
        code = exit_code_of(by_job.get(key, [])) if exit_codes else ""
        user = tenant_of_object(obj, tenants)
        item = slurm_job(obj, summary, user, why.get(key, ""), code)
        out.append(replace(item, has_pods=bool(by_job.get(key))))
    return out


def current_tenant(state: Session) -> str:
    """`sacct`'s default: the tenant of the current namespace (sacct's User and Account are
    the tenant; `squeue --me` asks the API server who you are instead)."""
    from gryvia_cli.views.reads import read_tenant_names
    from gryvia_operator.api.attribution import tenant_of_object

    namespace = state.resolve_namespace()
    return tenant_of_object(
        {"metadata": {"namespace": namespace}}, read_tenant_names(state.access())
    )


def sacct_report(
    state: Session,
    user: list[str] | None,
    allusers: bool,
    starttime: str | None,
    state_filter: list[str] | None,
    fields: str | None,
    noheader: bool,
    *,
    endtime: str | None = None,
    accounts: list[str] | None = None,
    parsable: bool = False,
) -> tuple[list[str], list[str]]:
    """(the lines `gryvia sacct` prints, its notes for stderr): live jobs and the
    GryviaJobRecords of deleted ones (`core.acct`: a live job wins), those of the users
    (`-u`: submitters; a tenant's name picks its jobs) and accounts (`-A`: tenants; neither
    nor `allusers`: the current namespace's tenant) in sacct's window (`-S`/`-E`, UTC) and
    states, with the `fields` (-o, default sacct's), `|`-separated with `parsable` (-P). The
    notes name the roll-ups that hold part of the window. Raises UsageError naming --format
    for an unknown field and -S/-E for a date it cannot read."""
    from gryvia_cli.core import acct
    from gryvia_cli.core.slurmfmt import parse_sacct_format, render_sacct
    from gryvia_cli.core.slurmviews import SACCT_FORMAT, SACCT_WIDTHS

    chosen, unknown = parse_sacct_format(fields or SACCT_FORMAT, SACCT_WIDTHS)
    if unknown or not chosen:
        raise UsageError(
            f"--format: unknown field(s) {', '.join(unknown) or '(none given)'}",
            hint=f"known: {','.join(SACCT_WIDTHS)}",
        )
    now = state.now()
    states = acct.parse_states(state_filter)
    begin, end = acct.window(
        _when(starttime, "-S/--starttime", now), _when(endtime, "-E/--endtime", now), states, now
    )
    items = read_slurm_jobs(state, reasons=False, exit_codes=True)
    records = read_job_records(state)
    saved = _saved_log_owners(state) if any(f.key == "Log" for f in chosen) else set()
    jobs = acct.merge(
        (acct.live_job(i, now, i.has_pods or i.uid in saved) for i in items),
        (j for raw in records if (j := acct.record_job(raw, _uid(raw) in saved))),
    )
    users = _split(user)
    wanted = _split(accounts)
    if not users and not wanted and not allusers:
        wanted = {current_tenant(state)}
    shown = [
        job
        for job in jobs
        if acct.picked(job, users, wanted) and acct.in_window(job, begin, end, states)
    ]
    shown.sort(key=lambda j: (j.eligible or begin, j.row.get("JobID", "")))
    rows = (job.row for job in shown)
    render = acct.render_parsable if parsable else render_sacct
    notes = acct.rollup_notes(
        (r for r in records if (r.get("spec") or {}).get("rollup")), begin, end, wanted or None
    )
    return list(render(chosen, rows, header=not noheader)), notes


def read_job_records(state: Session) -> list[dict[str, Any]]:
    """Every GryviaJobRecord the user may read (all namespaces, else the readable ones);
    [] where the kind is not installed or cannot be read (a warning says so)."""
    from gryvia_cli.views.readable import list_readable
    from gryvia_cli.views.reads import try_read

    def read() -> list[dict[str, Any]]:
        data, _ = list_readable(state.access(), r.JOB_RECORD, state.resolve_namespace())
        return list(data.get("items") or [])

    return try_read(read, "job records") or []


def _saved_log_owners(state: Session) -> set[str]:
    """UIDs of the jobs whose saved-logs ConfigMap exists (it goes with its job)."""
    from gryvia_cli.views.readable import list_readable
    from gryvia_cli.views.reads import try_read
    from gryvia_operator.api.names import LABEL_SAVED_LOGS

    def read() -> list[dict[str, Any]]:
        selector = f"{LABEL_SAVED_LOGS}=true"
        data, _ = list_readable(
            state.access(), r.CONFIG_MAP, state.resolve_namespace(), label_selector=selector
        )
        return list(data.get("items") or [])

    return {
        str(ref.get("uid"))
        for cm in try_read(read, "saved logs") or []
        for ref in (cm.get("metadata") or {}).get("ownerReferences") or []
        if ref.get("kind") == "GryviaAIJob"
    }


def _uid(raw: dict[str, Any]) -> str:
    return str((raw.get("spec") or {}).get("jobUID") or "")


def _split(values: list[str] | None) -> set[str]:
    return {v.strip() for value in values or [] for v in value.split(",") if v.strip()}


_UNITS = {
    "s": 1, "sec": 1, "second": 1, "seconds": 1,
    "min": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
}  # fmt: skip
"""Units of sacct's `now-COUNT[UNIT]` (seconds when none; sbatch(1) --begin's time forms)."""


def _when(text: str | None, option: str, now: datetime) -> datetime | None:
    """An -S/-E value: an ISO date or time (UTC unless it says); `now`, `now-3days`,
    `now+2hours` (sacct's relative form, count in seconds unless a unit follows); `today` or
    `midnight` (00:00 UTC today). Raises UsageError naming the option and the forms."""
    if not text:
        return None
    word = text.strip().lower()
    if word in ("today", "midnight"):
        return datetime.combine(now.astimezone(UTC).date(), time(), tzinfo=UTC)
    relative = re.fullmatch(r"now(?:([+-])(\d+)([a-z]*))?", word)
    if relative is not None and (not relative.group(3) or relative.group(3) in _UNITS):
        sign, count, unit = relative.groups()
        seconds = int(count or 0) * _UNITS.get(unit or "s", 1)
        return now + timedelta(seconds=-seconds if sign == "-" else seconds)
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"{option} {text!r} is not a date",
            hint="use YYYY-MM-DD, YYYY-MM-DDTHH:MM, now, now-COUNT[minutes|hours|days|weeks] "
            "or today",
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)
