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
from gryvia_cli.errors import ForbiddenError, UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    info,
    render_data,
    render_documents,
    render_json_bytes,
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
    if array:
        from gryvia_operator.api.names import LABEL_ARRAY_NAME

        array_selector = f"{LABEL_ARRAY_NAME}={array}"
        selector = f"{selector},{array_selector}" if selector else array_selector
    state = session(ctx)
    fmt = state.fmt(output)
    access = state.access()
    wanted = _wanted_phase(phase)
    ns = None if all_namespaces else state.resolve_namespace(namespace)
    from gryvia_cli.views.submitters import wanted_users

    users = wanted_users(state, mine, user)
    if fmt is OutputFormat.json and not phase and not watch and users is None:
        try:
            render_json_bytes(access.list_bytes(r.AIJOB, ns, label_selector=selector))
            return
        except ForbiddenError:
            if ns is not None:
                raise  # all namespaces: read the ones this user may (below)
    if ns is None:
        from gryvia_cli.views.readable import list_readable

        data, _ = list_readable(
            access, r.AIJOB, state.resolve_namespace(None), label_selector=selector
        )
    else:
        data = access.list_objects(r.AIJOB, ns, label_selector=selector)
    items = [i for i in data.get("items") or [] if _in_phase(i, wanted) and _by(i, users)]
    if watch:
        _watch_jobs(
            state, fmt, ns, selector, lambda i: _in_phase(i, wanted) and _by(i, users), data
        )
        return
    if render_raw({**data, "items": items}, r.AIJOB, fmt):
        return
    if not items:
        info(f"No jobs found{'' if ns is None else f' in namespace {ns}'}.")
        return
    columns, rows = _job_table(state, fmt, ns, items)
    render_table(columns, rows)


def _by(item: dict[str, Any], users: frozenset[str] | None) -> bool:
    from gryvia_operator.api.submitter import submitter_of

    return users is None or submitter_of(item) in users


def _in_phase(item: dict[str, Any], wanted: str | None) -> bool:
    if wanted is None:
        return True
    from gryvia_cli.core.phases import normalize_phase

    return normalize_phase((item.get("status") or {}).get("phase")) == wanted


def _job_table(
    state: Any, fmt: OutputFormat, ns: str | None, items: list[dict[str, Any]]
) -> tuple[list[str], list[list[Any]]]:
    """The columns and rows of the jobs table (`-o wide` reads pods and prices too)."""
    from gryvia_cli.core.jobs import (
        JOB_COLUMNS,
        JOB_WIDE_COLUMNS,
        bound_nodes,
        job_row,
        summarize_job,
    )

    access = state.access()
    now = state.now()
    wide = fmt is OutputFormat.wide
    columns = list(JOB_WIDE_COLUMNS if wide else JOB_COLUMNS)
    nodes: dict[tuple[str, str], Any] = {}
    cost_of: Callable[[dict[str, Any]], str] = lambda _item: "-"  # noqa: E731
    if wide:  # pricing pulls in the API models: only -o wide shows costs
        from gryvia_cli.core.spend import cost_text
        from gryvia_cli.views.reads import read_job_pods, read_pricing

        nodes = bound_nodes(read_job_pods(access, ns))
        pricing = read_pricing(access)
        cost_of = lambda item: cost_text(pricing.job_cost(item, now))  # noqa: E731
    rows = []
    for item in items:
        job = summarize_job(item)
        row = job_row(
            job, now, wide=wide, nodes=nodes.get((job.namespace, job.name), ()), cost=cost_of(item)
        )
        rows.append([job.namespace, *row] if ns is None else row)
    return (["namespace", *columns] if ns is None else columns), rows


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
    from gryvia_cli.views.watching import follow_changes

    items = [i for i in data.get("items") or [] if keep(i)]
    columns, rows = _job_table(state, fmt, ns, items)
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
            render_rows(_job_table(state, fmt, ns, objects)[1], widths)

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


def _wanted_phase(phase: str | None) -> str | None:
    """The canonical `--phase`, or None; a misspelt phase is a usage error listing them."""
    if phase is None:
        return None
    from gryvia_cli.core.phases import parse_phase

    try:
        return parse_phase(phase)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


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
