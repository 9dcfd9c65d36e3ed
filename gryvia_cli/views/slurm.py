"""Reads `gryvia squeue` and `gryvia sacct` share: jobs of every readable namespace as
`core.slurmviews.SlurmJob`s, with their tenant, wait reason and batch exit code."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gryvia_cli.cli.session import Session
from gryvia_cli.core.slurmviews import SlurmJob, pod_nodes
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
