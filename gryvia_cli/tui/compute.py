"""The one import point for what the TUI computes: gryvia_cli/core first, `_pending` for what
core lacks (swap an import here when a function lands in core)."""

from __future__ import annotations

from gryvia_cli.core.capacity import (
    CapacityReport,
    TypeCapacity,
    allocated_from_jobs,
    compute_capacity,
)
from gryvia_cli.core.cost import TeamCost, team_costs, team_scopes
from gryvia_cli.core.estimate import estimate_cost
from gryvia_cli.core.events import event_time, sort_events
from gryvia_cli.core.jobs import (
    JobSummary,
    durations,
    gpu_text,
    job_of_pod,
    replica_of_pod,
    sort_pods,
    summarize_job,
)
from gryvia_cli.core.manifests import check_text
from gryvia_cli.core.nodes import GpuNode, allocated_by_node, gpu_nodes, pod_gpus
from gryvia_cli.core.phases import Bucket, bucket, normalize_phase, phase_marker
from gryvia_cli.core.plan import plan_job
from gryvia_cli.core.queue import (
    QueueEntry,
    build_queue,
    is_waiting,
    scheduling_events,
    wait_reason,
)
from gryvia_cli.core.quota import percent_marker
from gryvia_cli.core.timefmt import age, format_seconds, human_duration, parse_time
from gryvia_cli.tui._pending import (
    JobCost,
    JobForm,
    JobSpend,
    build_job_manifest,
    daily_spend,
    job_cost,
    job_tenant,
    month_fraction,
    resubmit_body,
    top_jobs,
)
from gryvia_operator.api.names import ANNOTATION_CANCEL
from gryvia_operator.api.periods import period_window

__all__ = [
    "ANNOTATION_CANCEL",
    "Bucket",
    "CapacityReport",
    "GpuNode",
    "JobCost",
    "JobForm",
    "JobSpend",
    "JobSummary",
    "QueueEntry",
    "TeamCost",
    "TypeCapacity",
    "age",
    "allocated_by_node",
    "allocated_from_jobs",
    "bucket",
    "build_job_manifest",
    "build_queue",
    "check_text",
    "compute_capacity",
    "daily_spend",
    "durations",
    "estimate_cost",
    "event_time",
    "format_seconds",
    "gpu_nodes",
    "gpu_text",
    "human_duration",
    "is_waiting",
    "job_cost",
    "job_of_pod",
    "job_tenant",
    "month_fraction",
    "normalize_phase",
    "parse_time",
    "percent_marker",
    "period_window",
    "phase_marker",
    "plan_job",
    "pod_gpus",
    "replica_of_pod",
    "resubmit_body",
    "scheduling_events",
    "sort_events",
    "sort_pods",
    "summarize_job",
    "team_costs",
    "team_scopes",
    "top_jobs",
    "wait_reason",
]
