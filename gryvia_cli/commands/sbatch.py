"""`gryvia sbatch`: import Slurm batch scripts as GryviaAIJobs (convert one, check a folder)."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gryvia_cli.cli.options import (
    NamespaceOpt,
    NodeGpusOpt,
    OutputOpt,
    names_of,
    node_gpu_shapes,
)
from gryvia_cli.cli.session import session
from gryvia_cli.errors import UsageError
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
from gryvia_cli.sbatch.model import ImportSettings
from gryvia_cli.sbatch.report import render_text, summarize

if TYPE_CHECKING:
    from gryvia_cli.sbatch.workflow import WorkflowImport

app = typer.Typer(
    help="Import Slurm batch scripts as GryviaAIJobs (no cluster needed).",
    no_args_is_help=True,
)

SNIFF_BYTES = 64 * 1024
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
    scripts: ScriptsArg,
    image: ImageOpt = None,
    output: OutputOpt = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", help="Set metadata.namespace on the jobs.")
    ] = None,
    node_gpus: NodeGpusOpt = None,
    name: WorkflowNameOpt = None,
) -> None:
    """Print the GryviaAIJobs for SCRIPT and a migration report (exit 1, no jobs, on errors).

    Several scripts become one GryviaWorkflow, a step per script: `#SBATCH
    --dependency=afterok:NAME` (afterany, afternotok) names another script by its
    --job-name or file name (with or without extension), since Slurm job ids are only known
    at submit time; -o yaml prints the runtime ConfigMaps and the workflow, json {runtimes,
    workflow, reports}, table a line per step (docs/workflows.md). A heterogeneous job
    (`#SBATCH hetjob`: a CPU launcher plus GPU workers) becomes a workflow of two steps,
    `launcher` and `workers`, that start together (examples/sbatch/README.md).

    The report goes to stderr. -o yaml (the default) prints the runtime ConfigMap (the batch
    script and the in-pod runtime, once per job or array) and the jobs as a YAML stream; json
    prints {runtime, jobs, report}; name prints configmap/NAME and gryviaaijob.gryvia.io/NAME
    per job; table and wide a line per job (NAME, TYPE, GPUS, IMAGE).

    Examples:
      gryvia sbatch convert train.sh --image nvcr.io/nvidia/pytorch:24.05-py3
      gryvia sbatch convert train.sh --image img -o json | jq .report
    """
    from gryvia_cli.core.jobs import gpu_text, summarize_job

    fmt = session(ctx).fmt(output, default=OutputFormat.yaml)
    settings = import_settings(ctx, node_gpus)
    if len(scripts) > 1 or is_hetjob_file(scripts[0]):
        from gryvia_cli.views.sbatchworkflow import print_workflow_import

        imported = convert_workflow_files(scripts, name, image, namespace, settings)
        print_workflow_import(imported, fmt)
        if not imported.ok:
            raise typer.Exit(1)
        return
    if name is not None:
        raise UsageError("--name names the workflow of several scripts; pass two or more")
    script = scripts[0]
    conversion = convert_file(script, image=image, namespace=namespace, settings=settings)
    jobs = [dict(job) for job in conversion.jobs]
    if fmt is OutputFormat.json:
        render_data({"runtime": conversion.runtime, "jobs": jobs, "report": conversion.report}, fmt)
    elif fmt is OutputFormat.yaml:
        render_documents(conversion.documents)
    elif fmt is OutputFormat.name:
        runtime = [conversion.runtime] if conversion.runtime else []
        render_names(names_of(r.CONFIG_MAP, runtime) + names_of(r.AIJOB, jobs))
    elif jobs:
        summaries = [summarize_job(job) for job in jobs]
        render_table(JOB_COLUMNS, [[s.name, s.job_type, gpu_text(s), s.image] for s in summaries])
    for line in render_text(conversion.report):
        info(line)
    if not conversion.ok:
        raise typer.Exit(1)


ScriptsArg = Annotated[
    list[Path],
    typer.Argument(
        exists=True,
        dir_okay=False,
        readable=True,
        metavar="SCRIPT...",
        help="The batch script; several become one workflow.",
    ),
]
ImageOpt = Annotated[
    str | None,
    typer.Option("--image", help="Container image (wins over #SBATCH --container-image)."),
]
WorkflowNameOpt = Annotated[
    str | None,
    typer.Option(
        "--name",
        help="Workflow name, with several scripts [default: the first script's file name].",
    ),
]


def convert_workflow_files(
    scripts: list[Path],
    name: str | None,
    image: str | None,
    namespace: str | None,
    settings: ImportSettings,
    submission_id: str | None = None,
) -> WorkflowImport:
    """`convert_workflow` on the scripts' bytes; one heterogeneous job script
    (`#SBATCH hetjob`) becomes the workflow of `hetjob.convert_hetjob`."""
    from gryvia_cli.sbatch.workflow import convert_workflow

    if len(scripts) == 1 and is_hetjob_file(scripts[0]):
        from gryvia_cli.sbatch.hetjob import convert_hetjob

        return convert_hetjob(
            scripts[0].read_bytes(), str(scripts[0]), name=name, image=image,
            namespace=namespace, settings=settings, submission_id=submission_id,
        )  # fmt: skip

    return convert_workflow(
        [(path.read_bytes(), str(path)) for path in scripts],
        name=name, image=image, namespace=namespace, settings=settings,
        submission_id=submission_id,
    )  # fmt: skip


@app.command()
def submit(
    ctx: typer.Context,
    scripts: ScriptsArg,
    image: ImageOpt = None,
    name: WorkflowNameOpt = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check and print; create nothing.")
    ] = False,
) -> None:
    """Submit several batch scripts as one GryviaWorkflow (their --dependency between them).

    As `gryvia sbatch convert SCRIPT...`, then creates the runtime ConfigMaps and the
    workflow (owner of the ConfigMaps); its first run starts at once. Nothing is created
    when a script does not import. Needs the operator flag --enable-workflows. One script
    alone: `gryvia submit --sbatch SCRIPT`, unless it is a heterogeneous job (`#SBATCH
    hetjob`), which is submitted here as a workflow of two steps that start together.

    Examples:
      gryvia sbatch submit prep.sh train.sh eval.sh --image python:3.12
      gryvia sbatch submit a.sh b.sh --name pipeline -n ml --dry-run
    """
    from gryvia_cli.views.sbatchworkflow import submit_workflow_import

    if len(scripts) < 2 and not is_hetjob_file(scripts[0]):
        raise UsageError(
            "sbatch submit takes two or more scripts (a workflow); submit one script with "
            "`gryvia submit --sbatch SCRIPT`"
        )
    state = session(ctx)
    settings = ImportSettings(max_array_size=state.settings().sbatch_max_array_size)
    target = state.resolve_namespace(namespace)
    submission = secrets.token_hex(4)
    imported = convert_workflow_files(scripts, name, image, target, settings, submission)
    submit_workflow_import(state, imported, output, dry_run=dry_run)


def is_hetjob_file(path: Path) -> bool:
    """True when the script at `path` is a heterogeneous job (`#SBATCH hetjob`)."""
    from gryvia_cli.sbatch.hetjob import is_hetjob

    return is_hetjob(path.read_bytes())


def is_batch_script(path: Path) -> bool:
    """True when the file starts with `#!` and has an `#SBATCH` line in its first 64 KiB
    (what a batch script is, whatever its name: `.slrm`, `.sub`, `.sl`, none)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return False
    return head.startswith(b"#!") and (b"\n#SBATCH" in head or b"\n#SLURM" in head)


