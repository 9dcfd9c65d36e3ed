"""Jobs through the API: read manifests, plan them against the cluster, create, cancel.

The CLI's `submit`, `cancel` and `--explain` and `gryvia.Client` share these functions, so a
script and the command line cannot disagree on what is valid, what can never run or what a
cancel does. Nothing here prints: warnings go to a `warn` callback, problems are raised.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gryvia_cli.errors import InvalidInputError
from gryvia_cli.kube import resources as r

if TYPE_CHECKING:
    from gryvia_cli.connection import Connection
    from gryvia_cli.core.estimate import CostEstimate
    from gryvia_cli.core.jobs import JobSummary
    from gryvia_cli.core.plan import Plan

Manifest = Mapping[str, Any] | str | Path | Any
"""A job to submit: a dict, a pydantic model (GryviaAIJob), a `Path` to a YAML file, or a
str: YAML or JSON text when it holds a newline or starts with `{`, else a file path (`-`:
stdin)."""


class InvalidManifestError(InvalidInputError):
    """Manifests with errors: `problems` has one line per error (`file (document N,
    KIND/NAME, line L): field: message`); nothing was submitted."""

    def __init__(self, problems: Sequence[str], message: str, hint: str) -> None:
        super().__init__(message, hint=hint, causes=tuple(problems[:2]))
        self.problems = tuple(problems)


@dataclass(frozen=True)
class JobRef:
    """A created job: its namespace and name, and the object the API server returned."""

    namespace: str
    name: str
    object: Mapping[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class JobPlan:
    """What submitting one job would do now: where it could run (`plan`), its cost
    (`estimate`, None without a price), and why it could never run (`never`, None if it can)."""

    summary: JobSummary
    namespace: str
    plan: Plan
    estimate: CostEstimate | None
    never: str | None


def _texts(manifest: Manifest) -> list[tuple[str, str]] | None:
    """(text, source name) of a manifest given as text or a file; None for objects."""
    from gryvia_cli.cli.files import read_source

    if isinstance(manifest, Path):
        return [read_source(str(manifest))]
    if isinstance(manifest, str):
        text = "\n" in manifest or manifest.lstrip().startswith("{")
        return [(manifest, "<text>")] if text else [read_source(manifest)]
    return None


def load_jobs(manifests: Iterable[Manifest], warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """Every GryviaAIJob of `manifests`, validated by the webhook's rules (warnings go to
    `warn`). Raises InvalidManifestError listing every problem (file, document, field) when
    any document is invalid or not a GryviaAIJob, InvalidInputError when there is no job or
    a file cannot be read."""
    from gryvia_cli.core.manifests import Document, check_document, split_documents

    docs: list[Document] = []
    for n, manifest in enumerate(manifests, start=1):
        texts = _texts(manifest)
        if texts is None:
            dump = getattr(manifest, "model_dump", None)
            content = dump(by_alias=True, exclude_none=True, mode="json") if dump else manifest
            docs.append(Document(f"<object {n}>", 1, 1, dict(content)))  # type: ignore[arg-type]
            continue
        for text, source in texts:
            docs += split_documents(text, source)
    jobs: list[dict[str, Any]] = []
    problems: list[str] = []
    for doc in docs:
        kind = doc.content.get("kind") if isinstance(doc.content, Mapping) else None
        if kind != "GryviaAIJob":
            problems.append(
                f"{doc.label}: submit creates GryviaAIJobs, not {kind or 'this document'} "
                "(use kubectl apply for other objects)"
            )
            continue
        report = check_document(doc)
        problems += [f.render() for f in report.errors]
        for finding in report.warnings:
            warn(finding.render())
        jobs.append(dict(doc.content))
    if problems:
        raise InvalidManifestError(
            problems,
            f"{len(problems)} problem(s) in the manifests; nothing was submitted",
            "fix them and retry; `gryvia validate FILE` checks files offline",
        )
    if not jobs:
        raise InvalidInputError("no GryviaAIJob found in the input", hint="pass -f job.yaml")
    return jobs


def target_of(job: Mapping[str, Any], namespace: str) -> str:
    """The job's own `metadata.namespace`, else `namespace`."""
    return str((job.get("metadata") or {}).get("namespace") or namespace)


def plan_jobs(
    conn: Connection, jobs: Sequence[Mapping[str, Any]], namespace: str, notes: list[str]
) -> list[JobPlan]:
    """Each job's placement now, cost estimate and never-fits reason
    (`core.explain.never_reason`: a GPU type no node or SKU has, more GPUs per pod than any
    node, more GPUs than the quota). Unreadable inputs become `notes`."""
    from gryvia_cli.core.estimate import estimate_cost
    from gryvia_cli.core.explain import never_reason
    from gryvia_cli.core.jobs import summarize_job
    from gryvia_cli.core.plan import plan_job
    from gryvia_cli.views.explain import read_pricing
    from gryvia_cli.views.reads import read_supply

    supply = read_supply(conn.access(), warnings=notes)
    targets = [target_of(job, namespace) for job in jobs]
    skus, tenants, quotas, budgets = read_pricing(conn, targets, notes)
    plans = []
    for obj, target in zip(jobs, targets, strict=True):
        summary = summarize_job(obj)
        plans.append(
            JobPlan(
                summary,
                target,
                plan_job(summary, supply.nodes, supply.allocated),
                estimate_cost(summary, target, skus, tenants, quotas, budgets, now=conn.now()),
                never_reason(summary, target, supply.nodes, skus, quotas),
            )
        )
    return plans


def create_jobs(access: Any, jobs: Sequence[Mapping[str, Any]], namespace: str) -> Iterable[JobRef]:
    """Create each job (in its own namespace, else `namespace`), yielding each as it is
    created. Raises the access layer's errors (RejectedError from the webhook, ConflictError
    for a taken name, ForbiddenError); jobs created before the failure stay."""
    for job in jobs:
        target = target_of(job, namespace)
        obj = access.create(r.AIJOB, dict(job), target)
        yield JobRef(target, str(obj.get("metadata", {}).get("name")), obj)


@dataclass(frozen=True)
class CancelResult:
    """One cancel: `requested` False when the job had already ended (in `phase`)."""

    name: str
    requested: bool
    phase: str


def cancel_job(access: Any, namespace: str, name: str) -> CancelResult:
    """Ask the operator to stop job `name` (annotation gryvia.io/cancel="true"), unless it
    has already ended. Raises NotFoundError when there is no such job, ForbiddenError when
    the user may not patch it."""
    from gryvia_cli.core.jobs import summarize_job
    from gryvia_operator.api.names import ANNOTATION_CANCEL

    summary = summarize_job(access.get(r.AIJOB, name, namespace))
    if summary.terminal:
        return CancelResult(name, False, summary.phase)
    patch = {"metadata": {"annotations": {ANNOTATION_CANCEL: "true"}}}
    access.merge_patch(r.AIJOB, name, namespace, patch)
    return CancelResult(name, True, summary.phase)
