"""Submitting an imported Slurm script: convert it (with the cluster's GPU nodes when
`--exclusive` needs them), claim a free name, create the runtime ConfigMap, the jobs, and make
the jobs the ConfigMap's owners.

Slurm job names need not be unique, so a name already taken gets a generated suffix
(`train` -> `train-3f2a`); only an explicit `--name` that is taken is an error. The
ConfigMap is created (not applied) first: it is the claim on the name, so two submissions of
one script never share or overwrite a runtime.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from gryvia_cli.errors import ConflictError, InvalidInputError, NotFoundError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import failure, info, success, warn
from gryvia_cli.sbatch.convert import Conversion, convert_file
from gryvia_cli.sbatch.model import ImportSettings, Severity

if TYPE_CHECKING:
    from gryvia_cli.connection import Connection

T = TypeVar("T")

ATTEMPTS = 6


@dataclass
class SbatchImport:
    """A converted script and how to convert it again under another name."""

    script: str
    conversion: Conversion
    redo: Callable[[str], Conversion]
    explicit_name: bool


def import_sbatch(
    script: str,
    image: str | None,
    namespace: str | None,
    state: Connection | None = None,
    name: str | None = None,
    *,
    node_gpus: dict[str, int] | None = None,
) -> SbatchImport:
    """Convert `script`; print its findings to stderr once. With `state`, MaxArraySize comes
    from the settings, a script whose `--exclusive` needs the GPUs per node is converted
    again with the cluster's GPU nodes (unless `node_gpus`, GPUs per node by type, says them),
    and one with `--account` with the tenants' names. The submitting shell's environment goes
    to `--export` (`sbatch/export.py`: what the script reads, minus a deny list, said).
    Raises InvalidInputError when it does not convert."""
    from gryvia_cli.views.reads import read_supply

    path = Path(script)
    if not path.is_file():
        raise InvalidInputError(f"batch script {script} does not exist")
    shell = dict(os.environ)  # what --export=ALL passes from (sbatch/export.py)
    settings = ImportSettings(node_gpus=dict(node_gpus or {}), submit_env=shell)
    if state is not None:
        limit = state.settings().sbatch_max_array_size
        settings = replace(settings, max_array_size=limit)
    submission = secrets.token_hex(4)

    def run(settings: ImportSettings, suffix: str = "") -> Conversion:
        return convert_file(
            path, image=image, namespace=namespace, submission_id=submission,
            settings=settings, base_name=name, name_suffix=suffix,
        )  # fmt: skip

    conversion = run(settings)
    needs_nodes = any(i.code == "exclusive-needs-gpus" for i in conversion.issues)
    if state is not None and needs_nodes and not node_gpus:
        supply = _from_cluster(
            script, "--exclusive", lambda: read_supply(state.access(), warnings=[]).nodes
        )
        shapes: dict[str, int] = {}
        for node in supply or []:
            shapes[node.gpu_type] = max(shapes.get(node.gpu_type, 0), node.gpus)
        if shapes:
            settings = replace(settings, node_gpus=shapes)
            conversion = run(settings)
    if state is not None and conversion.parsed.given("account"):
        from gryvia_cli.views.reads import read_tenant_names

        names = _from_cluster(script, "--account", lambda: read_tenant_names(state.access()))
        if names is not None:
            settings = replace(settings, tenants=frozenset(names))
            conversion = run(settings)
    if state is not None and conversion.parsed.given("partition"):
        namespace_of_jobs = target_namespace_or_none(conversion) or namespace
        queues = _local_queues(state, namespace_of_jobs)
        if queues is not None:
            settings = replace(settings, local_queues=queues[1], queue_namespace=queues[0])
            conversion = run(settings)
    for issue in conversion.issues:
        (failure if issue.severity is Severity.ERROR else warn)(f"{script}: {issue.render()}")
    if not conversion.ok:
        raise InvalidInputError(f"{script} cannot be imported; nothing was submitted")
    return SbatchImport(script, conversion, lambda suffix: run(settings, suffix), name is not None)


def _from_cluster(script: str, option: str, read: Callable[[], T]) -> T | None:
    """`read()`, or None with a warning naming `option` when the cluster cannot be read (no
    kubeconfig, unreachable, forbidden): a client dry-run or a convert never needs a cluster,
    it says what it skipped (issue 39, point 2)."""
    from gryvia_cli.errors import GryviaError

    try:
        return read()
    except GryviaError as exc:
        warn(f"{script}: {option}: the cluster could not be read ({exc}); converted without it")
        return None


def target_namespace_or_none(conversion: Conversion) -> str | None:
    """The namespace the converted jobs name (from `-n` or `--account`), else None."""
    jobs = conversion.jobs
    own = (jobs[0].get("metadata") or {}).get("namespace") if jobs else None
    return str(own) if own else None


def _local_queues(state: Connection, namespace: str | None) -> tuple[str, frozenset[str]] | None:
    """(namespace, names of its Kueue LocalQueues) for `--partition`; None when Kueue is not
    installed or the cluster cannot be read (then the partition is kept as it is)."""
    from gryvia_cli.errors import GryviaError
    from gryvia_operator.api.resources import LOCAL_QUEUE

    try:
        where = namespace or state.resolve_namespace(None)
        items = state.access().items(LOCAL_QUEUE, where)
    except GryviaError:
        return None
    return where, frozenset(str((i.get("metadata") or {}).get("name") or "") for i in items)


def target_namespace(imported: SbatchImport, fallback: str) -> str:
    """Where the jobs go: their own namespace (`-n`, or `--account`'s tenant), else `fallback`."""
    jobs = imported.conversion.jobs
    own = (jobs[0].get("metadata") or {}).get("namespace") if jobs else None
    return str(own or fallback)


def _taken(state: Connection, conversion: Conversion, namespace: str) -> bool:
    first = conversion.jobs[0]["metadata"]["name"]
    try:
        state.access().get(r.AIJOB, first, namespace)
    except NotFoundError:
        return False
    return True


def claim_name(state: Connection, imported: SbatchImport, namespace: str) -> Conversion:
    """Create the runtime ConfigMap under a free name (the script's, else with a generated
    suffix) and return the conversion that uses it. Raises ConflictError when an explicit
    `--name` is taken, or no free name was found."""
    conversion = imported.conversion
    wanted = conversion.plan.base_name if conversion.plan else "job"
    for attempt in range(ATTEMPTS):
        if attempt:
            if imported.explicit_name:
                raise ConflictError(
                    f"a job named {wanted} already exists in namespace {namespace}",
                    hint="choose another --name, or leave --name out for a generated suffix",
                )
            conversion = imported.redo(f"-{secrets.token_hex(2)}")
        runtime = conversion.runtime
        if runtime is None or _taken(state, conversion, namespace):
            continue
        try:
            state.access().create(r.CONFIG_MAP, runtime, namespace)
        except ConflictError:
            continue
        if attempt and conversion.plan is not None:
            info(
                f"{wanted} is taken in namespace {namespace} (Slurm job names need not be "
                f"unique): submitting as {conversion.plan.base_name}"
            )
        return conversion
    raise ConflictError(
        f"no free name for {wanted} in namespace {namespace} after {ATTEMPTS} tries"
    )


def create_sbatch_jobs(
    state: Connection, conversion: Conversion, namespace: str
) -> list[dict[str, Any]]:
    """Create the jobs of a claimed conversion, then give them the runtime ConfigMap."""
    from gryvia_cli.sbatch.launcher import runtime_owners

    created = []
    for job in conversion.jobs:
        obj = state.access().create(r.AIJOB, dict(job), namespace)
        created.append(obj)
        success(f"job {obj.get('metadata', {}).get('name')} submitted to namespace {namespace}")
    if conversion.runtime is not None and created:
        name = str(conversion.runtime["metadata"]["name"])
        state.access().merge_patch(r.CONFIG_MAP, name, namespace, runtime_owners(created))
    return created
