"""Cost per workspace and per inference service in the month of `now` (pure), for the Cost view.

Workspaces are metered by the operator like jobs: one GryviaUsageRecord per run, labelled
gryvia.io/workspace (`gryvia_operator/reconcile/workspace_usage.py`), so their cost is the
records' cost, a run crossing the 1st counted for its part in the month (as `core.spend`).

Inference services are not metered by the operator. Their cost here is an estimate: for each
replica pod running now (label gryvia.io/inference-service), the hours since its start (from
the 1st at the earliest) x the service's `spec.gpus` x the catalog rate of the GPU type of
the pod's node (`api.pricing.select_rate`, the rule that prices jobs). Replicas that have
ended (scaled down, rolled, deleted) are not counted, so the figure is a lower bound. A
replica on a node of no known type, or a type without a SKU, costs 0 (`priced` False).
Amounts are floats in the SKU's currency, as the usage records and `core.spend` keep them.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gryvia_operator.api import GryviaGpuSku, GryviaUsageRecord
from gryvia_operator.api.inference import LABEL_SERVICE, GryviaInferenceService
from gryvia_operator.api.periods import period_window, record_share
from gryvia_operator.api.pricing import select_rate
from gryvia_operator.api.workspace import LABEL_WORKSPACE

WorkloadKind = Literal["workspace", "service"]


@dataclass(frozen=True)
class WorkloadCost:
    """A workspace's or a service's GPU hours and cost in the month (in `currency`).

    `metered`: from usage records (workspaces), else estimated (services). `running`: a run
    is still open, or replicas run now (`replicas` of them, services only). `priced`: every
    GPU hour found a rate (False: some hours cost 0 for want of a SKU)."""

    kind: WorkloadKind
    namespace: str
    name: str
    gpu_type: str
    gpu_hours: float
    cost: float
    currency: str
    metered: bool
    running: bool
    replicas: int = 0
    priced: bool = True

    @property
    def key(self) -> str:
        """`<kind>:<namespace>/<name>`."""
        return f"{self.kind}:{self.namespace}/{self.name}"


def workspace_of(record: GryviaUsageRecord) -> str | None:
    """The workspace a usage record meters (its gryvia.io/workspace label), else None."""
    labels = record.metadata.labels or {}
    return labels.get(LABEL_WORKSPACE) or None


def workspace_costs(records: Iterable[GryviaUsageRecord], now: dt.datetime) -> list[WorkloadCost]:
    """Each metered workspace's GPU hours and cost in the month of `now`, by usage records;
    runs crossing the 1st count for their part in the month. Sorted by namespace, name."""
    start, end = period_window("month", now)
    acc: dict[tuple[str, str], list[tuple[GryviaUsageRecord, float]]] = defaultdict(list)
    for rec in records:
        name = workspace_of(rec)
        share = record_share(rec, start, end) if name else 0.0
        if name and share > 0:
            acc[(rec.namespace, name)].append((rec, share))
    out = []
    for (ns, name), recs in sorted(acc.items()):
        latest = max((r for r, _ in recs), key=lambda r: r.spec.start)
        out.append(
            WorkloadCost(
                kind="workspace",
                namespace=ns,
                name=name,
                gpu_type=latest.spec.gpu_type or "-",
                gpu_hours=sum(r.spec.gpu_hours * share for r, share in recs),
                cost=sum(r.spec.cost * share for r, share in recs),
                currency=latest.spec.currency,
                metered=True,
                running=any(not r.spec.final for r, _ in recs),
            )
        )
    return out


def _time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def service_costs(
    services: Iterable[GryviaInferenceService],
    pods: Iterable[Mapping[str, Any]],
    node_types: Mapping[str, str],
    skus: Sequence[GryviaGpuSku],
    now: dt.datetime,
) -> list[WorkloadCost]:
    """Each service's estimated GPU hours and cost in the month of `now` (module docstring):
    its Running pods (label gryvia.io/inference-service, its namespace) from
    `status.startTime` (not before the 1st) to `now`, x `spec.gpus`, x the rate of the pod's
    node's GPU type (`node_types`: node name -> GPU type). Sorted by namespace, name."""
    month_start, _ = period_window("month", now)
    by_service: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for pod in pods:
        meta = pod.get("metadata") or {}
        name = (meta.get("labels") or {}).get(LABEL_SERVICE)
        if name and (pod.get("status") or {}).get("phase") == "Running":
            by_service[(str(meta.get("namespace") or ""), str(name))].append(pod)
    out = []
    for svc in sorted(services, key=lambda s: (s.namespace, s.name)):
        hours = cost = 0.0
        currency, priced, types = "USD", True, set()
        replicas = by_service.get((svc.namespace, svc.name), [])
        for pod in replicas:
            started = _time((pod.get("status") or {}).get("startTime"))
            if started is None:
                continue
            ran = max((now - max(started, month_start)).total_seconds(), 0.0) / 3600
            gpu_hours = svc.spec.gpus * ran
            gpu_type = node_types.get(str((pod.get("spec") or {}).get("nodeName") or ""), "")
            rate = select_rate(gpu_type, skus) if gpu_type else None
            if gpu_type:
                types.add(gpu_type)
            if rate is None:
                priced = priced and gpu_hours == 0
            else:
                currency = rate.currency
                cost += rate.cost(gpu_hours)
            hours += gpu_hours
        out.append(
            WorkloadCost(
                kind="service",
                namespace=svc.namespace,
                name=svc.name,
                gpu_type=",".join(sorted(types)) or "-",
                gpu_hours=hours,
                cost=cost,
                currency=currency,
                metered=False,
                running=bool(replicas),
                replicas=len(replicas),
                priced=priced,
            )
        )
    return out


def workload_costs(
    workspaces: Sequence[WorkloadCost], services: Sequence[WorkloadCost]
) -> list[WorkloadCost]:
    """Both lists, highest cost first, ties by kind, namespace and name."""
    both = [*workspaces, *services]
    return sorted(both, key=lambda w: (-w.cost, w.kind, w.namespace, w.name))


def basis_text(item: WorkloadCost) -> str:
    """How the figure was reached, for the view: `metered` (`metered, running`), or
    `estimate: 2 replicas running` (`..., no rate for some` when unpriced hours exist)."""
    if item.metered:
        return "metered, running" if item.running else "metered"
    text = f"estimate: {item.replicas} replica{'s' if item.replicas != 1 else ''} running"
    return text if item.priced else f"{text}, no rate for some"
