"""`gryvia sbatch`: import Slurm batch scripts as GryviaAIJobs (convert one, check a folder)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from gryvia_cli.sbatch.convert import convert_file
from gryvia_cli.sbatch.report import render_text, summarize

app = typer.Typer(
    help="Import Slurm batch scripts as GryviaAIJobs (no cluster needed).",
    no_args_is_help=True,
)

DEFAULT_PATTERNS = ("*.sh", "*.sbatch", "*.slurm", "*.job", "*.bash", "*.batch")


class JobFormat(StrEnum):
    """Output of `convert`."""

    yaml = "yaml"
    json = "json"


class SummaryFormat(StrEnum):
    """Output of `check`."""

    table = "table"
    json = "json"


class _BlockDumper(yaml.SafeDumper):
    """YAML with multi-line strings (the batch script) as readable `|` blocks."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def dump_yaml(document: Any) -> str:
    """A manifest as YAML, multi-line strings as blocks."""
    return yaml.dump(document, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)


@app.command()
def convert(
    script: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="The batch script.")
    ],
    image: Annotated[
        str | None,
        typer.Option("--image", help="Container image (wins over #SBATCH --container-image)."),
    ] = None,
    output: Annotated[
        JobFormat, typer.Option("-o", "--output", help="yaml: the jobs; json: jobs and report.")
    ] = JobFormat.yaml,
    namespace: Annotated[
        str | None, typer.Option("--namespace", help="Set metadata.namespace on the jobs.")
    ] = None,
) -> None:
    """Print the GryviaAIJobs for SCRIPT and a migration report (exit 1, no jobs, on errors).

    Examples:
      gryvia sbatch convert train.sh --image nvcr.io/nvidia/pytorch:24.05-py3
      gryvia sbatch convert train.sh --image img -o json | jq .report
    """
    conversion = convert_file(script, image=image, namespace=namespace)
    if output is JobFormat.json:
        typer.echo(json.dumps({"jobs": conversion.jobs, "report": conversion.report}, indent=2))
    else:
        for job in conversion.jobs:
            typer.echo("---")
            typer.echo(dump_yaml(job), nl=False)
    for line in render_text(conversion.report):
        typer.echo(line, err=True)
    if not conversion.ok:
        raise typer.Exit(1)


def find_scripts(directory: Path, patterns: list[str], recursive: bool) -> list[Path]:
    """Regular files in `directory` matching any pattern, sorted."""
    found = {
        path
        for pattern in patterns
        for path in (directory.rglob(pattern) if recursive else directory.glob(pattern))
        if path.is_file()
    }
    return sorted(found)


@app.command()
def check(
    directory: Annotated[
        Path, typer.Argument(exists=True, file_okay=False, help="Folder of batch scripts.")
    ],
    output: Annotated[
        SummaryFormat, typer.Option("-o", "--output", help="table for people, json for tools.")
    ] = SummaryFormat.table,
    pattern: Annotated[
        list[str] | None,
        typer.Option("--pattern", help="File name pattern (repeatable); default *.sh, *.sbatch, …"),
    ] = None,
    recursive: Annotated[
        bool, typer.Option("-r", "--recursive", help="Descend into folders.")
    ] = False,
    details: Annotated[bool, typer.Option("--details", help="List every script.")] = False,
) -> None:
    """Try to import every script in DIRECTORY and summarise: clean, with warnings, refused.

    Examples:
      gryvia sbatch check ~/slurm-jobs
      gryvia sbatch check ~/slurm-jobs -r -o json
    """
    scripts = find_scripts(directory, pattern or list(DEFAULT_PATTERNS), recursive)
    reports = [convert_file(path, require_image=False).report for path in scripts]
    summary = summarize(reports)
    if output is SummaryFormat.json:
        typer.echo(json.dumps(summary, indent=2))
        return
    _print_summary(summary, directory, details)


def _print_summary(summary: dict[str, Any], directory: Path, details: bool) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    overview = Table(title=f"sbatch check: {summary['total']} scripts in {directory}")
    overview.add_column("RESULT")
    overview.add_column("SCRIPTS", justify="right")
    overview.add_row(Text("converts cleanly", style="green"), str(summary["clean"]))
    overview.add_row(Text("converts with warnings", style="yellow"), str(summary["warnings"]))
    overview.add_row(Text("refused", style="red"), str(summary["refused"]))
    console.print(overview)
    for key, title, column in (
        ("topUnsupported", "Top unsupported directives", "DIRECTIVE"),
        ("topErrors", "Top errors", "ERROR"),
        ("topWarnings", "Top warnings", "WARNING"),
    ):
        if summary[key]:
            table = Table(title=title)
            table.add_column(column)
            table.add_column("SCRIPTS", justify="right")
            for row in summary[key]:
                table.add_row(Text(row["name"]), str(row["scripts"]))
            console.print(table)
    if details:
        table = Table(title="Scripts")
        for column in ("SCRIPT", "STATUS", "NOTES"):
            table.add_column(column)
        for item in summary["files"]:
            notes = ", ".join(item["errors"] + item["unsupported"] + item["warnings"])
            shown = Path(item["script"])
            name = (
                str(shown.relative_to(directory))
                if shown.is_relative_to(directory)
                else item["script"]
            )
            table.add_row(Text(name), Text(item["status"]), Text(notes))
        console.print(table)
