"""`gryvia sharing create|list|get|delete`: GryviaGPUSharingPolicies (time-slicing or MIG for
the GPU nodes a selector matches; the operator runs with --enable-gpu-sharing)."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.kindcommands import add_get
from gryvia_cli.cli.objects import ObjectGroup, TableSpec
from gryvia_cli.cli.options import OutputOpt, YesOpt, check_new_name
from gryvia_cli.cli.session import session
from gryvia_cli.core.gpusharing import sharing_details
from gryvia_cli.errors import UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import info, success

app = typer.Typer(
    help="GPU sharing policies: time-slicing or MIG for selected GPU nodes.",
    no_args_is_help=True,
)
NameArg = Annotated[str, typer.Argument(help="GPU sharing policy name.", show_default=False)]
POLICIES = ObjectGroup(r.GPU_SHARING_POLICY, "GPU sharing policy", "sharing")


@app.command("create")
def create(
    ctx: typer.Context,
    name: NameArg,
    strategy: Annotated[
        str, typer.Option("--strategy", help="time-slicing or mig.", show_default=False)
    ],
    node_selector: Annotated[
        list[str] | None,
        typer.Option(
            "--node-selector",
            "-l",
            metavar="KEY=VALUE",
            help="Node label the policy selects (repeatable; none: every GPU node).",
        ),
    ] = None,
    replicas: Annotated[
        int | None,
        typer.Option("--replicas", help="time-slicing: shared units per physical GPU, 2..64."),
    ] = None,
    rename_by_default: Annotated[
        bool,
        typer.Option("--rename-by-default", help="time-slicing: advertise nvidia.com/gpu.shared."),
    ] = False,
    one_unit_per_pod: Annotated[
        bool,
        typer.Option(
            "--one-unit-per-pod",
            help="time-slicing: refuse pods asking for more than one shared unit.",
        ),
    ] = False,
    mig_strategy: Annotated[
        str | None, typer.Option("--mig-strategy", help="mig: single or mixed (default mixed).")
    ] = None,
    mig_config: Annotated[
        str | None,
        typer.Option("--mig-config", help="mig: the MIG layout (default all-1g.10gb)."),
    ] = None,
    output: OutputOpt = None,
) -> None:
    """Create or update a GPU sharing policy (server-side apply).

    The operator labels the selected GPU nodes and writes the NVIDIA device plugin's
    configuration; a node's advertised `nvidia.com/gpu` count changes once the plugin
    restarts with it (docs/gpu-sharing.md).

    Examples:
      gryvia sharing create inference-pool --strategy time-slicing --replicas 4 -l pool=serve
      gryvia sharing create a100-mig --strategy mig --mig-config all-1g.10gb -l gryvia.io/gpu=A100
    """
    check_new_name(name, "GPU sharing policy name")
    from gryvia_cli.core.gpusharing import build_sharing_policy

    try:
        body = build_sharing_policy(
            name,
            strategy,
            node_selector or [],
            replicas=replicas,
            rename_by_default=rename_by_default,
            one_unit_per_pod=one_unit_per_pod,
            mig_strategy=mig_strategy,
            mig_config=mig_config,
        )
    except ValueError as exc:
        raise UsageError(str(exc), hint="see 'gryvia sharing create --help'") from None
    state = session(ctx)
    obj = state.access().apply(r.GPU_SHARING_POLICY, body)
    success(f"GPU sharing policy {name} applied")
    POLICIES.print_written(state, obj, output)


@app.command("list")
def list_policies(ctx: typer.Context, output: OutputOpt = None) -> None:
    """List GPU sharing policies (cluster-wide).

    Columns NAME, STRATEGY, SHARING, NODE SELECTOR, CONFIG, NODES (labelled with it), READY;
    `-o wide` adds AGE. `-o json|yaml|name` prints the list as the API returns it.

    Examples:
      gryvia sharing list
      gryvia sharing list -o wide
    """
    from gryvia_cli.core.gpusharing import SHARING_COLUMNS, SHARING_WIDE_COLUMNS, sharing_row
    from gryvia_operator.api.gpusharing import GryviaGPUSharingPolicy

    table = TableSpec(
        columns=SHARING_COLUMNS,
        row=lambda p, now: sharing_row(p, now)[:-1],
        wide_columns=SHARING_WIDE_COLUMNS,
        wide_row=sharing_row,
    )
    state = session(ctx)
    shown = POLICIES.print_table(state, GryviaGPUSharingPolicy, output, None, False, table)
    if shown:
        info(f"Total: {len(shown)} GPU sharing policy(ies)")


add_get(
    app,
    POLICIES,
    lambda p, _now: sharing_details(p),
    "Show one GPU sharing policy: strategy, settings, the nodes it holds, and Ready.",
    "inference-pool",
)


@app.command("delete")
def delete(ctx: typer.Context, name: NameArg, yes: YesOpt = False) -> None:
    """Delete a GPU sharing policy: the operator removes its node labels and its entry in the
    device plugin's configuration, and the nodes advertise whole GPUs again.

    Examples:
      gryvia sharing delete inference-pool --yes
    """
    POLICIES.delete(session(ctx), name, None, yes)
