"""`gryvia maintenance start|end|list`: take a faulty node out of service (cordon with a
reason and a start time, optionally drain it through the Eviction API so
PodDisruptionBudgets hold) and put it back (docs/gpu-metrics.md, "Node maintenance")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from gryvia_cli.cli.options import OutputOpt, YesOpt, confirm, render_entries
from gryvia_cli.cli.session import Session, session
from gryvia_cli.errors import GryviaError, UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    failure,
    info,
    note,
    render_data,
    render_table,
    success,
    warn,
)

if TYPE_CHECKING:
    from gryvia_cli.core.maintenance import DrainReport

app = typer.Typer(
    help="Node maintenance: cordon and drain a faulty node, list and end maintenance.",
    no_args_is_help=True,
)
NodeArg = Annotated[str, typer.Argument(help="Node name (as `kubectl get nodes` prints it).")]


@app.command("start")
def start(
    ctx: typer.Context,
    node: NodeArg,
    reason: Annotated[
        str,
        typer.Option(
            "--reason",
            metavar="TEXT",
            help="Why (shown by capacity, queue and waiting jobs); required unless the node "
            "is in maintenance already.",
        ),
    ] = "",
    drain: Annotated[
        bool,
        typer.Option(
            "--drain/--no-drain",
            help="Also evict its pods through the Eviction API (PodDisruptionBudgets hold).",
        ),
    ] = False,
    timeout: Annotated[
        str,
        typer.Option(
            "--timeout",
            metavar="DURATION",
            help="With --drain: retry pods a budget refuses this long (90s, 5m).",
        ),
    ] = "2m",
    yes: YesOpt = False,
    output: OutputOpt = None,
) -> None:
    """Put a node in maintenance: cordon it with a reason and a start time; --drain evicts.

    Cordons the node (no new pods land there) and annotates it with gryvia.io/maintenance
    (the start, RFC 3339 UTC; kept when it is in maintenance already) and
    gryvia.io/maintenance-reason. With --drain it then evicts the node's pods through the
    Eviction API, so PodDisruptionBudgets hold: DaemonSet pods, mirror pods and finished or
    terminating pods are skipped; a pod a budget refuses (HTTP 429) is retried until
    --timeout, then reported with the budget and left running. Asks before evicting unless
    --yes (or stdin is not a terminal).

    Exit codes: 0 in maintenance (and drained); 5 in maintenance but pods could not be
    evicted (the node stays cordoned: run it again later, or end the budget's hold); 1 on
    errors (no such node, forbidden).

    Examples:
      gryvia maintenance start gpu-3 --reason "XID 79 on GPU 2"
      gryvia maintenance start gpu-3 --reason "replace PSU" --drain --timeout 5m --yes
      gryvia maintenance start gpu-3 --drain -o json

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: MaintenanceReport, node, since, reason,
    cordoned, drained, evicted: [{namespace, name}], notEvicted: [{namespace, name, budget,
    reason}], skipped: [{namespace, name, reason}], terminating: [{namespace, name}]}.
    """
    from gryvia_cli.core.maintenance import DrainReport, start_patch
    from gryvia_operator.api import parse_duration
    from gryvia_operator.api.maintenance import maintenance_of

    try:
        seconds = parse_duration(timeout, field="--timeout")
    except ValueError as exc:
        raise UsageError(str(exc), hint="e.g. --timeout 90s or --timeout 5m") from None
    state = session(ctx)
    fmt = state.fmt(output)
    access = state.access()
    current = access.get(r.NODE, node)
    try:
        patch = start_patch(current, reason, state.now())
    except ValueError as exc:
        raise UsageError(str(exc), hint=f"gryvia maintenance start {node} --reason TEXT") from None
    stored = access.merge_patch(r.NODE, node, None, patch)
    marks = maintenance_of(stored)
    report = DrainReport(node, marks.since if marks else "", marks.reason if marks else "")
    people = fmt not in MACHINE_FORMATS
    if people:
        success(f"node {node} cordoned: in maintenance since {report.since} ({report.reason})")
    if drain:
        _drain(state, report, seconds, yes, people)
    if not people:
        render_data(report.as_dict(), fmt)
    if not report.ok:
        from gryvia_cli.errors import NotDrainedError

        left = ", ".join(str(p) for p, _ in report.not_evicted)
        raise NotDrainedError(
            f"node {node} is in maintenance, but {len(report.not_evicted)} pod(s) could not "
            f"be evicted within {timeout}: {left}",
            hint=f"the node stays cordoned; when the budget allows, run `gryvia maintenance "
            f"start {node} --drain` again",
        )


def _drain(state: Session, report: DrainReport, seconds: int, yes: bool, people: bool) -> None:
    """Evict the node's pods into `report`, after asking; print each outcome for people."""
    from gryvia_cli.core.maintenance import Outcome, PodRef, drain, drain_plan
    from gryvia_cli.kube.eviction import evict_pod

    access = state.access()
    selector = f"spec.nodeName={report.node}"
    plan = drain_plan(access.items(r.POD, None, field_selector=selector), report.node)
    if people:
        for pod, why in plan.skipped:
            note(f"skipped {pod} ({why})")
    if not plan.evict:
        report.skipped, report.drained = list(plan.skipped), True
        if people:
            info(f"no pods to evict on {report.node}")
        return
    names = ", ".join(str(p) for p in plan.evict)
    if not confirm(f"Evict {len(plan.evict)} pod(s) from {report.node} ({names})?", yes):
        raise GryviaError(
            f"not drained: node {report.node} is cordoned, its pods keep running",
            hint=f"gryvia maintenance start {report.node} --drain --yes",
        )

    def shown(pod: PodRef, outcome: Outcome) -> None:
        if not people:
            return
        if outcome.kind == "evicted":
            success(f"evicted {pod}")
        elif outcome.kind == "gone":
            info(f"{pod} is gone already")
        else:
            budget = f"PodDisruptionBudget {outcome.budget}: " if outcome.budget else ""
            failure(f"not evicted {pod}: {budget}{outcome.text}")

    drain(plan, lambda pod: evict_pod(access, pod), report, timeout=seconds, on_outcome=shown)
    if report.evicted:
        _wait_gone(state, report, seconds)
        for pod in report.terminating if people else ():
            warn(f"{pod} is still terminating (evicted; its grace period has not ended)")


