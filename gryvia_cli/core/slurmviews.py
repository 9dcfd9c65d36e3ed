"""Slurm's views of Gryvia jobs: the rows of `gryvia squeue` and `sacct`.

Mapping (squeue(1) JOB STATE CODES and JOB REASON CODES):

* JOBID is the job's name (array elements keep `<array>-<index>`), NAME the Slurm job name
  (annotation `gryvia.io/sbatch-job-name`, else the name), PARTITION the GPU type asked for
  (`any`, `cpu`), as `sinfo` lists the GPU types as partitions, USER who submitted the job
  (annotation gryvia.io/submitted-by; the tenant for a job without one), ACCOUNT the tenant
  the namespace belongs to, NODES the pods.
* States: Pending/Queued PD (and any suspended job that has not run), Scheduling CF,
  Running R (S once suspended), Succeeded CD, Failed F (TO when the
  time limit ended it), Cancelled CA, Preempted PR, Rejected F.
* Reasons of pending jobs, from Gryvia's wait reason (`core.queue.wait_reason`): a throttled
  array element JobArrayTaskLimit, other suspended jobs JobHeldUser, a quota hold QOSGrpGRES,
  no node of the GPU type ReqNodeNotAvail, waiting for GPUs or the scheduler Resources, not
  seen by the operator yet None.
* sinfo's rows are in `core.sinfoview`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from math import ceil
from typing import Any

from gryvia_cli.core import timefmt
from gryvia_cli.core.jobs import JobSummary
from gryvia_cli.core.slurmfmt import (
    compress_hostlist,
    slurm_duration,
    slurm_elapsed,
    slurm_limit,
    slurm_timestamp,
)
from gryvia_operator.api.names import (
    ANNOTATION_ARRAY_MAX_PARALLEL,
    ANNOTATION_SBATCH_JOB_NAME,
    LABEL_ARRAY_INDEX,
    LABEL_ARRAY_NAME,
)

STATES: dict[str, tuple[str, str]] = {
    "Pending": ("PD", "PENDING"),
    "Queued": ("PD", "PENDING"),
    "Scheduling": ("CF", "CONFIGURING"),
    "Running": ("R", "RUNNING"),
    "Succeeded": ("CD", "COMPLETED"),
    "Failed": ("F", "FAILED"),
    "Rejected": ("F", "FAILED"),
    "Cancelled": ("CA", "CANCELLED"),
    "Preempted": ("PR", "PREEMPTED"),
}
QUEUE_CODES = frozenset({"PD", "CF", "R", "S"})

SQUEUE_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
SQUEUE_START_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
SQUEUE_HEADERS: dict[str, str] = {
    "i": "JOBID", "A": "ARRAY_JOB_ID", "a": "ACCOUNT", "j": "NAME", "P": "PARTITION",
    "u": "USER", "t": "ST", "T": "STATE", "M": "TIME", "l": "TIME_LIMIT", "L": "TIME_LEFT",
    "D": "NODES", "C": "CPUS", "b": "TRES_PER_NODE", "R": "NODELIST(REASON)", "r": "REASON",
    "N": "NODELIST", "S": "START_TIME", "V": "SUBMIT_TIME", "Q": "PRIORITY", "Y": "SCHEDNODES",
    "n": "NAMESPACE",
}  # fmt: skip
SACCT_FORMAT = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode,Elapsed,GPUHours"
SACCT_WIDTHS: dict[str, int] = {
    "JobID": 12, "JobName": 10, "Partition": 10, "Account": 10, "AllocCPUS": 10, "State": 10,
    "ExitCode": 8, "Elapsed": 10, "GPUHours": 10, "User": 9, "NNodes": 8, "AllocGPUs": 9,
    "Start": 19, "End": 19, "Submit": 19, "Timelimit": 10, "NodeList": 15, "Reason": 20,
    "GPUEff": 7, "GPUActHrs": 10, "Log": 4,
}  # fmt: skip


@dataclass(frozen=True)
class SlurmJob:
    """A job with what Slurm's views need beyond its summary: the tenant (`user`: ACCOUNT,
    and USER when no submitter is recorded),
    Gryvia's wait reason ("" when not waiting), the Slurm job name, whether it is a throttled
    array element, CPUs per pod, its time limit in seconds and the batch step's exit code."""

    job: JobSummary
    user: str
    reason: str = ""
    slurm_name: str = ""
    throttled: bool = False
    cpus_per_pod: int = 0
    limit_seconds: int | None = None
    exit_code: str = ""
    array_name: str = ""
    array_index: int | None = None
    max_parallel: int | None = None
    uid: str = ""
    has_pods: bool = False

    @property
    def login(self) -> str:
        """squeue's USER: the submitter (annotation gryvia.io/submitted-by), else the tenant."""
        return self.job.submitter or self.user

    @property
    def job_id(self) -> str:
        """Slurm's JOBID: `sweep_3` for an array element, else the job's name."""
        if self.array_name and self.array_index is not None:
            return f"{self.array_name}_{self.array_index}"
        return self.job.name


