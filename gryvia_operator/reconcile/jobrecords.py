"""Job records and their roll-ups, as pure functions (`api.jobrecord` says what each holds).

`build_job_record` turns an ended (or deleted) GryviaAIJob, its pods and its usage records into
the one compact GryviaJobRecord body the operator creates; `plan_rollup` decides which
records the retention cut takes and the roll-ups they fold into. Clocks are passed in.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from math import ceil
from typing import Any

from gryvia_operator.api.helpers import TERMINAL_PHASES, parse_duration
from gryvia_operator.api.jobrecord import (
    ROLLUP_FOLD_LIMIT,
    JobRollup,
    job_record_name,
    rollup_name,
)
from gryvia_operator.api.names import (
    ANNOTATION_SBATCH_JOB_NAME,
    ANNOTATION_SUBMITTER,
    API_VERSION,
)
from gryvia_operator.reconcile.views import PodView

PLACES = Decimal("0.0001")
STRIP_MANAGED_FIELDS: dict[str, Any] = {"metadata": {"managedFields": [{}]}}
"""The merge patch that clears an object's managedFields (Kubernetes' documented reset: a
list of one empty entry); a create always records its manager's fields, about 40% of a
record's bytes."""
MAX_NODES = 64
TIMEOUT_WORDS = ("deadline", "time limit", "timeout")
"""A Failed job whose message says one of these ended on its time limit (sacct's TIMEOUT;
the same rule as `gryvia_cli.core.slurmviews.state_of`)."""


def stamp(when: dt.datetime) -> str:
    """RFC 3339 in UTC to the second (`2026-12-01T10:00:00Z`)."""
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: object) -> dt.datetime | None:
    """An RFC 3339 string as an aware UTC datetime; None when absent or unreadable."""
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def decimal_of(value: object) -> Decimal:
    """A number or decimal string as Decimal (0 when absent or unreadable)."""
    try:
        return Decimal(str(value)) if value is not None else Decimal(0)
    except InvalidOperation:
        return Decimal(0)


def exit_code(pods: Iterable[PodView]) -> int | None:
    """The batch step's exit code: the lowest replica's (replica 0 first) terminated app
    container's code; None when no pod has one."""
    codes = sorted(
        (p.replica if p.replica is not None else 1 << 30, p.exit_code)
        for p in pods
        if p.exit_code is not None
    )
    return codes[0][1] if codes else None


def _cpus(spec: Mapping[str, Any], pods: int) -> int | None:
    text = str(((spec.get("resources") or {}).get("requests") or {}).get("cpu") or "").strip()
    if not text:
        return None
    try:
        per_pod = ceil(float(text[:-1]) / 1000) if text.endswith("m") else ceil(float(text))
    except ValueError:
        return None
    return max(per_pod, 1) * pods


def _shape(spec: Mapping[str, Any]) -> tuple[int, int, str]:
    """(pods, total GPUs, GPU type key) of a raw job spec (`api.aijob` rules, without
    building the model)."""
    from gryvia_operator.api.gputype import gpu_type_key

    dist = spec.get("distributed") or {}
    enabled = dist.get("enabled") is True
    pods = max(int(dist.get("nodes") or 1), 1) if enabled else 1
    per_node = int(dist.get("gpusPerNode") or 0) if enabled else 0
    per_pod = per_node if per_node > 0 else int(spec.get("gpus") or 0)
    return pods, pods * per_pod, gpu_type_key(spec.get("gpuType"))


