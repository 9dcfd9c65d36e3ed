"""Pure computations the TUI needs that gryvia_cli/core does not offer yet: move to core.

Each function below should move to `gryvia_cli/core` (a job's tenant, a job's cost so far,
daily spend, top jobs by cost, the job of a submit form, a resubmitted copy) so that the CLI
can share it; the TUI imports them only through `gryvia_cli.tui.compute`. No Textual, kubernetes
or clock reads here.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gryvia_cli.core.estimate import estimate_cost
from gryvia_cli.core.jobs import JobSummary, durations
from gryvia_operator.api import GryviaGpuSku, GryviaQuota, GryviaTenant, GryviaUsageRecord
from gryvia_operator.api.names import ANNOTATION_CANCEL, ANNOTATION_LAST_APPLIED, LABEL_TEAM
from gryvia_operator.api.periods import period_window, record_share


# move to gryvia_cli/core (jobs.py): the tenant a job is attributed to
def job_tenant(obj: Mapping[str, Any]) -> str:
    """The tenant of a raw job: label `gryvia.io/team`, else the namespace without `tenant-`
    (the usage-record fallback of behaviour.md section 2, `usage`)."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    team = labels.get(LABEL_TEAM) if isinstance(labels, Mapping) else None
    return str(team or str(meta.get("namespace") or "").removeprefix("tenant-"))


# move to gryvia_cli/core (estimate.py): cost of one job so far
@dataclass(frozen=True)
class JobCost:
    """Cost so far (metered, or estimated from the catalog rate), the hourly burn and a
    whole-run estimate (None while open-ended: no timeout and not finished)."""

    so_far: float
    per_hour: float
    estimate: float | None
    currency: str
    metered: bool


def job_cost(
    job: JobSummary,
    uid: str,
    records: Iterable[GryviaUsageRecord],
    skus: Iterable[GryviaGpuSku],
    tenants: Iterable[GryviaTenant],
    quotas: Iterable[GryviaQuota],
    now: dt.datetime,
) -> JobCost:
    """Metered cost from the job's usage records (by UID, else namespace and name), else
    `core.estimate`'s rate x hours run; the estimate is the finished run, or the timeout's
    cost from `core.estimate.estimate_cost`."""
    mine = [
        r
        for r in records
        if (uid and r.spec.job_uid == uid)
        or (r.namespace == job.namespace and r.spec.job == job.name)
    ]
    est = estimate_cost(job, job.namespace, skus, tenants, quotas)
    per_hour = (est.per_hour or 0.0) if est else 0.0
    currency = est.rate.currency if est and est.rate else (mine[0].spec.currency if mine else "USD")
    ran = durations(job, now)["running"] or 0.0
    so_far = sum(r.spec.cost for r in mine) if mine else per_hour * ran / 3600
    estimate = so_far if job.terminal else (est.for_timeout if est else None)
    return JobCost(so_far, per_hour, estimate, currency, bool(mine))


# move to gryvia_cli/core (cost.py): spend per day of the month
def month_fraction(now: dt.datetime) -> float:
    """The part (0..1] of the UTC month holding `now` that has passed."""
    start, end = period_window("month", now)
    return max((now - start) / (end - start), 1e-6)


def daily_spend(records: Sequence[GryviaUsageRecord], now: dt.datetime) -> list[float]:
    """Cost per UTC day from the 1st of the month to today, each run split over the days it
    ran (`api.periods.record_share`), so the days add up to the month's spend."""
    start, _ = period_window("month", now)
    days = (now.astimezone(dt.UTC).date() - start.date()).days + 1
    out = [0.0] * days
    for rec in records:
        for i in range(days):
            day = start + dt.timedelta(days=i)
            share = record_share(rec, day, day + dt.timedelta(days=1))
            if share:
                out[i] += rec.spec.cost * share
    return out


@dataclass(frozen=True)
class JobSpend:
    """Metered usage of one job in the month."""

    namespace: str
    job: str
    tenant: str
    gpu_type: str
    gpu_hours: float
    cost: float
    currency: str
    open: bool


