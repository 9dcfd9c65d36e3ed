"""`gryvia sbatch`: import Slurm batch scripts as GryviaAIJobs (convert one, check a folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gryvia_cli.cli.options import OutputOpt, names_of
from gryvia_cli.cli.session import session
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    OutputFormat,
    info,
    render_data,
    render_documents,
    render_names,
    render_table,
    section,
)
from gryvia_cli.sbatch.convert import convert_file
from gryvia_cli.sbatch.report import render_text, summarize

app = typer.Typer(
    help="Import Slurm batch scripts as GryviaAIJobs (no cluster needed).",
    no_args_is_help=True,
)

DEFAULT_PATTERNS = ("*.sh", "*.sbatch", "*.slurm", "*.job", "*.bash", "*.batch")
JOB_COLUMNS = ("name", "type", "gpus", "image")
SUMMARY_ROWS = (
    ("clean", "converts cleanly", "ok"),
    ("warnings", "converts with warnings", "warn"),
    ("refused", "refused", "error"),
)
TOP_LISTS = (
    ("topUnsupported", "Top unsupported directives", "directive"),
    ("topErrors", "Top errors", "error"),
    ("topWarnings", "Top warnings", "warning"),
)


@app.command()
def convert(
    ctx: typer.Context,
    script: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="The batch script.")
    ],
    image: Annotated[
        str | None,
        typer.Option("--image", help="Container image (wins over #SBATCH --container-image)."),
    ] = None,
    output: OutputOpt = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", help="Set metadata.namespace on the jobs.")
    ] = None,
) -> None:
    """Print the GryviaAIJobs for SCRIPT and a migration report (exit 1, no jobs, on errors).

    The report goes to stderr. -o yaml (the default) prints the jobs as a YAML stream; json
    prints {jobs, report}; name prints gryviaaijob.gryvia.io/NAME per job; table and wide a
    line per job (NAME, TYPE, GPUS, IMAGE).

    Examples:
      gryvia sbatch convert train.sh --image nvcr.io/nvidia/pytorch:24.05-py3
      gryvia sbatch convert train.sh --image img -o json | jq .report
    """
    from gryvia_cli.core.jobs import gpu_text, summarize_job

    fmt = session(ctx).fmt(output, default=OutputFormat.yaml)
    conversion = convert_file(script, image=image, namespace=namespace)
    jobs = [dict(job) for job in conversion.jobs]
    if fmt is OutputFormat.json:
        render_data({"jobs": jobs, "report": conversion.report}, fmt)
    elif fmt is OutputFormat.yaml:
        render_documents(jobs)
    elif fmt is OutputFormat.name:
        render_names(names_of(r.AIJOB, jobs))
    elif jobs:
        summaries = [summarize_job(job) for job in jobs]
        render_table(JOB_COLUMNS, [[s.name, s.job_type, gpu_text(s), s.image] for s in summaries])
    for line in render_text(conversion.report):
        info(line)
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
    ctx: typer.Context,
    directory: Annotated[
        Path, typer.Argument(exists=True, file_okay=False, help="Folder of batch scripts.")
    ],
    output: OutputOpt = None,
    pattern: Annotated[
        list[str] | None,
        typer.Option("--pattern", help="File name pattern (repeatable); default *.sh, *.sbatch, …"),
    ] = None,
    recursive: Annotated[
        bool, typer.Option("-r", "--recursive", help="Descend into folders.")
    ] = False,
    details: Annotated[
        bool, typer.Option("--details", help="List every script (as -o wide).")
    ] = False,
) -> None:
    """Try to import every script in DIRECTORY and summarise: clean, with warnings, refused.

    -o table (the default) prints the counts and the most common problems; wide (or
    --details) adds a line per script; json and yaml print the summary {total, clean,
    warnings, refused, topUnsupported, topWarnings, topErrors, files}; name prints the
    scripts' paths.

    Examples:
      gryvia sbatch check ~/slurm-jobs
      gryvia sbatch check ~/slurm-jobs -r -o json
    """
    fmt = session(ctx).fmt(output)
    scripts = find_scripts(directory, pattern or list(DEFAULT_PATTERNS), recursive)
    reports = [convert_file(path, require_image=False).report for path in scripts]
    summary = summarize(reports)
    if fmt in (OutputFormat.json, OutputFormat.yaml):
        render_data(summary, fmt)
    elif fmt is OutputFormat.name:
        render_names([str(item["script"]) for item in summary["files"]])
    else:
        _print_summary(summary, directory, details or fmt is OutputFormat.wide)


def _print_summary(summary: dict[str, Any], directory: Path, details: bool) -> None:
    from gryvia_cli.core.cells import Marked

    section(f"sbatch check: {summary['total']} scripts in {directory}")
    render_table(
        ("result", "scripts"),
        [[Marked(label, marker), summary[key]] for key, label, marker in SUMMARY_ROWS],
    )
    for key, title, column in TOP_LISTS:
        if summary[key]:
            section(title)
            render_table(
                (column, "scripts"), [[row["name"], row["scripts"]] for row in summary[key]]
            )
    if details:
        section("Scripts")
        rows = []
        for item in summary["files"]:
            notes = ", ".join(item["errors"] + item["unsupported"] + item["warnings"])
            shown = Path(item["script"])
            name = str(shown.relative_to(directory) if shown.is_relative_to(directory) else shown)
            rows.append([name, item["status"], notes])
        render_table(("script", "status", "notes"), rows)
