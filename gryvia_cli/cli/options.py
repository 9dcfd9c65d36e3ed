"""Option types and small prompts the command modules share: `-o`, `-n`, `-A`, `-y`,
confirmation, job-name checks and `-o name` lines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gryvia_cli.cli.rawoutput import names_of as names_of
from gryvia_cli.cli.rawoutput import render_raw as render_raw
from gryvia_cli.output import OutputFormat
from gryvia_cli.outputtemplates import output_completion, output_parser

if TYPE_CHECKING:
    pass

OutputOpt = Annotated[
    OutputFormat | None,
    typer.Option(
        "-o",
        "--output",
        metavar="FORMAT",
        help="Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, "
        "jsonpath-file=FILE, custom-columns=SPEC or custom-columns-file=FILE (as kubectl's) "
        "[env: GRYVIA_OUTPUT].",
        parser=output_parser(OutputFormat),
        autocompletion=output_completion(OutputFormat),
        show_default=False,
    ),
]
NamespaceOpt = Annotated[
    str | None,
    typer.Option(
        "-n",
        "--namespace",
        metavar="NAMESPACE",
        help="Namespace [default: saved with `gryvia config set-namespace`, else the context's, "
        "else default].",
        show_default=False,
    ),
]
AllNamespacesOpt = Annotated[
    bool, typer.Option("-A", "--all-namespaces", help="Across all namespaces.")
]
YesOpt = Annotated[bool, typer.Option("-y", "--yes", help="Do not ask for confirmation.")]
MineOpt = Annotated[
    bool,
    typer.Option(
        "--mine",
        help="Only jobs you submitted (you as the API server sees your kubeconfig user).",
    ),
]
UserOpt = Annotated[
    list[str] | None,
    typer.Option(
        "-u",
        "--user",
        metavar="USER",
        help="Only jobs these users submitted (repeat or comma-separate; the USER column).",
        show_default=False,
    ),
]
MergeKubeconfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--kubeconfig",
        help="Kubeconfig file to add the context to "
        "[default: first of $KUBECONFIG, else ~/.kube/config].",
    ),
]
"""The kubeconfig a sandbox or demo merges its `gryvia-NAME` context into."""


def confirm(question: str, yes: bool) -> bool:
    """Ask `question` unless --yes was given or stdin is not a terminal (then proceed)."""
    import sys

    if yes or not sys.stdin.isatty():
        return True
    return typer.confirm(question, default=False)


def check_job_name(name: str) -> None:
    """Refuse names that would change a label selector (`=`, `,`, `!`, spaces)."""
    from gryvia_cli.errors import UsageError

    if not name or any(ch in name for ch in "=,! "):
        raise UsageError(
            f'"{name}" is not a job name',
            hint="job names are DNS names (lowercase letters, digits, '-' and '.')",
        )


def check_new_name(name: str, what: str) -> None:
    """Refuse a name the API server would refuse as metadata.name (the DNS-1123 rule of
    `gryvia_operator.api.names.name_problem`) before anything is sent: a usage error (exit 2)
    naming the argument, instead of the server's 422 repeated in its causes.

    `what`: the noun of the object, as in "hook name".
    """
    from gryvia_cli.errors import UsageError
    from gryvia_operator.api.names import name_problem

    problem = name_problem(name)
    if problem:
        raise UsageError(
            f"NAME {name!r} is not a valid {what}: {problem}",
            hint="use lowercase letters, digits, '-' and '.', e.g. 'nightly-eval'",
        )


def render_entries(
    fmt: OutputFormat, kind: str, items: list[dict[str, Any]], names: list[str], empty: str
) -> bool:
    """Print a report's entries as machines want them and return True: `-o json|yaml` as
    {apiVersion: cli.gryvia.io/v1, kind: `kind`, items: `items`}, `-o name` as the `names`
    lines; likewise True after saying `empty` (stderr) when there are no entries. False for
    the people formats (table, wide) with entries: the command prints its table."""
    from gryvia_cli.output import MACHINE_FORMATS, info, render_data, render_names
    from gryvia_operator.api.names import CLI_API_VERSION

    if fmt in MACHINE_FORMATS:
        render_data({"apiVersion": CLI_API_VERSION, "kind": kind, "items": items}, fmt)
        return True
    if fmt is OutputFormat.name:
        render_names(names)
        return True
    if not items:
        info(empty)
        return True
    return False


RedrawEveryOpt = Annotated[
    int | None,
    typer.Option(
        "-w",
        "--watch",
        metavar="N",
        help="Redraw on every change of jobs, pods or nodes, and at least every N seconds "
        "(N >= 1; Ctrl-C ends it).",
        show_default=False,
        min=1,
    ),
]
"""`-w N` of the redrawn views (queue, capacity): seconds between redraws at the latest."""


NodeGpusOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--node-gpus",
        metavar="TYPE=N",
        help="GPUs per node of a type (repeatable), for --exclusive (whole nodes).",
    ),
]
"""`--node-gpus TYPE=N` of `gryvia sbatch convert|check` and `gryvia submit --sbatch`."""


def node_gpu_shapes(items: list[str] | None) -> dict[str, int]:
    """GPUs per node by GPU type from `--node-gpus TYPE=N` values ({} when none).

    Raises typer.BadParameter naming the option for an item not written TYPE=N with N > 0."""
    shapes: dict[str, int] = {}
    for item in items or []:
        name, _, count = item.partition("=")
        if not name or not count.isdigit() or int(count) <= 0:
            raise typer.BadParameter(
                f"{item!r} is not TYPE=N (e.g. H100=8)", param_hint="--node-gpus"
            )
        shapes[name] = int(count)
    return shapes
