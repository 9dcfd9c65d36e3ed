"""Reads `gryvia squeue` and `gryvia sacct` share: jobs of every readable namespace as
`core.slurmviews.SlurmJob`s, with their tenant, wait reason and batch exit code; and the lines
`gryvia sacct` prints."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, time
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
        out.append(slurm_job(obj, summary, user, why.get(key, ""), code))
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


def sacct_lines(
    state: Session,
    user: list[str] | None,
    allusers: bool,
    starttime: str | None,
    state_filter: list[str] | None,
    fields: str | None,
    noheader: bool,
) -> list[str]:
    """The lines `gryvia sacct` prints: the jobs of the users (tenants, comma-separated
    values; none: the current namespace's tenant, unless `allusers`) submitted since
    `starttime` (default midnight UTC), in the states given, with the `fields` (-o, default
    sacct's). Raises UsageError naming --format for an unknown field and -S/--starttime for a
    date it cannot read."""
    from gryvia_cli.core.slurmfmt import parse_sacct_format, render_sacct
    from gryvia_cli.core.slurmviews import SACCT_FORMAT, SACCT_WIDTHS, sacct_row, state_of

    chosen, unknown = parse_sacct_format(fields or SACCT_FORMAT, SACCT_WIDTHS)
    if unknown or not chosen:
        raise UsageError(
            f"--format: unknown field(s) {', '.join(unknown) or '(none given)'}",
            hint=f"known: {','.join(SACCT_WIDTHS)}",
        )
    now = state.now()
    since = _since(starttime, now)
    items = read_slurm_jobs(state, reasons=False, exit_codes=True)
    users = {u.strip() for v in user or [] for u in v.split(",") if u.strip()}
    if not users and not allusers:
        users = {current_tenant(state)}
    states = {s.strip().upper() for v in state_filter or [] for s in v.split(",") if s.strip()}
    shown = [
        item
        for item in items
        if (not users or item.user in users)
        and (item.job.created is None or item.job.created >= since)
        and (not states or bool(states & set(state_of(item.job))))
    ]
    shown.sort(key=lambda i: (i.job.created or since, i.job.namespace, i.job.name))
    return list(render_sacct(chosen, (sacct_row(i, now) for i in shown), header=not noheader))


def _since(text: str | None, now: datetime) -> datetime:
    if not text:
        return datetime.combine(now.astimezone(UTC).date(), time(), tzinfo=UTC)
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"-S/--starttime {text!r} is not a date", hint="use YYYY-MM-DD or YYYY-MM-DDTHH:MM"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)
