"""Table columns and cells of the views: text plus a marker, phase glyphs, money.

Pure formatting: every value comes from gryvia_cli/core, which computes it.
Phases carry a glyph as well as a colour so the tables read without colour.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from gryvia_cli.core.jobs import JobSummary, durations
from gryvia_cli.core.phases import bucket, phase_marker
from gryvia_cli.core.timefmt import age, format_seconds, human_duration
from gryvia_cli.tui.store import JobItem
from gryvia_cli.tui.widgets.rowtable import Cell, Column
from gryvia_operator.api.maintenance import maintenance_text

if TYPE_CHECKING:  # only annotations: the cost, node and queue cores load with their views
    from gryvia_cli.core.nodes import GpuNode
    from gryvia_cli.core.queue import QueueEntry
    from gryvia_cli.core.spend import JobCost

PHASE_GLYPHS = {
    "Running": "▶",
    "Scheduling": "◷",
    "Queued": "◔",
    "Pending": "○",
    "Succeeded": "✓",
    "Failed": "✗",
    "Rejected": "⊘",
    "Preempted": "⇣",
    "Cancelled": "■",
}
PHASE_ORDER = {
    name: i
    for i, name in enumerate(
        [
            "Running",
            "Scheduling",
            "Queued",
            "Pending",
            "Failed",
            "Rejected",
            "Preempted",
            "Cancelled",
            "Succeeded",
        ]
    )
}


def phase_cell(job: JobSummary) -> Cell:
    """`▶ Running` with the core marker; a pending cancel shows as `◌ Cancelling`."""
    if job.cancel_requested and not job.terminal:
        return "◌ Cancelling", "warn"
    return f"{PHASE_GLYPHS.get(job.phase, '?')} {job.phase}", phase_marker(job.phase)


def gpus_text(job: JobSummary) -> str:
    """`8xH100`, `2x8xA100-80G` (pods x per pod), `cpu`."""
    if job.cpu_only:
        return "cpu" if job.pods == 1 else f"{job.pods}xcpu"
    kind = job.gpu_type or "any"
    if job.pods == 1:
        return f"{job.gpus_per_pod}x{kind}"
    return f"{job.pods}x{job.gpus_per_pod}x{kind}"


def money(amount: float | None, currency: str = "USD") -> str:
    """`$1,234.56` for USD, `1,234.56 EUR` otherwise, `-` for None."""
    if amount is None:
        return "-"
    return f"${amount:,.2f}" if currency == "USD" else f"{amount:,.2f} {currency}"


JOB_COLUMNS = (
    Column("name", "NAME", 16, 0, flex=True),
    Column("user", "USER", 18, 6),
    Column("namespace", "NAMESPACE", 14, 7),
    Column("tenant", "TENANT", 10, 8),
    Column("type", "TYPE", 11, 6),
    Column("gpus", "GPUS", 12, 2),
    Column("phase", "PHASE", 12, 1),
    Column("age", "AGE", 6, 3, "right"),
    Column("duration", "DURATION", 8, 4, "right"),
    Column("gpu_activity", "GPU%", 5, 5, "right"),
    Column("cost", "COST", 10, 5, "right"),
)

CostOf = Callable[[JobItem], "JobCost"]


def job_cells(item: JobItem, now: datetime, cost: JobCost) -> list[Cell]:
    """Cells of a Jobs row, in JOB_COLUMNS order."""
    job = item.summary
    ran = durations(job, now)["running"]
    cost_text = money(cost.so_far, cost.currency) if (cost.so_far or cost.metered) else "-"
    return [
        (job.name, ""),
        _user_cell(job),
        (job.namespace, "dim"),
        (item.tenant, "dim"),
        (job.job_type or "-", ""),
        (gpus_text(job), ""),
        phase_cell(job),
        (age(job.created, now), ""),
        (format_seconds(ran), ""),
        _gpu_cell(job),
        (cost_text, "" if cost.metered else "dim"),
    ]


def _gpu_cell(job: JobSummary) -> Cell:
    """GPU% as the operator sampled it (`JobSummary.gpu_percent`): a running job under 10 %
    is marked, `-` (dim) when never sampled."""
    text = job.gpu_percent
    if text == "-":
        return (text, "dim")
    low = not job.terminal and float(text.rstrip("%")) < 10
    return (text, "warn" if low else "")


def _user_cell(job: JobSummary) -> Cell:
    """The submitter (annotation gryvia.io/submitted-by), `-` (dim) when not recorded."""
    return (job.submitter, "") if job.submitter else ("-", "dim")


def job_sort_value(column: str, item: JobItem, now: datetime, cost: CostOf) -> Any:
    """Sort value of a job for `column` (ascending; age sorts newest first)."""
    job = item.summary
    if column == "age":
        return -(job.created.timestamp() if job.created else 0.0)
    if column == "duration":
        return durations(job, now)["running"] or 0.0
    if column == "cost":
        return cost(item).so_far
    if column == "phase":
        return PHASE_ORDER.get(job.phase, 99)
    if column == "gpus":
        return job.total_gpus
    if column == "gpu_activity":
        text = job.gpu_percent
        return -1.0 if text == "-" else float(text.rstrip("%"))
    values: Mapping[str, str] = {
        "name": job.name,
        "namespace": job.namespace,
        "tenant": item.tenant,
        "type": job.job_type,
        "user": job.submitter,
    }
    return values.get(column, job.name)


def job_search(item: JobItem) -> tuple[str, dict[str, tuple[str, ...]]]:
    """(text, fields) the `/` filter matches a job against."""
    job = item.summary
    text = f"{job.name} {job.namespace} {item.tenant} {job.submitter}".lower()
    fields = {
        "phase": (job.phase.lower(), bucket(job.phase).value),
        "type": (job.job_type.lower(),),
        "gpu": (job.type_key.lower(),),
        "ns": (job.namespace.lower(),),
        "tenant": (item.tenant.lower(),),
        "name": (job.name.lower(),),
        "user": (job.submitter.lower(),),
    }
    return text, fields


JOB_FIELDS = ("phase", "type", "gpu", "ns", "tenant", "name", "user")

NODE_COLUMNS = (
    Column("name", "NODE", 14, 0, flex=True, max_width=30),
    Column("gpu_type", "GPU TYPE", 10, 1),
    Column("gpus", "GPUS", 5, 2, "right"),
    Column("allocated", "ALLOC", 6, 3, "right"),
    Column("free", "FREE", 5, 4, "right"),
    Column("memory", "MEMORY", 7, 6, "right"),
    Column("driver", "DRIVER", 24, 7),
    Column("rdma", "RDMA", 5, 8),
    Column("phase", "PHASE", 12, 1),
)
NODE_FIELDS = ("gpu", "phase", "name")


def node_cells(node: GpuNode, allocated: Mapping[str, int]) -> list[Cell]:
    """Cells of a Nodes row, in NODE_COLUMNS order."""
    used = allocated.get(node.slot, 0)
    free = max(node.gpus - used, 0) if node.usable else 0
    driver = f"{node.driver} / CUDA {node.cuda}" if node.driver and node.cuda else node.driver
    if node.gpu_faults:
        phase: Cell = (f"✗ {node.gpu_faults[0]}", "error")
    elif node.maintenance is not None and node.node_exists:
        phase = (f"◐ {maintenance_text(node.maintenance)}", "warn")
    elif node.phase == "Ready" and node.usable:
        phase = ("● Ready", "ok")
    elif not node.schedulable and node.node_exists:
        phase = (f"◐ {node.phase},cordoned", "warn")
    elif node.phase == "Degraded":
        phase = ("◐ Degraded", "warn")
    else:
        phase = (f"✗ {node.phase or 'Unknown'}", "error")
    return [
        (node.name, ""),
        (node.gpu_type, ""),
        (str(node.gpus), ""),
        (str(used), "warn" if used and not free else ""),
        (str(free), "ok" if free else "dim"),
        (f"{node.memory_gb} GB" if node.memory_gb else "-", ""),
        (driver or "-", "dim"),
        ("✓" if node.rdma else "-", "ok" if node.rdma else "dim"),
        phase,
    ]


QUEUE_COLUMNS = (
    Column("position", "#", 4, 0, "right"),
    Column("name", "NAME", 16, 0),
    Column("user", "USER", 18, 5),
    Column("namespace", "NAMESPACE", 12, 5),
    Column("gpus", "GPUS", 12, 2),
    Column("phase", "PHASE", 12, 4),
    Column("waited", "WAITED", 6, 1, "right"),
    Column("start", "START", 11, 3),
    Column("flavor", "FLAVOR", 14, 6),
    Column("borrowed", "BORROWED", 8, 7, "right"),
    Column("reason", "REASON", 24, 0, flex=True, max_width=200),
)


def queue_cells(entry: QueueEntry) -> list[Cell]:
    """Cells of a Queue row, in QUEUE_COLUMNS order."""
    job = entry.job
    waited = human_duration(entry.waited) if entry.waited is not None else "-"
    return [
        (f"{entry.position}", "accent"),
        (job.name, ""),
        _user_cell(job),
        (job.namespace, "dim"),
        (gpus_text(job), ""),
        phase_cell(job),
        (waited, "warn" if (entry.waited or 0) > 3600 else ""),
        _start_cell(job),
        (job.kueue_flavor or "-", "dim" if not job.kueue_flavor else ""),
        _borrowed_cell(job.kueue_borrowed),
        (entry.reason, "warn" if entry.reason.startswith("no node") else ""),
    ]


def _borrowed_cell(borrowed: int | None) -> Cell:
    """GPUs a Kueue job borrows from its cohort: the number (warn when above 0: the lender can
    reclaim them by preemption) or `-` when the status does not say."""
    if borrowed is None:
        return ("-", "dim")
    return (str(borrowed), "warn" if borrowed else "")


def _start_cell(job: Any) -> Cell:
    """The operator's start estimate: `14:20-15:05`, `unknown`, `never` (warn) or `-`."""
    from gryvia_operator.api.pendingtext import start_cell

    text = start_cell(job.estimated_start, job.pending) or "-"
    return (text, "warn" if text == "never" else "dim" if text in ("-", "unknown") else "")


