"""The `gryvia` root command: global options and the command groups.

Start-up stays light: heavy libraries (kubernetes, textual, kopf) are imported only inside
the commands that need them; `tests/unit/cli/test_import_hygiene.py` guards this. Help is
plain Click help grouped by section (Rich help would cost ~80 ms per start).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gryvia_cli.cli.group import GryviaGroup, LazyCommand
from gryvia_cli.cli.session import Session
from gryvia_cli.output import OutputFormat

_C = "gryvia_cli.commands."
COMMANDS: tuple[tuple[LazyCommand, tuple[str, ...]], ...] = (
    (
        LazyCommand(
            "submit",
            _C + "submit",
            "Workloads",
            "Submit jobs from manifests or a Slurm batch script.",
            "submit",
        ),
        (),
    ),
    (
        LazyCommand(
            "validate",
            _C + "validate",
            "Workloads",
            "Check manifests offline with the admission webhook's rules.",
            "validate",
        ),
        (),
    ),
    (
        LazyCommand(
            "status", _C + "status", "Workloads", "Platform health, or one job's state.", "status"
        ),
        (),
    ),
    (LazyCommand("logs", _C + "logs", "Workloads", "Print or follow a job's log.", "logs"), ()),
    (
        LazyCommand(
            "cancel", _C + "cancel", "Workloads", "Cancel waiting or running jobs.", "cancel"
        ),
        (),
    ),
    (
        LazyCommand(
            "delete", _C + "delete", "Workloads", "Delete jobs (or other Gryvia objects).", "delete"
        ),
        ("rm",),
    ),
    (
        LazyCommand(
            "queue",
            _C + "queue",
            "Workloads",
            "Waiting jobs, oldest first, and why each one waits.",
            "queue",
        ),
        (),
    ),
    (
        LazyCommand(
            "squeue",
            _C + "squeue",
            "Workloads",
            "Jobs in Slurm's squeue layout: states, reasons, -o letters.",
            "squeue",
        ),
        (),
    ),
    (
        LazyCommand(
            "sacct",
            _C + "sacct",
            "Workloads",
            "Jobs in Slurm's sacct layout: state, exit code, elapsed, GPU-hours.",
            "sacct",
        ),
        (),
    ),
    (
        LazyCommand("list", _C + "listing", "Cluster", "List jobs, GPU nodes, quotas or SKUs."),
        ("ls",),
    ),
    (LazyCommand("get", _C + "get", "Cluster", "Print one object as YAML or JSON.", "get"), ()),
    (
        LazyCommand(
            "describe", _C + "get", "Cluster", "Describe one object for people.", "describe"
        ),
        (),
    ),
    (
        LazyCommand(
            "capacity",
            _C + "capacity",
            "Cluster",
            "GPUs per type: total, allocated, free, pending, shortfall.",
            "capacity",
        ),
        ("cap",),
    ),
    (
        LazyCommand(
            "catalog", _C + "catalog", "Cluster", "The GPU price catalog (GryviaGpuSku).", "catalog"
        ),
        ("skus",),
    ),
    (
        LazyCommand(
            "sinfo",
            _C + "sinfo",
            "Cluster",
            "GPU nodes in Slurm's sinfo layout: GPU types as partitions.",
            "sinfo",
        ),
        (),
    ),
    (
        LazyCommand(
            "health",
            _C + "health",
            "Cluster",
            "GPU node health: phase, driver, CUDA, RDMA.",
            "health",
        ),
        (),
    ),
    (
        LazyCommand(
            "gpu",
            _C + "gpu",
            "Workloads",
            "GPU training and NCCL insights (not built yet: says what it needs).",
            "gpu",
        ),
        (),
    ),
    (
        LazyCommand(
            "reservation",
            _C + "reservation",
            "Tenancy",
            "GPU reservations: create, list, show and delete them.",
        ),
        ("reservations",),
    ),
    (
        LazyCommand(
            "checkpoint",
            _C + "checkpoint",
            "Workloads",
            "Checkpoint guards: save and resume selected jobs.",
        ),
        ("checkpoints",),
    ),
    (
        LazyCommand(
            "tenant", _C + "tenant", "Tenancy", "Tenants: create, list, show and delete them."
        ),
        ("tenants",),
    ),
    (
        LazyCommand(
            "budget",
            _C + "budget",
            "Tenancy",
            "Budgets: create, list, show and delete them.",
        ),
        ("budgets",),
    ),
    (
        LazyCommand(
            "hook",
            _C + "hook",
            "Workloads",
            "Job hooks: signed POSTs when jobs reach chosen phases.",
        ),
        ("hooks",),
    ),
    (
        LazyCommand(
            "priority",
            _C + "priority",
            "Tenancy",
            "Job priorities: create, list, show and delete them.",
        ),
        ("priorities",),
    ),
    (
        LazyCommand(
            "quota",
            _C + "quota",
            "Tenancy",
            "GPU quota use per team, and spend against the budget.",
            "quota",
        ),
        (),
    ),
    (
        LazyCommand(
            "cost",
            _C + "cost",
            "Tenancy",
            "Spend per team in a day, week or month, against its budget.",
            "cost",
        ),
        (),
    ),
    (
        LazyCommand(
            "usage",
            _C + "usage",
            "Tenancy",
            "Metered GPU-hours and estimated cost per tenant, SKU, day or job.",
            "usage",
        ),
        (),
    ),
    (
        LazyCommand(
            "invoice",
            _C + "invoice",
            "Tenancy",
            "Monthly invoice estimates per tenant, one line per SKU.",
        ),
        (),
    ),
    (
        LazyCommand(
            "ledger",
            _C + "ledger",
            "Tenancy",
            "The billing ledger: verify a tenant's chain.",
        ),
        (),
    ),
    (
        LazyCommand(
            "config", _C + "config", "Utilities", "Show or change what gryvia connects to."
        ),
        (),
    ),
    (
        LazyCommand(
            "completion",
            _C + "completion",
            "Utilities",
            "Print a shell completion script (no cluster needed).",
            "completion",
        ),
        (),
    ),
    (
        LazyCommand(
            "version", _C + "version", "Utilities", "Client and server versions.", "version"
        ),
        (),
    ),
    (
        LazyCommand(
            "tui",
            _C + "tui",
            "Workloads",
            "Open the interactive console: jobs, queue, capacity, cost, nodes, submit.",
            "tui",
        ),
        (),
    ),
    (
        LazyCommand(
            "demo",
            _C + "demo",
            "Utilities",
            "Run the demo: a sandbox with Gryvia installed and seeded.",
        ),
        (),
    ),
    (
        LazyCommand(
            "sandbox",
            _C + "sandbox",
            "Utilities",
            "Run a local sandbox cluster with simulated GPU nodes.",
        ),
        (),
    ),
    (
        LazyCommand(
            "sbatch",
            _C + "sbatch",
            "Utilities",
            "Import Slurm batch scripts as GryviaAIJobs (no cluster needed).",
        ),
        (),
    ),
)
"""Every command: (entry, hidden aliases). Modules load on first use; the short help must
match the command's first docstring line (tests/unit/cli/test_cli_root.py checks)."""