def build_job_record(
    body: Mapping[str, Any],
    *,
    tenant: str,
    pods: Sequence[PodView],
    usage: Sequence[Mapping[str, Any]],
    now: dt.datetime,
    deleted: bool = False,
) -> dict[str, Any]:
    """The GryviaJobRecord body of an ended GryviaAIJob `body` (its raw object).

    `pods`: its pods as indexed (exit code, nodes); `usage`: its GryviaUsageRecords (every run;
    GPU-hours and cost are their sums, else GPUs x elapsed and no cost); `deleted`: the job is
    being deleted, so a job not yet in a terminal phase ends now as Cancelled. Fields that are
    unset, zero-valued defaults or equal to another field are left out (bytes per record;
    the writer then strips the managedFields the create recorded: `STRIP_MANAGED_FIELDS`).
    """
    meta, spec = body.get("metadata") or {}, body.get("spec") or {}
    status = body.get("status") or {}
    annotations = meta.get("annotations") or {}
    phase = str(status.get("phase") or "")
    ended = parse_time(status.get("completionTime"))
    if phase not in TERMINAL_PHASES:
        phase, ended = "Cancelled", now if deleted else ended
    started = parse_time(status.get("startTime"))
    ended = ended or now
    n_pods, gpus, gpu_type = _shape(spec)
    message = str(status.get("message") or "").lower()
    timed_out = phase == "Failed" and any(w in message for w in TIMEOUT_WORDS)
    nodes = sorted({p.node_name for p in pods if p.node_name}) or list(
        status.get("nodesAllocated") or []
    )
    hours = sum((decimal_of((u.get("spec") or {}).get("gpuHours")) for u in usage), Decimal(0))
    if not usage and started is not None:
        hours = Decimal(gpus) * Decimal(max((ended - started).total_seconds(), 0)) / 3600
    metrics = status.get("metrics") or {}
    limit = None
    if spec.get("timeout"):
        try:
            limit = parse_duration(str(spec["timeout"]))
        except ValueError:
            limit = None
    name = str(meta.get("name", ""))
    slurm_name = str(annotations.get(ANNOTATION_SBATCH_JOB_NAME) or "")
    record: dict[str, Any] = {
        "tenant": tenant,
        "job": name,
        "jobUID": str(meta.get("uid", "")),
        "jobName": slurm_name if slurm_name and slurm_name != name else None,
        "user": annotations.get(ANNOTATION_SUBMITTER) or None,
        "phase": phase,
        "timedOut": True if timed_out else None,
        "exitCode": exit_code(pods),
        "submitted": meta.get("creationTimestamp") or None,
        "started": stamp(started) if started else None,
        "ended": stamp(ended),
        "gpuType": gpu_type or None,
        "gpus": gpus or None,
        "pods": n_pods if n_pods != 1 else None,
        "cpus": _cpus(spec, n_pods),
        "nodes": nodes[:MAX_NODES] or None,
        "limitSeconds": limit,
        "gpuHours": float(hours.quantize(PLACES)) if hours else None,
        "cost": _cost(usage),
        "currency": _currency(usage),
        "gpuEff": metrics.get("meanActivityPercent") if metrics.get("samples") else None,
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaJobRecord",
        "metadata": {
            "name": job_record_name(str(meta.get("uid", ""))),
            "namespace": str(meta.get("namespace", "")),
        },
        "spec": {k: v for k, v in record.items() if v is not None},
    }


def _cost(usage: Sequence[Mapping[str, Any]]) -> str | None:
    if not usage:
        return None
    total = sum((decimal_of((u.get("spec") or {}).get("cost")) for u in usage), Decimal(0))
    return str(total.quantize(PLACES))


def _currency(usage: Sequence[Mapping[str, Any]]) -> str | None:
    found = {str((u.get("spec") or {}).get("currency") or "USD") for u in usage}
    currency = found.pop() if len(found) == 1 else None
    return None if currency in (None, "USD") else currency


@dataclass
class RollupPlan:
    """One roll-up pass: the roll-up bodies to write (created or replaced whole) and the job
    records to delete afterwards, as (namespace, name)."""

    writes: list[dict[str, Any]] = field(default_factory=list)
    deletes: list[tuple[str, str]] = field(default_factory=list)


def month_of(when: dt.datetime) -> str:
    """`YYYY-MM` of a UTC time."""
    return when.astimezone(dt.UTC).strftime("%Y-%m")


