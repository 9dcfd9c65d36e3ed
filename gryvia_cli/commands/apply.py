"""`gryvia apply -f FILE...`: create or update Gryvia objects of any kind from manifests
(server-side apply), checked first with `gryvia validate`'s rules."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gryvia_cli.cli.files import check_sources
from gryvia_cli.cli.options import NamespaceOpt, OutputOpt
from gryvia_cli.cli.session import session
from gryvia_cli.errors import InvalidInputError
from gryvia_cli.output import MACHINE_FORMATS, OutputFormat, failure, render_data, success, warn

app = typer.Typer()


@app.command("apply", rich_help_panel="Workloads")
def apply(
    ctx: typer.Context,
    files: Annotated[
        list[str],
        typer.Option(
            "--file",
            "-f",
            metavar="FILE",
            help="Manifest file (multi-document YAML); repeatable; `-` reads stdin.",
        ),
    ],
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Ask the API server (and its webhook) without storing."),
    ] = False,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Create or update Gryvia objects from manifests (server-side apply).

    Every document is checked first with the rules of `gryvia validate` (schema and admission
    rules); when any has an error nothing is applied (exit 1). Then each is applied with field
    manager gryvia-cli in its own `metadata.namespace`, else -n, else the context's. Documents
    of other APIs are skipped with a warning (use kubectl for those). For jobs, `gryvia submit`
    also records the submitter and can wait and follow.

    Examples:
      gryvia apply -f docs/examples/inferenceservice.yaml
      gryvia apply -f policy.yaml -f budget.yaml -n ml --dry-run
      gryvia apply -f registry.yaml -o yaml
    """
    from gryvia_operator.api.resources import by_kind

    state = session(ctx)
    fmt = state.fmt(output, OutputFormat.name)
    reports = check_sources(files)
    if not reports:
        raise InvalidInputError("no documents found", hint="the files are empty")
    for report in reports:
        for finding in report.errors:
            failure(finding.render())
    errors = sum(len(r.errors) for r in reports)
    if errors:
        raise InvalidInputError(
            f"{errors} error(s): nothing was applied", hint="see: gryvia validate FILE"
        )
    targets = []  # every namespace settled (a conflicting -n refused) before any write
    for report in reports:
        if report.skipped:
            warn(f"{report.document.label}: skipped: {report.skipped}")
            continue
        doc = dict(report.document.content)
        res = by_kind(str(doc["kind"]))
        targets.append(
            (doc, res, state.manifest_namespace(doc, namespace) if res.namespaced else None)
        )
    applied: list[dict[str, Any]] = []
    for doc, res, ns in targets:
        applied.append(state.access().apply(res, doc, ns, dry_run=dry_run))
        if fmt not in MACHINE_FORMATS:
            where = f" in {ns}" if ns else ""
            done = "applied (dry run)" if dry_run else "applied"
            success(f"{res.qualified}/{doc['metadata']['name']} {done}{where}")
    if fmt in MACHINE_FORMATS:
        render_data({"apiVersion": "v1", "kind": "List", "items": applied}, fmt)