def find_scripts(
    directory: Path, patterns: list[str] | None, recursive: bool
) -> tuple[list[Path], list[Path]]:
    """(scripts, skipped): files matching any pattern, or, without patterns, every file that
    `is_batch_script`; `skipped` lists the other files looked at. Both sorted."""
    globs = patterns or ["*"]
    found = {
        path
        for pattern in globs
        for path in (directory.rglob(pattern) if recursive else directory.glob(pattern))
        if path.is_file()
    }
    if patterns:
        return sorted(found), []
    scripts = sorted(path for path in found if is_batch_script(path))
    return scripts, sorted(found - set(scripts))


def import_settings(ctx: typer.Context, node_gpus: list[str] | None) -> ImportSettings:
    """The importer's site settings: MaxArraySize from the CLI settings, `--node-gpus`."""
    limit = session(ctx).settings().sbatch_max_array_size
    return ImportSettings(max_array_size=limit, node_gpus=node_gpu_shapes(node_gpus))


@app.command()
def check(
    ctx: typer.Context,
    directory: Annotated[
        Path, typer.Argument(exists=True, file_okay=False, help="Folder of batch scripts.")
    ],
    output: OutputOpt = None,
    pattern: Annotated[
        list[str] | None,
        typer.Option(
            "--pattern",
            help="File name pattern (repeatable); default: every file that starts with #! and "
            "has #SBATCH lines.",
        ),
    ] = None,
    recursive: Annotated[
        bool, typer.Option("-r", "--recursive", help="Descend into folders.")
    ] = False,
    details: Annotated[
        bool, typer.Option("--details", help="List every script (as -o wide).")
    ] = False,
    node_gpus: NodeGpusOpt = None,
) -> None:
    """Try to import every script in DIRECTORY and summarise: clean, with warnings, refused.

    Without --pattern a batch script is any file that starts with #! and has #SBATCH lines,
    whatever its name (.sh, .slrm, .sub, none); the other files are listed as skipped.
    -o table (the default) prints the counts, the most common problems and the skipped
    files; wide (or --details) adds a line per script; json and yaml print the summary
    {total, clean, warnings, refused, topUnsupported, topWarnings, topErrors, files,
    skipped}; name prints the scripts' paths.

    Examples:
      gryvia sbatch check ~/slurm-jobs
      gryvia sbatch check ~/slurm-jobs -r -o json
    """
    fmt = session(ctx).fmt(output)
    settings = import_settings(ctx, node_gpus)
    scripts, skipped = find_scripts(directory, pattern, recursive)
    reports = [
        convert_file(path, require_image=False, settings=settings).report for path in scripts
    ]
    summary = summarize(reports)
    summary["skipped"] = [str(path) for path in skipped]
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
    if summary["skipped"]:
        section(f"Skipped {len(summary['skipped'])} file(s): no #! line or no #SBATCH lines")
        render_table(("file",), [[_relative(Path(path), directory)] for path in summary["skipped"]])
    if details:
        section("Scripts")
        rows = []
        for item in summary["files"]:
            notes = ", ".join(item["errors"] + item["unsupported"] + item["warnings"])
            rows.append([_relative(Path(item["script"]), directory), item["status"], notes])
        render_table(("script", "status", "notes"), rows)


def _relative(path: Path, directory: Path) -> str:
    return str(path.relative_to(directory) if path.is_relative_to(directory) else path)
