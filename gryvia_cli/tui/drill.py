"""Rows of the drill-down views (pure): the pods on a node, and the jobs behind a cost figure.

Pods come slim from the store (name, namespace, labels, node, resources, phase). The jobs
behind a team's figure are the month's usage records that `core.cost.team_costs` counts for
that team, summed per job, so that their costs add up to the team's SPENT.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gryvia_cli.core.cost import TeamScope
from gryvia_cli.core.jobs import job_of_pod
from gryvia_cli.core.nodes import pod_gpus
from gryvia_cli.core.phases import phase_marker
from gryvia_cli.core.spend import JobSpend, top_jobs
from gryvia_cli.tui.rows import money
from gryvia_cli.tui.widgets.rowtable import Cell, Column
from gryvia_operator.api import GryviaUsageRecord

POD_COLUMNS = (
    Column("name", "POD", 16, 0, flex=True, max_width=48),
    Column("namespace", "NAMESPACE", 14, 3),
    Column("job", "JOB", 16, 1),
    Column("phase", "PHASE", 10, 0),
    Column("gpus", "GPUS", 5, 2, "right"),
)


def job_spend_columns(namespace_priority: int, tenant_priority: int) -> tuple[Column, ...]:
    """The columns of a table of jobs' spend (`cost_job_cells` fills them): JOB, NAMESPACE,
    TENANT, GPU, GPU-H, COST, NAMESPACE and TENANT dropped at the given priorities."""
    return (
        Column("job", "JOB", 16, 0, flex=True),
        Column("namespace", "NAMESPACE", 14, namespace_priority),
        Column("tenant", "TENANT", 12, tenant_priority),
        Column("gpu", "GPU", 9, 2),
        Column("hours", "GPU-H", 9, 1, "right"),
        Column("cost", "COST", 11, 0, "right"),
    )


COST_JOB_COLUMNS = job_spend_columns(3, 4)


@dataclass(frozen=True)
class PodRow:
    """A pod on a node: `key` is namespace/name, `job` the job it belongs to ("" none)."""

    namespace: str
    name: str
    job: str
    phase: str
    gpus: int

    @property
    def key(self) -> str:
        """`namespace/name` of the pod."""
        return f"{self.namespace}/{self.name}"

    @property
    def job_key(self) -> str | None:
        """`namespace/job` of its job, None when it has none."""
        return f"{self.namespace}/{self.job}" if self.job else None


def pods_on_node(pods: Iterable[Mapping[str, Any]], node: str) -> list[PodRow]:
    """The pods whose `spec.nodeName` is `node`, by namespace and name."""
    out = []
    for pod in pods:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        if spec.get("nodeName") != node:
            continue
        out.append(
            PodRow(
                str(meta.get("namespace") or ""),
                str(meta.get("name") or ""),
                job_of_pod(pod) or "",
                str((pod.get("status") or {}).get("phase") or "Unknown"),
                pod_gpus(pod),
            )
        )
    return sorted(out, key=lambda p: p.key)


def pod_cells(pod: PodRow) -> list[Cell]:
    """Cells of a pod row, in POD_COLUMNS order."""
    return [
        (pod.name, ""),
        (pod.namespace, "dim"),
        (pod.job or "-", "" if pod.job else "dim"),
        (pod.phase, phase_marker(pod.phase)),
        (str(pod.gpus), ""),
    ]


def pod_sort_value(column: str, pod: PodRow) -> Any:
    """Sort value of a pod row for `column` (POD_COLUMNS keys)."""
    return {
        "namespace": pod.namespace,
        "job": pod.job,
        "phase": pod.phase,
        "gpus": pod.gpus,
    }.get(column, pod.name)


def team_jobs(
    scope: TeamScope, records: Sequence[GryviaUsageRecord], now: dt.datetime
) -> list[JobSpend]:
    """The jobs behind `scope`'s spend in the month of `now`: records billed to its tenant
    (when it is one) or in its quotas' namespaces, summed per job, most expensive first."""
    mine = [
        r
        for r in records
        if (scope.tenant and r.spec.tenant == scope.team) or r.namespace in scope.quota_namespaces
    ]
    return top_jobs(mine, now, len(mine))


def cost_job_cells(spend: JobSpend) -> list[Cell]:
    """Cells of a job behind a cost figure, in COST_JOB_COLUMNS order."""
    return [
        (spend.job + (" (running)" if spend.open else ""), ""),
        (spend.namespace, "dim"),
        (spend.tenant, ""),
        (spend.gpu_type, ""),
        (f"{spend.gpu_hours:,.1f}", ""),
        (money(spend.cost, spend.currency), ""),
    ]


def cost_job_sort_value(column: str, spend: JobSpend) -> Any:
    """Sort value of a job behind a cost figure for `column` (COST_JOB_COLUMNS keys)."""
    return {
        "namespace": spend.namespace,
        "tenant": spend.tenant,
        "gpu": spend.gpu_type,
        "hours": spend.gpu_hours,
        "cost": spend.cost,
    }.get(column, spend.job)