def top_jobs(records: Sequence[GryviaUsageRecord], now: dt.datetime, n: int = 10) -> list[JobSpend]:
    """The `n` jobs with the highest metered cost in the month of `now` (runs crossing the
    1st counted for their part in the month)."""
    start, end = period_window("month", now)
    acc: dict[tuple[str, str], list[tuple[GryviaUsageRecord, float]]] = defaultdict(list)
    for rec in records:
        share = record_share(rec, start, end)
        if share > 0:
            acc[(rec.namespace, rec.spec.job)].append((rec, share))
    out = [
        JobSpend(
            ns,
            job,
            recs[0][0].spec.tenant,
            recs[0][0].spec.gpu_type or "-",
            sum(r.spec.gpu_hours * share for r, share in recs),
            sum(r.spec.cost * share for r, share in recs),
            recs[0][0].spec.currency,
            any(not r.spec.final for r, _ in recs),
        )
        for (ns, job), recs in acc.items()
    ]
    out.sort(key=lambda s: (-s.cost, s.namespace, s.job))
    return out[:n]


_DROP_META = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "ownerReferences",
    "finalizers",
    "deletionTimestamp",
    "selfLink",
)


# move to gryvia_cli/core (manifests.py): a fresh copy of a job to submit again
def resubmit_body(raw: dict[str, Any]) -> dict[str, Any]:
    """A new job from an old one: same spec, labels and annotations (without the cancel
    request), named by the server from `<name>-`, no status."""
    meta = raw.get("metadata") or {}
    new_meta = {k: copy.deepcopy(v) for k, v in meta.items() if k not in _DROP_META}
    name = str(new_meta.pop("name", "job"))
    new_meta["generateName"] = f"{name[:52]}-"
    annotations = dict(new_meta.get("annotations") or {})
    annotations.pop(ANNOTATION_CANCEL, None)
    annotations.pop(ANNOTATION_LAST_APPLIED, None)
    new_meta["annotations"] = annotations
    return {
        "apiVersion": raw.get("apiVersion", "gryvia.io/v1alpha1"),
        "kind": "GryviaAIJob",
        "metadata": new_meta,
        "spec": copy.deepcopy(raw.get("spec") or {}),
    }


# move to gryvia_cli/core (manifests.py): the job a submit form describes
@dataclass(frozen=True)
class JobForm:
    """What a person typed into a submit form (all text, unparsed)."""

    name: str = ""
    namespace: str = ""
    type: str = "training"
    image: str = ""
    gpus: str = "1"
    gpu_type: str = ""
    nodes: str = "1"
    command: str = ""
    storage: str = ""


def _number(text: str) -> int | str:
    value = text.strip()
    return int(value) if value.lstrip("-").isdigit() else value


def build_job_manifest(form: JobForm) -> dict[str, Any]:
    """The GryviaAIJob of a form; numbers that do not parse are kept as text so that
    `validate_job` names the field. Several nodes make the job distributed, with `gpus` GPUs
    per node; an empty or `any` GPU type leaves `gpuType` out."""
    import shlex

    spec: dict[str, Any] = {
        "type": form.type,
        "image": form.image.strip(),
        "gpus": _number(form.gpus),
    }
    if form.gpu_type.strip() and form.gpu_type.strip().lower() != "any":
        spec["gpuType"] = form.gpu_type.strip()
    nodes = _number(form.nodes or "1")
    if nodes != 1:
        spec["distributed"] = {"enabled": True, "nodes": nodes}
    if form.command.strip():
        try:
            spec["command"] = shlex.split(form.command)
        except ValueError:
            spec["command"] = [form.command]
    if form.storage.strip():
        spec["storage"] = form.storage.strip()
    meta: dict[str, Any] = {"name": form.name.strip()}
    if form.namespace.strip():
        meta["namespace"] = form.namespace.strip()
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAIJob",
        "metadata": meta,
        "spec": spec,
    }
