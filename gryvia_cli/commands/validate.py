"""`gryvia validate FILE...`: check manifests offline with the admission webhook's rules."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.files import check_sources
from gryvia_cli.cli.options import OutputOpt
from gryvia_cli.cli.session import session
from gryvia_cli.errors import InvalidInputError
from gryvia_cli.output import MACHINE_FORMATS, failure, render_data, success, warn

app = typer.Typer()


@app.command("validate", rich_help_panel="Workloads")
def validate(
    ctx: typer.Context,
    files: Annotated[
        list[str],
        typer.Argument(help="Manifest files (multi-document YAML allowed); `-` reads stdin."),
    ],
    output: OutputOpt = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Treat warnings as errors (exit 1).")
    ] = False,
) -> None:
    """Check manifests offline with the admission webhook's rules.

    Runs the schema and every webhook rule; no cluster needed.

    Each problem names the file, the document, the object and the field. Documents of other
    APIs (ConfigMaps, ...) are skipped. Exit 1 when any document has an error.

    Examples:
      gryvia validate job.yaml
      gryvia validate examples/*.yaml -o json | jq '.items[] | select(.valid | not)'
      cat job.yaml | gryvia validate -

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: ValidationReport, items: [{file, document,
    line, kind, name, valid, skipped, errors: [{field, message}], warnings: [...]}]}, one item
    per document.
    """
    fmt = session(ctx).fmt(output)
    reports = check_sources(files)
    if fmt in MACHINE_FORMATS:
        from gryvia_operator.api.names import CLI_API_VERSION

        items = [r.as_dict() for r in reports]
        render_data(
            {"apiVersion": CLI_API_VERSION, "kind": "ValidationReport", "items": items}, fmt
        )
    else:
        for report in reports:
            for finding in report.errors:
                failure(finding.render())
            for finding in report.warnings:
                warn(finding.render())
            if report.skipped:
                warn(f"{report.document.label}: skipped: {report.skipped}")
    errors = sum(len(r.errors) for r in reports)
    warnings = sum(len(r.warnings) for r in reports)
    checked = sum(1 for r in reports if not r.skipped)
    if not reports:
        raise InvalidInputError("no documents found", hint="the files are empty")
    if errors or (strict and warnings):
        if fmt not in MACHINE_FORMATS:
            failure(f"{errors} error(s), {warnings} warning(s) in {checked} object(s)")
        raise typer.Exit(1)
    if fmt not in MACHINE_FORMATS:
        extra = f" ({warnings} warning(s))" if warnings else ""
        success(f"{checked} object(s) valid{extra}")