def plan_rollup(records: Iterable[Mapping[str, Any]], cutoff: dt.datetime) -> RollupPlan:
    """What a roll-up pass does with every stored GryviaJobRecord (`records`, raw, both
    shapes): each job record that ended before `cutoff` (now - retention) is folded into the
    roll-up of its (namespace, tenant, month of its end) and deleted, at most
    `ROLLUP_FOLD_LIMIT` a roll-up a pass. A record whose jobUID is in the roll-up's `folded`
    list is already counted and only deleted (a pass cut short after its roll-up writes is
    repeated safely); any other, even one that ended before the roll-up's `through` but was
    written later, is folded in. Only changed roll-ups are written, with `folded` set to the
    jobUIDs this pass deletes; they keep the stored one's `metadata.resourceVersion` as the
    write's precondition."""
    rollups: dict[tuple[str, str, str], dict[str, Any]] = {}
    due: list[Mapping[str, Any]] = []
    for rec in records:
        spec = rec.get("spec") or {}
        if spec.get("rollup"):
            key = (_ns(rec), str(spec.get("tenant", "")), str(spec["rollup"].get("month", "")))
            rollups[key] = {"metadata": dict(rec.get("metadata") or {}), "spec": dict(spec)}
            continue
        ended = parse_time(spec.get("ended"))
        if ended is not None and ended < cutoff:
            due.append(rec)
    counted = {k: set(r["spec"]["rollup"].get("folded") or []) for k, r in rollups.items()}
    folded: dict[tuple[str, str, str], set[str]] = {}
    plan = RollupPlan()
    for rec, key, uid, end in sorted(
        (_facts(rec) for rec in due), key=lambda f: (f[2] not in counted.get(f[1], ()), f[3])
    ):  # the already counted first (at most the limit: the pass that folded them kept to it)
        spec, name = rec.get("spec") or {}, str((rec.get("metadata") or {}).get("name", ""))
        mine = folded.setdefault(key, set())
        if uid in counted.get(key, ()):  # folded by a pass cut short: deleted again only
            mine.add(uid)
            plan.deletes.append((_ns(rec), name))
            continue
        if len(mine) >= ROLLUP_FOLD_LIMIT:
            continue  # the next pass takes it
        mine.add(uid)
        plan.deletes.append((_ns(rec), name))
        rollups[key] = _fold(rollups.get(key), key, spec, end)
    for key in sorted(k for k, uids in folded.items() if uids - counted.get(k, set())):
        rollups[key]["spec"]["rollup"]["folded"] = sorted(folded[key])
        plan.writes.append(_rollup_body(key, rollups[key]))
    return plan


def _facts(
    rec: Mapping[str, Any],
) -> tuple[Mapping[str, Any], tuple[str, str, str], str, dt.datetime]:
    """(record, its roll-up key, its jobUID (else name), its end) of a due record."""
    spec = rec.get("spec") or {}
    ended = parse_time(spec.get("ended"))
    assert ended is not None
    uid = str(spec.get("jobUID") or (rec.get("metadata") or {}).get("name", ""))
    return rec, (_ns(rec), str(spec.get("tenant", "")), month_of(ended)), uid, ended


def _ns(rec: Mapping[str, Any]) -> str:
    return str((rec.get("metadata") or {}).get("namespace", ""))


def _fold(
    current: Mapping[str, Any] | None,
    key: tuple[str, str, str],
    spec: Mapping[str, Any],
    ended: dt.datetime,
) -> dict[str, Any]:
    old = dict((current or {}).get("spec") or {})
    roll = dict(old.get("rollup") or {"month": key[2], "jobs": 0, "states": {}})
    states = dict(roll.get("states") or {})
    phase = str(spec.get("phase") or "Cancelled")
    states[phase] = int(states.get(phase, 0)) + 1
    through = parse_time(roll.get("through"))
    latest = ended if through is None or ended > through else through
    roll.update(jobs=int(roll.get("jobs", 0)) + 1, states=states, through=stamp(latest))
    JobRollup.model_validate(roll)  # the shape the CRD holds
    hours = decimal_of(old.get("gpuHours")) + decimal_of(spec.get("gpuHours"))
    new_spec: dict[str, Any] = {"tenant": key[1], "rollup": roll}
    if hours:
        new_spec["gpuHours"] = float(hours.quantize(PLACES))
    if old.get("cost") is not None or spec.get("cost") is not None:
        total = decimal_of(old.get("cost")) + decimal_of(spec.get("cost"))
        new_spec["cost"] = str(total.quantize(PLACES))
    currency = old.get("currency") or spec.get("currency")
    if currency:
        new_spec["currency"] = currency
    return {"metadata": dict((current or {}).get("metadata") or {}), "spec": new_spec}


def _rollup_body(key: tuple[str, str, str], rollup: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": rollup_name(key[1], key[2]), "namespace": key[0]}
    version = (rollup.get("metadata") or {}).get("resourceVersion")
    if version:
        meta["resourceVersion"] = version
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaJobRecord",
        "metadata": meta,
        "spec": dict(rollup["spec"]),
    }