def slurm_job(
    obj: Mapping[str, Any], job: JobSummary, user: str, reason: str = "", exit_code: str = ""
) -> SlurmJob:
    """Build a SlurmJob from the GryviaAIJob object `obj` and its summary."""
    from gryvia_operator.api import parse_duration

    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    spec = obj.get("spec") or {}
    limit = None
    if job.timeout:
        try:
            limit = parse_duration(job.timeout)
        except ValueError:
            limit = None
    requests = ((spec.get("resources") or {}).get("requests") or {}) if spec else {}
    labels = meta.get("labels") or {}
    index = str(labels.get(LABEL_ARRAY_INDEX, ""))
    limit_text = str(annotations.get(ANNOTATION_ARRAY_MAX_PARALLEL, ""))
    return SlurmJob(
        job=job,
        user=user,
        reason=reason,
        slurm_name=str(annotations.get(ANNOTATION_SBATCH_JOB_NAME) or job.name),
        throttled=ANNOTATION_ARRAY_MAX_PARALLEL in annotations,
        cpus_per_pod=max(_cpus(requests.get("cpu")), 1),
        limit_seconds=limit,
        exit_code=exit_code,
        array_name=str(labels.get(LABEL_ARRAY_NAME, "")),
        array_index=int(index) if index.isdigit() else None,
        max_parallel=int(limit_text) if limit_text.isdigit() else None,
        uid=str(meta.get("uid") or ""),
    )


def _cpus(value: object) -> int:
    text = str(value or "").strip()
    try:
        return ceil(float(text[:-1]) / 1000) if text.endswith("m") else ceil(float(text or 0))
    except ValueError:
        return 0


def state_of(job: JobSummary) -> tuple[str, str]:
    """(two-letter code, long name) of a job's phase as Slurm spells it."""
    code, name = STATES.get(job.phase or "Pending", ("PD", "PENDING"))
    if job.suspended and not job.terminal:  # held (or throttled) before it ran: pending
        return ("S", "SUSPENDED") if job.replicas_ready else ("PD", "PENDING")
    text = job.message.lower()
    if job.phase == "Failed" and any(w in text for w in ("deadline", "time limit", "timeout")):
        return "TO", "TIMEOUT"
    return code, name


PENDING_REASON_CODES = {
    "Resources": "Resources",
    "Quota": "QOSGrpGRES",
    "Budget": "AssocGrpBillingMinutes",
    "Priority": "Priority",
    "Reservation": "Reservation",
    "NoSuchGPUType": "ReqNodeNotAvail",
    "TooLarge": "BadConstraints",
    "Kueue": "QOSGrpGRES",
    "Suspended": "JobHeldUser",
    "DependencyWaiting": "Dependency",
    "Storage": "BurstBufferResources",
    "Dataset": "BurstBufferStageIn",
}
"""squeue's reason code per `status.pending.kind`."""


def reason_code(item: SlurmJob) -> str:
    """Slurm's reason code for a pending job (see the module docstring); the operator's
    structured blocker (status.pending) decides when there is one."""
    job, text = item.job, item.reason.lower()
    if job.pending is not None and not job.suspended:
        return PENDING_REASON_CODES.get(job.pending.kind, "Resources")
    if job.suspended:
        return "JobArrayTaskLimit" if item.throttled else "JobHeldUser"
    if text.startswith(("queued", "waiting for quota", "quota:")):
        return "QOSGrpGRES"
    if text.startswith("no node has gpu type"):
        return "ReqNodeNotAvail"
    if text.startswith("not picked up"):
        return "None"
    return "Resources"


