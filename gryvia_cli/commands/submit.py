"""`gryvia submit`: create GryviaAIJobs from manifests or a Slurm batch script.

Prints a placement plan first, then optionally follows the phase and the first pod's log.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gryvia_cli.cli.optional import optional_value
from gryvia_cli.cli.options import NamespaceOpt, NodeGpusOpt, OutputOpt, node_gpu_shapes
from gryvia_cli.cli.session import Session, session
from gryvia_cli.errors import (
    InvalidInputError,
    NeverRunsError,
    UsageError,
)
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    failure,
    info,
    render_data,
    render_names,
    success,
    warn,
)

if TYPE_CHECKING:
    pass

app = typer.Typer()


def load_jobs(files: list[str]) -> list[dict[str, Any]]:
    """Read and validate every document of `files` (`-` is stdin); return the job objects
    (`gryvia.jobs.load_jobs`, as the Python API does). Prints each problem, then raises
    InvalidInputError; warnings go to stderr."""
    from gryvia.jobs import InvalidManifestError
    from gryvia.jobs import load_jobs as load

    try:
        return load(files, warn)
    except InvalidManifestError as exc:
        for line in exc.problems:
            failure(line)
        raise InvalidInputError(exc.message, hint=exc.hint) from None


def print_plans(state: Session, jobs: list[dict[str, Any]], namespace: str) -> list[str]:
    """Print each job's GPU request, the nodes that could take it now and its cost estimate
    (stderr); jobs without a namespace of their own go to `namespace`. Return why each job
    that can never fit never would (`api.pending.never_fits`: `name: reason`)."""
    from gryvia.jobs import plan_jobs

    notes: list[str] = []
    plans = plan_jobs(state, jobs, namespace, notes)
    for text in notes:
        warn(f"plan may be incomplete: {text}")
    for item in plans:
        for line in item.plan.lines():
            info(line)
        if item.plan.warning:
            warn(item.plan.warning)
        if item.estimate is not None:
            for line in item.estimate.lines():
                info(line)
            for text in item.estimate.warnings:
                warn(text)
    return [item.never for item in plans if item.never]


tune_command = optional_value("--dry-run", "client", ("client", "server"))
"""`--dry-run` alone means `--dry-run=client` (read by the root group when it loads submit)."""


@app.command("submit", rich_help_panel="Workloads")
def submit(
    ctx: typer.Context,
    file: Annotated[
        list[str] | None,
        typer.Option(
            "-f",
            "--file",
            metavar="FILE",
            help="Job manifest (repeatable; multi-document YAML; `-` is stdin).",
        ),
    ] = None,
    sbatch: Annotated[
        str | None,
        typer.Option(
            "--sbatch",
            metavar="SCRIPT",
            help="Import a Slurm batch script instead of -f (one job per array index).",
        ),
    ] = None,
    image: Annotated[
        str | None, typer.Option("--image", metavar="IMAGE", help="Container image for --sbatch.")
    ] = None,
    dry_run: Annotated[
        str | None,
        typer.Option(
            "--dry-run",
            metavar="[client|server]",
            help="client (the default): validate and print the jobs as YAML, no cluster "
            "needed. server: the same as --explain.",
        ),
    ] = None,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Create nothing: the server's dry run, placement now, quota and budget after "
            "the job, the start estimate and cost; exit 0 start now, 3 never, 4 would wait.",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Create jobs that can never fit anyway (they wait as Pending)."
        ),
    ] = False,
    wait: Annotated[
        bool,
        typer.Option(
            "-w", "--wait", help="Follow the phase until the job ends; exit 0 only if it Succeeded."
        ),
    ] = False,
    logs: Annotated[
        bool, typer.Option("--logs", help="Stream the first pod's log once it runs.")
    ] = False,
    wait_timeout: Annotated[
        str,
        typer.Option(
            "--wait-timeout",
            metavar="DURATION",
            help="Give up --wait/--logs after this long in all (90s, 30m, 24h); exit 124.",
        ),
    ] = "24h",
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            metavar="NAME",
            help="Kubernetes name of an --sbatch job or array (default: the Slurm job name, "
            "with a generated suffix when taken).",
        ),
    ] = None,
    node_gpus: NodeGpusOpt = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Submit jobs from manifests or a Slurm batch script.

    Validates every document, shows a placement plan, creates the jobs, then optionally
    follows them.

    Before creating, prints each job's GPU request and the nodes that could take it now to
    stderr, with a warning when none can, and its estimated cost: GPUs x the catalog price
    of its GPU type (the tenant's allowed SKUs in a tenant-NAME namespace), per hour and for
    its timeout, with a warning when that would cross the team's monthly budget. Created
    names go to stdout (`-o json`: objects).

    Fail fast: a job that can never fit (a GPU type no node and no catalog SKU has, more
    GPUs per pod than any node of its type, more nodes than exist, more GPUs than its quota)
    is not created: exit 3, unless --force.

    --explain (or --dry-run=server) creates nothing and says what would happen: the API
    server's dry run (schema and webhook), the nodes that could take it now, the quota and
    budget after it, the blocker and start estimate the operator would write, the cost per
    hour and for its timeout. Exit 0 when every job would start now, 3 when one would never
    run, 4 when one would wait. -o json: the document in docs/pending.md.

    Examples:
      gryvia submit -f examples/train-ddp.yaml --wait --logs
      gryvia submit -f job.yaml --explain -o json
      gryvia submit -f jobs.yaml -n team-a
      gryvia submit --sbatch train.sh --image nvcr.io/nvidia/pytorch:24.05-py3 --dry-run
    """
    from gryvia_operator.api import parse_duration

    state = session(ctx)
    if bool(file) == bool(sbatch):
        raise UsageError(
            "pass exactly one of -f/--file and --sbatch", hint="gryvia submit -f job.yaml"
        )
    if (image or name or node_gpus) and not sbatch:
        raise UsageError("--image, --name and --node-gpus are only used with --sbatch")
    try:
        timeout = parse_duration(wait_timeout, field="--wait-timeout")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    explicit_ns = namespace or state.namespace
    imported = None
    if sbatch:
        from gryvia_cli.views.sbatchjobs import import_sbatch

        shapes = node_gpu_shapes(node_gpus)
        imported = import_sbatch(sbatch, image, explicit_ns, state, name, node_gpus=shapes)
        jobs = [dict(job) for job in imported.conversion.jobs]
    else:
        jobs = load_jobs(file or [])
    fmt = state.fmt(output, OutputFormat.name)
    if dry_run not in (None, "client", "server"):
        raise UsageError(f"--dry-run: expected client or server, not {dry_run!r}")
    if dry_run == "client":
        _print_dry_run(jobs, fmt, imported.conversion.runtime if imported else None)
        return
    ns = state.resolve_namespace(namespace)
    for job in jobs:
        doc_ns = (job.get("metadata") or {}).get("namespace")
        if doc_ns and explicit_ns and doc_ns != explicit_ns:
            raise UsageError(
                f"job {job['metadata'].get('name')} is for namespace {doc_ns}, not {explicit_ns}"
            )
    if explain or dry_run == "server":
        from gryvia_cli.views.explain import explain_manifests, render_explanations

        items = explain_manifests(state, jobs, ns)  # as Client.explain
        raise typer.Exit(render_explanations(items, state.fmt(output)))
    never = print_plans(state, jobs, ns)
    if never and not force:
        for line in never:
            failure(f"would never run: {line}")
        raise NeverRunsError(
            f"{len(never)} job(s) can never fit this cluster; nothing was submitted",
            hint="fix the GPU type or size, or pass --force to create them anyway",
        )
    from gryvia.jobs import create_jobs

    created_objects: list[Any] = []
    created: list[tuple[str, str]] = []
    if imported is not None:
        from gryvia_cli.views.sbatchjobs import claim_name, create_sbatch_jobs, target_namespace

        target = target_namespace(imported, ns)
        conversion = claim_name(state, imported, target)
        created_objects = create_sbatch_jobs(state, conversion, target)
        created = [(target, str(o.get("metadata", {}).get("name"))) for o in created_objects]
    for ref in create_jobs(state.access(), jobs, ns) if imported is None else []:
        created.append((ref.namespace, ref.name))
        created_objects.append(ref.object)
        success(f"job {ref.name} submitted to namespace {ref.namespace}")
    if fmt in MACHINE_FORMATS:
        render_data(
            created_objects[0]
            if len(created_objects) == 1
            else {"apiVersion": "v1", "kind": "List", "items": created_objects},
            fmt,
        )
    else:
        render_names([f"{r.AIJOB.qualified}/{name}" for _, name in created])
    if wait or logs:
        from gryvia_cli.views.submitfollow import follow

        follow(state, created, wait, logs, float(timeout))


def _print_dry_run(
    jobs: list[dict[str, Any]], fmt: OutputFormat, runtime: dict[str, Any] | None = None
) -> None:
    import yaml

    objects = [*jobs, *([runtime] if runtime is not None else [])]  # what submit would create
    if runtime is not None:
        name = runtime["metadata"]["name"]
        info(f"dry run: the jobs read the script and runtime from ConfigMap {name} (printed last)")
    if fmt is OutputFormat.json:
        one = len(objects) == 1
        render_data(
            objects[0] if one else {"apiVersion": "v1", "kind": "List", "items": objects}, fmt
        )
        return
    for obj in objects:
        sys.stdout.write("---\n" + yaml.safe_dump(obj, sort_keys=False))
    info(f"dry run: {len(jobs)} job(s) valid, nothing created")