def queue_sort_value(column: str, entry: QueueEntry, index: int) -> Any:
    """Sort value of a Queue row for `column`; `position` keeps the queue's own order
    (`index`: the row's place in core.queue.build_queue's list)."""
    job = entry.job
    values: Mapping[str, Any] = {
        "position": index,
        "name": job.name,
        "user": job.submitter,
        "namespace": job.namespace,
        "gpus": job.total_gpus,
        "phase": PHASE_ORDER.get(job.phase, 99),
        "waited": entry.waited,
        "start": job.estimated_start.likely.isoformat()
        if job.estimated_start and job.estimated_start.likely
        else "~",
        "flavor": job.kueue_flavor,
        "borrowed": job.kueue_borrowed if job.kueue_borrowed is not None else -1,
        "reason": entry.reason,
    }
    return values.get(column, index)


def node_sort_value(column: str, node: GpuNode, allocated: Mapping[str, int]) -> Any:
    """Sort value of a Nodes row for `column` (NODE_COLUMNS keys; others: the name)."""
    used = allocated.get(node.slot, 0)
    values: Mapping[str, Any] = {
        "gpu_type": node.gpu_type,
        "gpus": node.gpus,
        "allocated": used,
        "free": max(node.gpus - used, 0) if node.usable else 0,
        "memory": node.memory_gb,
        "driver": node.driver,
        "rdma": node.rdma,
        "phase": node.phase,
    }
    return values.get(column, node.name)
