"""Options of the billing reports (`usage`, `invoice`): their formats, `--tenant`, CSV out."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from gryvia_cli.cli.session import Session
from gryvia_cli.output import MACHINE_FORMATS
from gryvia_cli.outputtemplates import output_completion, output_parser


class ReportFormat(StrEnum):
    """Formats of the billing reports (`usage`, `invoice`)."""

    table = "table"
    json = "json"
    yaml = "yaml"
    csv = "csv"
    jsonpath = "jsonpath"
    custom_columns = "custom-columns"


ReportOutputOpt = Annotated[
    ReportFormat | None,
    typer.Option(
        "-o",
        "--output",
        metavar="FORMAT",
        help="Output format: table, json, yaml, csv, jsonpath=TEMPLATE or custom-columns=SPEC "
        "(and their -file=FILE forms, as kubectl's) [default: the global -o when json, yaml, "
        "jsonpath or custom-columns, else table].",
        parser=output_parser(ReportFormat),
        autocompletion=output_completion(ReportFormat),
        show_default=False,
    ),
]
TenantOpt = Annotated[
    str | None, typer.Option("--tenant", metavar="TENANT", help="Only this tenant's usage.")
]


def report_format(state: Session, local: ReportFormat | None) -> ReportFormat:
    """The command's `-o`, else the global `-o`/GRYVIA_OUTPUT when it is json, yaml or a
    template format, else table."""
    if local is not None:
        return local
    if state.output in MACHINE_FORMATS:
        return ReportFormat(state.output.value)
    return ReportFormat.table


def write_csv(text: str) -> None:
    """Print CSV text to stdout as it is."""
    sys.stdout.write(text)
