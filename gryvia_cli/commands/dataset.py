"""`gryvia dataset list|get|create|delete|stage`: GryviaDatasets, data staged once onto a
storage backend and mounted read-only by the jobs that name it (docs/datasets.md)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import typer

from gryvia_cli.cli.objects import ObjectGroup, TableSpec
from gryvia_cli.cli.options import OutputOpt, YesOpt, check_new_name
from gryvia_cli.cli.session import Session, session
from gryvia_cli.errors import UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import OutputFormat, failure, info, render_data, render_one, success

if TYPE_CHECKING:
    from gryvia_cli.core.datasets import DatasetInputError

app = typer.Typer(
    help="Datasets: data staged once onto a storage backend, mounted read-only by jobs.",
    no_args_is_help=True,
)
NameArg = Annotated[str, typer.Argument(help="Dataset name.", show_default=False)]
DATASETS = ObjectGroup(r.DATASET, "dataset", "dataset")
DELETE_QUESTION = (
    "Delete dataset '{name}'? Its staged copies go; running jobs keep their mounts until they end."
)
"""The question `gryvia dataset delete` asks (`--yes` skips it)."""


def _input_error(exc: DatasetInputError) -> UsageError:
    return UsageError(f"{exc}; nothing was written", hint=exc.fix)


@app.command("list")
def list_datasets(
    ctx: typer.Context,
    output: OutputOpt = None,
    watch: Annotated[
        int | None,
        typer.Option(
            "-w",
            "--watch",
            metavar="N",
            help="Print the list again on every change of a dataset, and at least every N "
            "seconds (N >= 1; Ctrl-C ends it).",
            show_default=False,
            min=1,
        ),
    ] = None,
) -> None:
    """List datasets: source, backend, phase, staged version, size, files, staging progress.

    PROGRESS is what runs now: a copy's progress (`staging 45% (22.5 MiB of 50.0 MiB, 12 of
    100 files, 3.1 MiB/s, ETA 8s)`; a Ready dataset stays Ready while its next version
    copies), `checking the source`, else `-`. `-o wide` adds ACCESS (tenants and
    namespaces that may mount it, or all), CLAIM (the staged version's claim), STAGED (UTC)
    and MESSAGE; `-o json|yaml|name` prints the list as the API returns it.

    Examples:
      gryvia dataset list
      gryvia dataset list -o wide -w 5
    """
    state = session(ctx)
    if not watch:
        _print_list(state, output)
        return
    from gryvia_cli.views.streams import new_link
    from gryvia_cli.views.watching import redraw_on_changes

    link = new_link(state.access())  # waits out a stalled or cut connection (until Ctrl-C)
    redraw_on_changes(
        state.access(),
        [(r.DATASET, None)],
        lambda: link.call(lambda: _print_list(state, output)),
        watch,
    )


def _print_list(state: Session, output: OutputFormat | None) -> None:
    from gryvia_cli.core.datasets import (
        DATASET_COLUMNS,
        DATASET_WIDE_COLUMNS,
        dataset_row,
        dataset_wide_row,
    )
    from gryvia_operator.api.dataset import GryviaDataset

    table = TableSpec(DATASET_COLUMNS, dataset_row, DATASET_WIDE_COLUMNS, dataset_wide_row)
    shown = DATASETS.print_table(state, GryviaDataset, output, None, False, table)
    if shown:
        info(f"Total: {len(shown)} dataset(s)")


@app.command("get")
def get(ctx: typer.Context, name: NameArg, output: OutputOpt = None) -> None:
    """Print one dataset as YAML (the default) or JSON, status included.

    `status` holds the phase, the staged version (listing digest), its size and files, the
    claim, the copy's progress while one runs and the last source error; `gryvia dataset list
    -o wide` shows the same in a line.

    Examples:
      gryvia dataset get imagenet-mini
      gryvia dataset get imagenet-mini -o json | jq .status.progress
    """
    from gryvia_cli.core.datasets import dataset_details
    from gryvia_operator.api.dataset import GryviaDataset

    state = session(ctx)
    obj = DATASETS.read(state, name)
    now = state.now()
    render_one(
        obj,
        state.fmt(output, OutputFormat.yaml),
        DATASETS.qualified(name),
        lambda: dataset_details(DATASETS.validated(GryviaDataset, obj), now),
    )


@app.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[
        str | None,
        typer.Argument(help="Dataset name (with -f: the manifest's).", show_default=False),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            metavar="URL",
            help="s3://bucket/prefix, https://host/path/ or pvc://namespace/claim/path "
            "(required without -f).",
            show_default=False,
        ),
    ] = None,
    storage: Annotated[
        str | None,
        typer.Option(
            "--storage",
            metavar="BACKEND",
            help="The GryviaStorage the cache lives on (required without -f).",
            show_default=False,
        ),
    ] = None,
    size: Annotated[
        str | None,
        typer.Option(
            "--size",
            metavar="QUANTITY",
            help="Each staged version's claim size, e.g. 200Gi (required without -f).",
            show_default=False,
        ),
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option("--endpoint", metavar="URL", help="S3: the server's URL when not AWS."),
    ] = None,
    region: Annotated[
        str | None, typer.Option("--region", metavar="REGION", help="S3: the region.")
    ] = None,
    secret: Annotated[
        str | None,
        typer.Option(
            "--secret",
            metavar="NAME",
            help="S3: a Secret of the staging namespace with AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (unset: anonymous).",
        ),
    ] = None,
    version: Annotated[
        str | None,
        typer.Option(
            "--version", metavar="VERSION", help="A declared version: changing it stages again."
        ),
    ] = None,
    refresh_seconds: Annotated[
        int | None,
        typer.Option(
            "--refresh-seconds",
            metavar="SECONDS",
            help="Check the source this often (0: only when asked) [default: 3600].",
            show_default=False,
        ),
    ] = None,
    tenant: Annotated[
        list[str] | None,
        typer.Option("--tenant", metavar="TENANT", help="A tenant that may mount it (repeatable)."),
    ] = None,
    namespace_access: Annotated[
        list[str] | None,
        typer.Option(
            "--namespace-access",
            metavar="NAMESPACE",
            help="A namespace that may mount it (repeatable; with no --tenant either: all).",
        ),
    ] = None,
    description: Annotated[
        str | None, typer.Option("--description", metavar="TEXT", help="What it is.")
    ] = None,
    file: Annotated[
        str | None,
        typer.Option(
            "-f", "--file", metavar="FILE", help="A GryviaDataset manifest instead (`-`: stdin)."
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Ask the API server without storing; print the object."),
    ] = False,
    output: OutputOpt = None,
) -> None:
    """Create (or update) a dataset (server-side apply); the operator then stages it.

    The body is checked with the API model first: a bad value names its flag, its field and
    the fix (exit 2) and nothing is written. Running it again on an existing dataset
    replaces the fields it set. A new --version, or a changed source listing, stages a new
    version into a new claim; running jobs keep theirs.

    Examples:
      gryvia dataset create mnist --source https://example.org/mnist/ --storage nfs --size 1Gi
      gryvia dataset create imagenet-mini --source s3://datasets/imagenet-mini --size 200Gi \\
        --storage fast-nfs --endpoint http://127.0.0.1:8333 --secret s3-reader --tenant vision
      gryvia dataset create -f docs/examples/dataset.yaml --dry-run
    """
    from gryvia_cli.core.datasets import DatasetInputError, build_dataset, dataset_from_manifest

    flags = {"--source": source, "--storage": storage, "--size": size}
    if file is not None:
        from gryvia_cli.cli.files import read_one_document

        others = {
            **flags,
            "--endpoint": endpoint,
            "--region": region,
            "--secret": secret,
            "--version": version,
            "--refresh-seconds": refresh_seconds,
            "--tenant": tenant,
            "--namespace-access": namespace_access,
            "--description": description,
        }
        given = [flag for flag, value in others.items() if value is not None]
        if given:
            raise UsageError(f"-f and {', '.join(given)} do not go together")
        doc, where = read_one_document(file, "GryviaDataset")
        try:
            body = dataset_from_manifest(doc, where)
        except DatasetInputError as exc:
            raise _input_error(exc) from None
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if name is not None and name != body["metadata"]["name"]:
            raise UsageError(f"NAME {name} is not the manifest's {body['metadata']['name']}")
    else:
        if name is None:
            raise UsageError("give NAME, or -f FILE", hint="see 'gryvia dataset create --help'")
        missing = [flag for flag, value in flags.items() if value is None]
        if missing:
            raise UsageError(
                f"missing {', '.join(missing)}", hint="see 'gryvia dataset create --help'"
            )
        check_new_name(name, "dataset name")
        try:
            body = build_dataset(
                name,
                source=str(source),
                storage=str(storage),
                size=str(size),
                endpoint=endpoint,
                region=region,
                secret=secret,
                version=version,
                refresh_seconds=refresh_seconds,
                tenants=tenant,
                namespaces=namespace_access,
                description=description,
            )
        except DatasetInputError as exc:
            raise _input_error(exc) from None
    state = session(ctx)
    obj = state.access().apply(r.DATASET, body, dry_run=dry_run)
    name = body["metadata"]["name"]
    if dry_run:
        success(f"dataset {name} accepted by the API server (dry run; nothing stored)")
        render_data(obj, state.fmt(output, OutputFormat.yaml))
        return
    success(f"dataset {name} applied; follow its staging with `gryvia dataset list -w 5`")
    DATASETS.print_written(state, obj, output)


@app.command("delete")
def delete(ctx: typer.Context, name: NameArg, yes: YesOpt = False) -> None:
    """Delete a dataset: the operator deletes its staged copies; running jobs keep their
    read-only mounts until they end.

    Examples:
      gryvia dataset delete imagenet-mini --yes
    """
    state = session(ctx)
    DATASETS.delete(state, name, None, yes, question=DELETE_QUESTION.format(name=name))


@app.command("stage")
def stage(
    ctx: typer.Context,
    name: NameArg,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait", help="Follow it until staged: exit 0 on Ready, 1 on Failed (its message)."
        ),
    ] = False,
    timeout: Annotated[
        str,
        typer.Option(
            "--timeout",
            metavar="DURATION",
            help="Give up --wait after this long (90s, 30m, 2h); exit 124.",
        ),
    ] = "30m",
) -> None:
    """Ask the operator to check the source now and stage it if it changed.

    Sets the annotation gryvia.io/stage to the current UTC time; the operator lists the
    source and, when its version (listing digest, or the declared --version) is new, copies
    it into a new claim. With --wait, follows the dataset until the operator took the request
    (status.lastStageRequest) and its check and copy ended, printing the progress on stderr
    as it changes: exit 0 when Ready, 1 when Failed or the check or copy failed
    (status.sourceError; the staged version stays).

    Examples:
      gryvia dataset stage imagenet-mini
      gryvia dataset stage imagenet-mini --wait --timeout 2h
    """
    from gryvia_cli.core.datasets import stage_request
    from gryvia_operator.api.dataset import ANNOTATION_STAGE
    from gryvia_operator.api.helpers import parse_duration

    try:
        seconds = parse_duration(timeout, field="--timeout")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    state = session(ctx)
    before = (DATASETS.read(state, name).get("metadata") or {}).get("annotations") or {}
    value, patch = stage_request(state.now())
    if before.get(ANNOTATION_STAGE) == value:  # asked twice in one second: a new value
        time.sleep(1.0)
        value, patch = stage_request(state.now())
    state.access().merge_patch(r.DATASET, name, None, patch)
    success(f"dataset {name}: staging requested at {value}")
    if wait:
        _wait_staged(state, name, value, seconds)


def _wait_staged(state: Session, name: str, requested: str, seconds: int) -> None:
    """Poll the dataset until the stage request `requested` is done (`stage_wait`), the
    progress on one updating line (a TTY) or one line per change. Raises GryviaError (exit
    1) on Failed or Invalid, WaitTimeoutError (exit 124) after `seconds`."""
    from gryvia_cli.core.datasets import stage_wait
    from gryvia_cli.errors import GryviaError, WaitTimeoutError
    from gryvia_cli.output import spinner
    from gryvia_cli.views import streams
    from gryvia_operator.api.dataset import GryviaDataset

    access = state.access()
    deadline = streams.deadline_after(seconds)
    link = streams.new_link(access)
    hint = f"see 'gryvia dataset get {name}'"
    with spinner(f"{name}: waiting for the operator to check the source") as update:
        while True:
            obj = link.call(
                lambda: DATASETS.read(state, name), deadline=deadline, what=name, hint=hint
            )
            where = stage_wait(DATASETS.validated(GryviaDataset, obj), requested)
            if where.done:
                break
            update(f"{name}: {where.text}")
            if deadline is not None and time.monotonic() > deadline:
                raise WaitTimeoutError(
                    f"dataset {name} is not staged at the wait timeout ({where.text}); stopped "
                    "waiting (the staging goes on)",
                    hint=hint,
                )
            time.sleep(streams.POLL_SECONDS)
    if where.ok:
        success(f"dataset {name} Ready")
        return
    failure(f"dataset {name} {where.text}" + (f": {where.message}" if where.message else ""))
    raise GryviaError(f"dataset {name} did not stage", hint=hint)
