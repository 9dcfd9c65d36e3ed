"""`gryvia get KIND NAME` (YAML/JSON) and `gryvia describe KIND NAME` (for people).

`describe job` is the job status view; other kinds print as YAML with their events.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gryvia_cli.cli.options import NamespaceOpt, OutputOpt
from gryvia_cli.cli.session import Session, session
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    emit,
    render_data,
    render_names,
    render_table,
    section,
)

app = typer.Typer()

KindArg = Annotated[
    str,
    typer.Argument(
        help="job, node, quota, sku, tenant, reservation, budget, usage or jobhook (kind names, "
        "plurals and short names such as gaj also work).",
        show_default=False,
    ),
]
NameArg = Annotated[str, typer.Argument(help="Object name.", show_default=False)]


def read_object(
    state: Session, kind: str, name: str, namespace: str | None
) -> tuple[r.Resource, dict[str, Any], str | None]:
    """Resolve the kind and read the object; returns (resource, object, namespace used)."""
    from gryvia_cli.views.reads import get_namespaced

    res = r.lookup(kind)
    if not res.namespaced:
        return res, state.access().get(res, name, None), None
    ns = state.resolve_namespace(namespace)
    return res, get_namespaced(state.access(), res, name, ns), ns


def object_row(
    res: r.Resource, obj: dict[str, Any], state: Session, wide: bool
) -> tuple[list[str], list[Any]]:
    """Columns and one row for `-o table|wide`."""
    from gryvia_cli.core import timefmt

    if res is r.AIJOB:
        from gryvia_cli.core.jobs import (
            JOB_COLUMNS,
            JOB_WIDE_COLUMNS,
            bound_nodes,
            job_row,
            summarize_job,
        )

        job, now = summarize_job(obj), state.now()
        if not wide:
            return list(JOB_COLUMNS), job_row(job, now)
        from gryvia_cli.core.spend import cost_text
        from gryvia_cli.views.reads import read_job_pods, read_pricing

        access = state.access()
        nodes = bound_nodes(read_job_pods(access, job.namespace))
        cost = cost_text(read_pricing(access).job_cost(obj, now))
        row = job_row(
            job, now, wide=True, nodes=nodes.get((job.namespace, job.name), ()), cost=cost
        )
        return list(JOB_WIDE_COLUMNS), row
    meta, status = obj.get("metadata") or {}, obj.get("status") or {}
    phase = status.get("phase") or status.get("state") or "-"
    return ["name", "kind", "status", "age"], [
        meta.get("name"),
        res.kind,
        phase,
        timefmt.age(meta.get("creationTimestamp"), state.now()),
    ]


@app.command("get", rich_help_panel="Cluster")
def get(
    ctx: typer.Context,
    kind: KindArg,
    name: NameArg,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Print one object as YAML or JSON.

    The object is printed as the API server stores it (default YAML).

    Examples:
      gryvia get job train-ddp
      gryvia get node gpu-h100-0 -o json | jq .status
      gryvia get gaj my-job -n team-a -o yaml
    """
    state = session(ctx)
    fmt = state.fmt(output, OutputFormat.yaml)
    res, obj, _ = read_object(state, kind, name, namespace)
    if fmt in MACHINE_FORMATS:
        render_data(obj, fmt)
    elif fmt is OutputFormat.name:
        render_names([f"{res.qualified}/{name}"])
    else:
        columns, row = object_row(res, obj, state, fmt is OutputFormat.wide)
        render_table(columns, [row])


@app.command("describe", rich_help_panel="Cluster")
def describe(
    ctx: typer.Context,
    kind: Annotated[
        str,
        typer.Argument(
            help="job, node, quota, sku, tenant, reservation, budget, usage or jobhook; "
            "alone, a job name (`describe NAME` is `describe job NAME`).",
            show_default=False,
        ),
    ],
    name: Annotated[str | None, typer.Argument(help="Object name.", show_default=False)] = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Describe one object for people.

    A job gets its status view (spec, phase, conditions, pods, events, timings); other kinds
    are printed as YAML followed by their events. With one argument it names a job.

    Examples:
      gryvia describe train-ddp
      gryvia describe job train-ddp
      gryvia describe node gpu-h100-0
    """
    state = session(ctx)
    if name is None:
        kind, name = "job", kind
    res = r.lookup(kind)
    if res is r.AIJOB:
        from gryvia_cli.views.job import show_job

        show_job(state, name, namespace, output)
        return
    fmt = state.fmt(output)
    _, obj, ns = read_object(state, kind, name, namespace)
    if fmt in MACHINE_FORMATS:
        render_data(obj, fmt)
        return
    render_data(obj, OutputFormat.yaml)
    show_events(state, res.kind, name, ns)


def show_events(state: Session, kind: str, name: str, namespace: str | None) -> None:
    """Print the events about one object (newest last), or nothing when unreadable."""
    from gryvia_cli.core.events import event_rows
    from gryvia_cli.views.reads import try_read

    selector = f"involvedObject.kind={kind},involvedObject.name={name}"
    events = try_read(
        lambda: state.access().items(r.EVENT, namespace, field_selector=selector), "events"
    )
    section("Events")
    if not events:
        emit("  <none>")
        return
    render_table(
        ["last seen", "type", "reason", "object", "message"], event_rows(events, state.now())
    )