for _entry, _aliases in COMMANDS:
    GryviaGroup.register(_entry, _aliases)

app = typer.Typer(
    name="gryvia",
    cls=GryviaGroup,
    help="Gryvia CLI - manage GPU jobs on Kubernetes: submit, follow, inspect, plan capacity.",
    epilog="Run `gryvia COMMAND --help` for a command's options and examples. "
    "Exit codes: 0 ok, 1 failed, 2 usage, 130 interrupted.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _version_callback(value: bool) -> None:
    if value:
        from gryvia_cli import __version__

        typer.echo(f"gryvia {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the client version and exit.",
        ),
    ] = False,
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            "--kubeconfig",
            metavar="FILE",
            help="Kubeconfig file [default: $KUBECONFIG (several files merged), else "
            "~/.kube/config, else the pod's service account].",
            show_default=False,
        ),
    ] = None,
    context: Annotated[
        str | None,
        typer.Option(
            "--context",
            metavar="NAME",
            envvar="GRYVIA_CONTEXT",
            help="Kubeconfig context [default: the current context; env: GRYVIA_CONTEXT].",
            show_default=False,
            show_envvar=False,
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option(
            "-n",
            "--namespace",
            metavar="NAMESPACE",
            envvar="GRYVIA_NAMESPACE",
            help="Namespace [default: `gryvia config set-namespace`, else the context's, else "
            "default; env: GRYVIA_NAMESPACE].",
            show_default=False,
            show_envvar=False,
        ),
    ] = None,
    output: Annotated[
        OutputFormat | None,
        typer.Option(
            "-o",
            "--output",
            metavar="FORMAT",
            envvar="GRYVIA_OUTPUT",
            case_sensitive=False,
            help="Output format of read commands: table, wide, json, yaml, name "
            "[env: GRYVIA_OUTPUT].",
            show_default=False,
            show_envvar=False,
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "-v",
            "--verbose",
            envvar="GRYVIA_VERBOSE",
            help="Show details of errors (the API server's reply) and debug logs "
            "[env: GRYVIA_VERBOSE].",
            show_envvar=False,
        ),
    ] = False,
    no_color: Annotated[
        bool,
        typer.Option(
            "--no-color",
            help="No colours (also when NO_COLOR is set or output is not a terminal; "
            "CLICOLOR_FORCE=1 keeps them).",
        ),
    ] = False,
) -> None:
    """Gryvia: a terminal-first GPU platform for Kubernetes."""
    from gryvia_cli.output import configure

    configure(no_color=no_color, verbose=verbose)
    state = ctx.obj if isinstance(ctx.obj, Session) else Session()
    state.kubeconfig = kubeconfig or state.kubeconfig
    state.context = context or state.context
    state.namespace = namespace or state.namespace
    state.output = output or state.output
    state.verbose = verbose or state.verbose
    state.no_color = no_color or state.no_color
    ctx.obj = state
    if verbose:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")


def main() -> None:
    """Console-script entry point. Expected errors become one message and an exit code in one
    place, `GryviaGroup.invoke` (gryvia_cli/cli/group.py)."""
    import os

    if os.environ.get("_GRYVIA_COMPLETE"):  # shell completion asks for candidates
        from typer._completion_classes import completion_init

        completion_init()
    app(prog_name="gryvia")
