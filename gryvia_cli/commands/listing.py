"""`gryvia list jobs|nodes|quotas|skus` (alias `ls`; singular nouns accepted)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar

import typer

from gryvia_cli.cli.group import AliasGroup
from gryvia_cli.cli.options import (
    AllNamespacesOpt,
    MineOpt,
    NamespaceOpt,
    OutputOpt,
    UserOpt,
    names_of,
    render_raw,
)
from gryvia_cli.cli.session import session
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    info,
    render_data,
    render_documents,
    render_names,
    render_rows,
    render_table,
    warn,
)
from gryvia_cli.tablelayout import column_widths


class ListGroup(AliasGroup):
    """`list` with singular nouns accepted (`list job`)."""

    aliases: ClassVar[dict[str, str]] = {
        "job": "jobs",
        "node": "nodes",
        "quota": "quotas",
        "sku": "skus",
    }


app = typer.Typer(help="List jobs, GPU nodes, quotas or SKUs.", no_args_is_help=True, cls=ListGroup)

SelectorOpt = Annotated[
    str | None, typer.Option("-l", "--selector", help="Label selector, e.g. team=vision.")
]
GpuTypeOpt = Annotated[
    str | None, typer.Option("--gpu-type", help="Only this GPU type (case-insensitive).")
]


def cluster_scoped_notice(res: r.Resource, all_namespaces: bool, namespace: str | None) -> None:
    """Warn that -A/-n do nothing for a cluster-scoped kind."""
    if all_namespaces or namespace:
        flag = "--all-namespaces" if all_namespaces else "--namespace"
        warn(f"{flag} has no effect: {res.kind} is cluster-scoped")


def list_jobs(
    ctx: typer.Context,
    array: Annotated[
        str | None,
        typer.Argument(help="Only the elements of this job array.", show_default=False),
    ] = None,
    namespace: NamespaceOpt = None,
    all_namespaces: AllNamespacesOpt = False,
    output: OutputOpt = None,
    selector: SelectorOpt = None,
    phase: Annotated[
        str | None, typer.Option("--phase", help="Only jobs in this phase, e.g. Running.")
    ] = None,
    mine: MineOpt = False,
    user: UserOpt = None,
    watch: Annotated[
        bool,
        typer.Option(
            "-w",
            "--watch",
            help="After the list, print a line (or object) for every job that changes, like "
            "kubectl get -w (Ctrl-C ends it).",
        ),
    ] = False,
) -> None:
    """List jobs (GryviaAIJobs).

    Columns NAME, USER, TYPE, GPUS (total), GPU TYPE, STATUS, AGE. ARRAY lists the elements
    of a job array (label gryvia.io/array-name=ARRAY), as `squeue -j` does for a Slurm array.

    USER is who submitted the job: the admission webhook records the username the API server
    authenticated (annotation gryvia.io/submitted-by); `-` for a job created while the
    webhook was down. --mine keeps your own jobs (you as the API server sees your kubeconfig
    user), -u USER those of USER; jobs without a submitter match neither.

    `-o wide` adds pods, ready replicas, run time, the nodes the pods are bound to, GPU% (the
    operator's last GPU sample while it runs, its run's mean after; docs/gpu-metrics.md), the
    cost so far (metered; `~` marks an estimate from the catalog rate) and the status message;
    `-o json` prints the GryviaAIJobList as the API server returns it.

    Examples:
      gryvia list jobs
      gryvia ls jobs -A -o wide
      gryvia list jobs -o json | jq -r '.items[].metadata.name'
      gryvia list jobs sweep
      gryvia list jobs -A -w
      gryvia list jobs -A --mine
      gryvia list jobs -u alice@example.com
    """
    from gryvia_cli.views import joblist

    selector = joblist.array_selector(selector, array)
    state = session(ctx)
    fmt = state.fmt(output)
    if not watch:
        joblist.list_jobs(
            state,
            fmt,
            namespace=namespace,
            all_namespaces=all_namespaces,
            selector=selector,
            phase=phase,
            mine=mine,
            user=user,
        )
        return
    from gryvia_cli.views.submitters import wanted_users

    keep = joblist.job_filter(joblist.wanted_phase(phase), wanted_users(state, mine, user))
    ns = None if all_namespaces else state.resolve_namespace(namespace)
    _watch_jobs(state, fmt, ns, selector, keep, joblist.read_jobs(state, ns, selector))


def _watch_jobs(
    state: Any,
    fmt: OutputFormat,
    ns: str | None,
    selector: str | None,
    keep: Callable[[dict[str, Any]], bool],
    data: dict[str, Any],
) -> None:
    """`list jobs -w`: the table (or each object) of the jobs `keep` accepts (--phase, --mine,
    -u), then one more line (or object) per change of such a job, aligned with the table
    (`-o wide` reads the pods and prices again for each change)."""
    from gryvia_cli.views import joblist
    from gryvia_cli.views.watching import follow_changes

    items = [i for i in data.get("items") or [] if keep(i)]
    columns, rows_of = joblist.job_rows(state, fmt, ns)
    rows = rows_of(items)
    widths = column_widths(columns, rows)
    show: Callable[[list[dict[str, Any]]], None]
    if fmt in MACHINE_FORMATS or fmt is OutputFormat.name:

        def show(objects: list[dict[str, Any]]) -> None:
            for obj in objects:
                obj.setdefault("kind", r.AIJOB.kind)
                obj.setdefault("apiVersion", r.AIJOB.api_version)
                if fmt is OutputFormat.name:
                    render_names(names_of(r.AIJOB, [obj]))
                elif fmt is OutputFormat.yaml:
                    render_documents([obj])
                else:
                    render_data(obj, fmt)

        show(items)
    else:

        def show(objects: list[dict[str, Any]]) -> None:
            render_rows(rows_of(objects), widths)

        if rows:
            render_table(columns, rows)
        else:
            info(f"No jobs found{'' if ns is None else f' in namespace {ns}'}; watching.")
            render_table(columns, [])
    version = str((data.get("metadata") or {}).get("resourceVersion") or "")
    follow_changes(
        state.access(),
        r.AIJOB,
        ns,
        (list(data.get("items") or []), version),
        lambda obj: show([obj]) if keep(obj) else None,
        label_selector=selector,
    )


def list_nodes(
    ctx: typer.Context,
    output: OutputOpt = None,
    gpu_type: GpuTypeOpt = None,
    all_namespaces: AllNamespacesOpt = False,
) -> None:
    """List GPU nodes.

    Type, GPUs, memory per GPU, driver/CUDA, RDMA and phase of each node.

    Reads GryviaGpuNodes; nodes with GPU feature labels but no GryviaGpuNode are shown from
    their labels. `-o wide` adds allocated and free GPUs, the source and the message.
    `-o json` prints the GryviaGpuNodeList (or, when nothing is registered, a v1 List of the
    GPU Nodes).

    Examples:
      gryvia list nodes
      gryvia list nodes --gpu-type H100 -o wide
    """
    from gryvia_cli.views.reads import read_optional

    state = session(ctx)
    cluster_scoped_notice(r.GPUNODE, all_namespaces, None)
    fmt = state.fmt(output)
    access = state.access()
    if fmt in MACHINE_FORMATS or fmt is OutputFormat.name:
        data = _node_objects(access, gpu_type)
        if fmt is OutputFormat.name:
            res = r.GPUNODE if data.get("kind") != "List" else r.NODE
            render_names(names_of(res, data["items"]))
        else:
            render_data(data, fmt)
        return
    from gryvia_cli.views.nodes import show_node_table

    show_node_table(state, read_optional(access, r.GPUNODE), gpu_type, fmt is OutputFormat.wide)


def _node_objects(access: Any, gpu_type: str | None) -> dict[str, Any]:
    from gryvia_cli.views.reads import read_optional

    def keep(t: Any) -> bool:
        return gpu_type is None or str(t or "").lower() == gpu_type.lower()

    data: dict[str, Any] = {
        "apiVersion": r.GPUNODE.api_version,
        "kind": "GryviaGpuNodeList",
        "items": [],
    }
    registered = read_optional(access, r.GPUNODE)
    if registered:
        data["items"] = [i for i in registered if keep((i.get("spec") or {}).get("gpuType"))]
        return data
    from gryvia_cli.core.nodes import gpu_nodes

    nodes = access.items(r.NODE)
    gpu = {n.name for n in gpu_nodes([], nodes) if keep(n.gpu_type)}
    items = [n for n in nodes if (n.get("metadata") or {}).get("name") in gpu]
    return {"apiVersion": "v1", "kind": "List", "items": items}


def list_quotas(
    ctx: typer.Context, output: OutputOpt = None, all_namespaces: AllNamespacesOpt = False
) -> None:
    """List quotas (GryviaQuotas).

    Team, GPUs allocated/max, per-job limit, running and queued jobs, budget and status.

    Examples:
      gryvia list quotas
      gryvia list quotas -o yaml
    """
    from gryvia_cli.core.cells import Marked
    from gryvia_cli.core.quota import gpu_use_marker, quota_phase_marker

    state = session(ctx)
    cluster_scoped_notice(r.QUOTA, all_namespaces, None)
    fmt = state.fmt(output)
    data = state.access().list_objects(r.QUOTA)
    items = data.get("items") or []
    if render_raw(data, r.QUOTA, fmt):
        return
    if not items:
        info("No quotas found.")
        return
    rows = []
    for item in items:
        spec, status = item.get("spec") or {}, item.get("status") or {}
        limits, usage = spec.get("gpuQuota") or {}, status.get("currentUsage") or {}
        budget, spent = spec.get("budget") or {}, status.get("budgetStatus") or {}
        alloc, most = usage.get("allocatedGPUs") or 0, limits.get("maxGPUs") or 0
        marker = gpu_use_marker(alloc, most)
        money = (
            f"${spent.get('spentThisMonth') or 0:.2f}/${budget['monthlyBudget']:.2f}"
            if budget.get("monthlyBudget")
            else "N/A"
        )
        phase = status.get("phase") or "Unknown"
        rows.append(
            [
                (item.get("metadata") or {}).get("name"),
                spec.get("team"),
                Marked(f"{alloc}/{most}", marker),
                limits.get("maxGPUsPerJob") or "-",
                usage.get("runningJobs") or 0,
                usage.get("queuedJobs") or 0,
                money,
                Marked(phase, quota_phase_marker(phase)),
            ]
        )
    render_table(
        ["name", "team", "allocated", "per job", "running", "queued", "budget", "status"], rows
    )


def list_skus(
    ctx: typer.Context, output: OutputOpt = None, all_namespaces: AllNamespacesOpt = False
) -> None:
    """List the GPU price catalog (as `gryvia catalog`)."""
    from gryvia_cli.views.catalog import show_catalog

    cluster_scoped_notice(r.GPUSKU, all_namespaces, None)
    show_catalog(ctx, output)


app.command("jobs")(list_jobs)
app.command("nodes")(list_nodes)
app.command("quotas")(list_quotas)
app.command("skus")(list_skus)