def _partition(job: JobSummary) -> str:
    return job.type_key


def _start(job: JobSummary) -> str:
    """START_TIME: when it started, else the operator's likely start, else N/A."""
    if job.started:
        return slurm_timestamp(job.started)
    likely = job.estimated_start.likely if job.estimated_start else None
    return slurm_timestamp(likely) if likely else "N/A"


def pod_nodes(pods: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The nodes (`spec.nodeName`) the running or starting `pods` are bound to, sorted:
    the NODELIST of a job that Gryvia did not place (Kueue's)."""
    return tuple(
        sorted(
            {
                str(node)
                for p in pods
                if (node := (p.get("spec") or {}).get("nodeName"))
                and (p.get("status") or {}).get("phase") in ("Pending", "Running")
                and not (p.get("metadata") or {}).get("deletionTimestamp")
            }
        )
    )


def squeue_row(item: SlurmJob, now: datetime) -> dict[str, str]:
    """One squeue line's values by format letter."""
    job = item.job
    code, name = state_of(job)
    running = code in ("R", "CF") and job.started is not None
    used = timefmt.seconds_between(job.started, now) if running else 0
    nodelist = compress_hostlist(job.nodes_allocated)
    reason = "None" if code != "PD" else reason_code(item)
    left = (
        "UNLIMITED"
        if not item.limit_seconds
        else slurm_duration(max(item.limit_seconds - int(used or 0), 0))
    )
    per_node = f"gres/gpu:{job.gpus_per_pod}" if job.gpus_per_pod else "N/A"
    return {
        "i": item.job_id, "A": item.array_name or job.name, "a": item.user, "j": item.slurm_name,
        "P": _partition(job), "u": item.login, "t": code, "T": name,
        "M": slurm_duration(used), "l": slurm_limit(item.limit_seconds), "L": left,
        "D": str(job.pods), "C": str(item.cpus_per_pod * job.pods), "b": per_node,
        "R": nodelist if code != "PD" and nodelist else f"({reason})", "r": reason,
        "N": nodelist, "S": _start(job),
        "V": slurm_timestamp(job.created), "Q": str(job.priority), "Y": "(null)",
        "n": job.namespace,
    }  # fmt: skip


def squeue_items(
    items: Iterable[SlurmJob],
    *,
    users: Sequence[str] | None = None,
    states: Sequence[str] | None = None,
    partitions: Sequence[str] | None = None,
    pending_only: bool = False,
    accounts: Sequence[str] | None = None,
) -> list[SlurmJob]:
    """What squeue lists: jobs not finished (PD, CF, R), filtered by user (USER: the
    submitter, else the tenant), account (ACCOUNT: the tenant, Slurm's `-A`), state
    (codes or names, any case), partition (GPU type); running first then pending, each by age,
    as squeue's default sort (by state, then priority) shows them."""
    wanted_states = {s.strip().upper() for v in states or [] for s in v.split(",") if s.strip()}
    wanted_users = {u.strip() for v in users or [] for u in v.split(",") if u.strip()}
    wanted_accounts = {a.strip() for v in accounts or [] for a in v.split(",") if a.strip()}
    wanted_parts = {p.strip().lower() for v in partitions or [] for p in v.split(",") if p.strip()}
    out = []
    for item in items:
        code, name = state_of(item.job)
        if wanted_states:
            if (
                code not in wanted_states
                and name not in wanted_states
                and "ALL" not in wanted_states
            ):
                continue
        elif code not in QUEUE_CODES:
            continue
        if pending_only and code != "PD":
            continue
        if wanted_users and item.login not in wanted_users:
            continue
        if wanted_accounts and item.user not in wanted_accounts:
            continue
        if wanted_parts and _partition(item.job).lower() not in wanted_parts:
            continue
        out.append(item)
    order = {"R": 0, "CF": 1, "PD": 2}
    far = datetime.max.replace(tzinfo=None)
    out.sort(
        key=lambda i: (
            order.get(state_of(i.job)[0], 3),
            -i.job.priority,
            (i.job.created.replace(tzinfo=None) if i.job.created else far),
            i.job.name,
        )
    )
    return out


def index_ranges(indices: Iterable[int]) -> str:
    """Slurm's array index list: `[2-5]`, `[1,3,7-9]`."""
    values = sorted(set(indices))
    parts: list[str] = []
    start = prev = values[0] if values else 0
    for value in [*values[1:], None]:
        if value is not None and value == prev + 1:
            prev = value
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if value is not None:
            start = prev = value
    return ",".join(parts) if values else ""


def squeue_rows(items: Sequence[SlurmJob], now: datetime) -> list[dict[str, str]]:
    """squeue's rows: the pending elements of an array that wait for its `%N` throttle
    collapse into one row `sweep_[2-5%2]` (where the first of them was), as Slurm shows an
    array's pending part; every other job is one row."""
    held: dict[tuple[str, str], list[SlurmJob]] = {}
    for item in items:
        if item.array_name and item.throttled and item.job.suspended:
            held.setdefault((item.job.namespace, item.array_name), []).append(item)
    rows: list[dict[str, str]] = []
    done: set[tuple[str, str]] = set()
    for item in items:
        key = (item.job.namespace, item.array_name)
        group = held.get(key) if item.array_name else None
        if not group or item not in group:
            rows.append(squeue_row(item, now))
            continue
        if key in done:
            continue
        done.add(key)
        row = squeue_row(group[0], now)
        ranges = index_ranges(i.array_index for i in group if i.array_index is not None)
        limit = f"%{group[0].max_parallel}" if group[0].max_parallel else ""
        row["i"] = f"{item.array_name}_[{ranges}{limit}]"
        rows.append(row)
    return rows


def sacct_row(item: SlurmJob, now: datetime) -> dict[str, str]:
    """One sacct line's values by field name (GPUHours: GPUs x elapsed, 2 decimals; GPUEff:
    the mean GPU activity the operator sampled, GPUActHrs: GPUHours x GPUEff; empty when
    never sampled)."""
    job = item.job
    _, name = state_of(job)
    end = job.completed or (None if job.terminal else now)
    elapsed = timefmt.seconds_between(job.started, end) if job.started and end else 0
    hours = job.total_gpus * (elapsed or 0) / 3600
    exit_code = item.exit_code or ("0:0" if job.phase == "Succeeded" else "")
    return {
        "JobID": job.name, "JobName": item.slurm_name, "Partition": _partition(job),
        "Account": item.user, "User": item.login, "AllocCPUS": str(item.cpus_per_pod * job.pods),
        "State": name, "ExitCode": exit_code, "Elapsed": slurm_elapsed(elapsed),
        "GPUHours": f"{hours:.2f}", "NNodes": str(job.pods), "AllocGPUs": str(job.total_gpus),
        "Start": slurm_timestamp(job.started) if job.started else "Unknown",
        "End": slurm_timestamp(job.completed) if job.completed else "Unknown",
        "Submit": slurm_timestamp(job.created), "Timelimit": slurm_limit(item.limit_seconds),
        "NodeList": compress_hostlist(job.nodes_allocated) or "None assigned",
        "Reason": reason_code(item) if state_of(job)[0] == "PD" else "None",
        "GPUEff": f"{mean:.1f}%" if (mean := _mean_activity(job)) is not None else "",
        "GPUActHrs": f"{hours * mean / 100:.2f}" if mean is not None else "",
    }  # fmt: skip


def _mean_activity(job: JobSummary) -> float | None:
    value = job.metrics.get("meanActivityPercent")
    return float(value) if isinstance(value, int | float) and job.metrics.get("samples") else None


def exit_code_of(pods: Iterable[Mapping[str, Any]]) -> str:
    """sacct's `exit:signal` from the first pod's (index 0) terminated container, "" if
    none: a code above 128 is a signal (`0:9`)."""
    ordered = sorted(
        pods,
        key=lambda p: str(
            ((p.get("metadata") or {}).get("annotations") or {}).get(
                "batch.kubernetes.io/job-completion-index", "9999"
            )
        ),
    )
    for pod in ordered:
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            done = (status.get("state") or {}).get("terminated")
            if done and isinstance(done.get("exitCode"), int):
                code = int(done["exitCode"])
                return f"0:{code - 128}" if code > 128 else f"{code}:0"
    return ""
