"""`gryvia storage create|list|get|delete`: GryviaStorages, the named storage backends jobs name
in `spec.storage` (docs/storage.md)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gryvia_cli.cli.objects import ObjectGroup
from gryvia_cli.cli.options import OutputOpt, YesOpt, check_new_name
from gryvia_cli.cli.session import session
from gryvia_cli.core.storage import (
    STORAGE_COLUMNS,
    STORAGE_WIDE_COLUMNS,
    storage_details,
    storage_row,
    storage_wide_row,
)
from gryvia_cli.errors import ConflictError, UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import OutputFormat, render_data, render_table, success

app = typer.Typer(
    help="Storage backends: the StorageClasses jobs name, their provisioner's health, quotas.",
    no_args_is_help=True,
)
NameArg = Annotated[str, typer.Argument(help="Storage backend name.", show_default=False)]
STORAGES = ObjectGroup(r.STORAGE, "storage", "storage")
_HINT = "see 'gryvia storage create --help' and docs/storage.md"


@app.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[
        str | None,
        typer.Argument(help="Storage backend name (not with -f).", show_default=False),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend",
            metavar="BACKEND",
            help="local-path, nfs, csi or existing (required without -f).",
            show_default=False,
        ),
    ] = None,
    storage_class: Annotated[
        str | None,
        typer.Option("--class", metavar="CLASS", help="StorageClass name [default: NAME]."),
    ] = None,
    provisioner: Annotated[
        str | None,
        typer.Option("--provisioner", metavar="DRIVER", help="csi: the CSI driver (required)."),
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option(
            "--endpoint", metavar="ADDR", help="nfs: server:/export (required); else informative."
        ),
    ] = None,
    capacity: Annotated[
        str | None,
        typer.Option("--capacity", metavar="QUANTITY", help="Declared capacity, e.g. 100Ti."),
    ] = None,
    access_mode: Annotated[
        list[str] | None,
        typer.Option(
            "--access-mode",
            metavar="MODE",
            help="ReadWriteMany, ReadWriteOnce, ReadOnlyMany or ReadWriteOncePod; repeatable, "
            "the first is used for job claims [default: ReadWriteMany].",
        ),
    ] = None,
    mount_option: Annotated[
        list[str] | None,
        typer.Option("--mount-option", metavar="OPT", help="Class mountOptions; repeatable."),
    ] = None,
    quota: Annotated[
        list[str] | None,
        typer.Option(
            "--quota",
            metavar="TENANT=QUANTITY[/CLAIMS]",
            help="A tenant's limit per namespace (e.g. vision=2Ti/20); repeatable.",
        ),
    ] = None,
    rdma: Annotated[bool, typer.Option("--rdma", help="Reached over RDMA (informative).")] = False,
    probe_seconds: Annotated[
        int | None,
        typer.Option(
            "--probe-seconds",
            metavar="SECONDS",
            help="Seconds between probes of the provisioner, 10..86400 [default: 300].",
            show_default=False,
        ),
    ] = None,
    file: Annotated[
        str | None,
        typer.Option(
            "-f", "--filename", metavar="FILE", help="A GryviaStorage manifest ('-': stdin)."
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="The API server checks it and prints what it would store; no write."
        ),
    ] = False,
    output: OutputOpt = None,
) -> None:
    """Create a storage backend (GryviaStorage, cluster-scoped) that jobs name in spec.storage.

    The options are checked with the API model first: a bad value is an error naming the
    field and its option (exit 2) and nothing is sent. local-path and nfs make their
    StorageClass (owned by the backend), csi makes one of --provisioner, existing only checks a
    class made elsewhere. The operator probes the provisioner every --probe-seconds and keeps
    one ResourceQuota per tenant namespace for each --quota.

    Examples:
      gryvia storage create scratch --backend local-path --capacity 2Ti
      gryvia storage create fast-nfs --backend nfs --endpoint nfs-1:/export/ai \\
        --mount-option nfsvers=4.1 --quota vision=2Ti/20 --capacity 100Ti
      gryvia storage create sandbox --backend existing --class local-path --dry-run
      gryvia storage create -f docs/examples/storage.yaml
    """
    state = session(ctx)
    body = _body(name, backend, file, locals())
    created = body["metadata"]["name"]
    if dry_run:
        obj = state.access().create(r.STORAGE, body, None, dry_run=True)
        success(f"storage {created} checked by the API server (dry run, nothing stored)")
        render_data(obj, state.fmt(output, OutputFormat.yaml))
        return
    try:
        obj = state.access().create(r.STORAGE, body, None)
    except ConflictError as exc:
        raise ConflictError(
            exc.message,
            hint=f"change it with `gryvia apply -f FILE`, or `gryvia storage delete {created}`",
        ) from None
    success(f"storage {created} created; jobs name it with spec.storage: {created}")
    STORAGES.print_written(state, obj, output)


def _body(
    name: str | None, backend: str | None, file: str | None, opts: dict[str, Any]
) -> dict[str, Any]:
    """The body to send: from `-f` (no NAME or spec options with it) or from the options;
    UsageError naming the field and option when the model refuses it."""
    from gryvia_cli.core.storage import build_storage, storage_from_manifest

    if file is not None:
        extra = [k for k in ("name", "backend") if opts[k] is not None]
        if extra:
            raise UsageError("-f takes the whole backend from the file: drop NAME and --backend")
        from gryvia_cli.cli.files import read_one_document

        doc, source = read_one_document(file, "GryviaStorage")
        try:
            return storage_from_manifest(doc, source)
        except ValueError as exc:
            raise UsageError(str(exc), hint=_HINT) from None
    if name is None or backend is None:
        raise UsageError(
            "give NAME and --backend (local-path, nfs, csi or existing), or -f FILE", hint=_HINT
        )
    check_new_name(name, "storage name")
    try:
        return build_storage(
            name,
            backend=backend,
            storage_class=opts["storage_class"],
            provisioner=opts["provisioner"],
            endpoint=opts["endpoint"],
            capacity=opts["capacity"],
            access_modes=opts["access_mode"],
            mount_options=opts["mount_option"],
            quotas=opts["quota"],
            rdma=opts["rdma"],
            probe_seconds=opts["probe_seconds"],
        )
    except ValueError as exc:
        raise UsageError(str(exc), hint=_HINT) from None


@app.command("list")
def list_storages(ctx: typer.Context, output: OutputOpt = None) -> None:
    """List storage backends: class, capacity, used, free, claims, whether the provisioner
    answers (answering, not answering, unknown before the first probe), and the phase.

    `-o wide` adds RDMA, PROBE (the last probe), AGE and MESSAGE (for a NotReady or Invalid
    backend: what is wrong and the fix); `-o json|yaml` prints the GryviaStorageList.

    Examples:
      gryvia storage list
      gryvia storage list -o wide
    """
    from gryvia_operator.api.storage import GryviaStorage

    state = session(ctx)
    fmt = state.fmt(output)
    empty = "No storage backends (GryviaStorage) found; create one with `gryvia storage create`."
    found = STORAGES.listed(state, GryviaStorage, fmt, empty=empty)
    if found is None:
        return
    found.sort(key=lambda s: s.name)
    now = state.now()
    if fmt is OutputFormat.wide:
        render_table(STORAGE_WIDE_COLUMNS, [storage_wide_row(s, now) for s in found])
    else:
        render_table(STORAGE_COLUMNS, [storage_row(s, now) for s in found])


@app.command("get")
def get(ctx: typer.Context, name: NameArg, output: OutputOpt = None) -> None:
    """Print one storage backend as the API server stores it (YAML unless -o says otherwise).

    `-o table` prints it for people: class, capacity and use, quotas, provisioner, last probe
    and status.

    Examples:
      gryvia storage get fast-nfs
      gryvia storage get fast-nfs -o json | jq .status.probe
      gryvia storage get fast-nfs -o table
    """
    from gryvia_cli.output import render_one
    from gryvia_operator.api.storage import GryviaStorage

    state = session(ctx)
    fmt = state.fmt(output, OutputFormat.yaml)
    obj = STORAGES.read(state, name)
    now = state.now()
    render_one(
        obj,
        fmt,
        STORAGES.qualified(name),
        lambda: storage_details(STORAGES.validated(GryviaStorage, obj), now),
    )


@app.command("delete")
def delete(ctx: typer.Context, name: NameArg, yes: YesOpt = False) -> None:
    """Delete a storage backend; a StorageClass Gryvia made for it goes with it.

    Jobs that name it keep their claims; new jobs naming it are denied once its class is
    gone (backend existing: they get the class as it is, with a warning). Asks first unless
    --yes or stdin is not a terminal.

    Examples:
      gryvia storage delete scratch --yes
    """
    STORAGES.delete(
        session(ctx),
        name,
        None,
        yes,
        question=f"Delete storage '{name}'? Jobs that name it keep their claims; new jobs "
        "naming it are denied once its class is gone.",
        done=f"storage {name} deleted",
    )