def _wait_gone(state: Session, report: DrainReport, seconds: int) -> None:
    """Wait (at most `seconds`, every second) until the evicted pods are gone from the node;
    those left are `report.terminating`."""
    import time

    from gryvia_cli.core.maintenance import still_there

    access = state.access()
    deadline = time.monotonic() + seconds
    selector = f"spec.nodeName={report.node}"
    while True:
        left = still_there(report.evicted, access.items(r.POD, None, field_selector=selector))
        if not left or time.monotonic() >= deadline:
            report.terminating = left
            return
        time.sleep(1.0)


@app.command("end")
def end(ctx: typer.Context, node: NodeArg) -> None:
    """End a node's maintenance: uncordon it and remove both maintenance annotations.

    Refuses a node that is not in maintenance (no gryvia.io/maintenance annotation), so a
    node someone else cordoned stays cordoned.

    Examples:
      gryvia maintenance end gpu-3
    """
    from gryvia_cli.core.maintenance import END_PATCH
    from gryvia_operator.api.maintenance import maintenance_of

    state = session(ctx)
    access = state.access()
    marks = maintenance_of(access.get(r.NODE, node))
    if marks is None:
        raise GryviaError(
            f"node {node} is not in maintenance (no gryvia.io/maintenance annotation)",
            hint=f"gryvia maintenance list; if it was cordoned by hand: kubectl uncordon {node}",
        )
    access.merge_patch(r.NODE, node, None, END_PATCH)
    since = f" (since {marks.since})" if marks.since else ""
    success(f"node {node} uncordoned: maintenance ended{since}")


@app.command("list")
def list_nodes(ctx: typer.Context, output: OutputOpt = None) -> None:
    """List nodes in maintenance: since when, for how long, and why.

    STATUS is `in maintenance` (cordoned) or `uncordoned` (the marks stayed but the node takes
    pods again: end it with `gryvia maintenance end NODE`). `-o wide` adds GPU TYPE and GPUS.

    Examples:
      gryvia maintenance list
      gryvia maintenance list -o json | jq '.items[].node'

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: MaintenanceList, items: [{node, since,
    ageSeconds, reason, cordoned, gpuType, gpus}]}.
    """
    from gryvia_cli.core.maintenance import LIST_COLUMNS, LIST_WIDE_COLUMNS, list_row, marked_nodes

    state = session(ctx)
    fmt = state.fmt(output)
    now = state.now()
    nodes = marked_nodes(state.access().items(r.NODE))
    items = [n.as_dict(now) for n in nodes]
    names = [f"{r.NODE.qualified}/{n.name}" for n in nodes]
    if render_entries(fmt, "MaintenanceList", items, names, "No nodes in maintenance."):
        return
    wide = fmt is OutputFormat.wide
    render_table(
        list(LIST_WIDE_COLUMNS if wide else LIST_COLUMNS),
        [list_row(n, now, wide=wide) for n in nodes],
    )
