"""`gryvia sacct`'s history: live jobs and GryviaJobRecords as one list, filtered as Slurm's
sacct filters its database, and sacct's `-P` output.

Sources: sacct(1) (Slurm 22.05) for the options and the DEFAULT TIME WINDOW, and slurmdbd's
query (`as_mysql_jobacct_process.c`, `_state_time_string` and `slurmdb_job_cond_def_start_end`)
for the exact rules `in_window` follows:

* no `-s`: a job eligible (submitted) before -E that had not ended before -S;
* `-s` with a running or pending state: a job in that state at some time in [-S, -E];
* `-s` with an end state (CD, F, CA, TO, PR, ...): a job that ended in that state in [-S, -E];
* defaults: without `-s`, -S midnight UTC today and -E now; with `-s`, -S now and -E = -S.

A live GryviaAIJob wins over its record (same UID); records of deleted jobs fill the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time
from decimal import Decimal, InvalidOperation
from typing import Any

from gryvia_cli.core import timefmt
from gryvia_cli.core.slurmfmt import (
    Field,
    compress_hostlist,
    slurm_elapsed,
    slurm_limit,
    slurm_timestamp,
)
from gryvia_cli.core.slurmviews import STATES, SlurmJob, sacct_row, state_of

END_CODES = frozenset({"CD", "F", "CA", "TO", "PR", "NF", "OOM", "DL", "BF", "RV"})
"""sacct's end states (its `-s` compares their end time with the window)."""
STATE_NAMES = {
    "PENDING": "PD", "RUNNING": "R", "SUSPENDED": "S", "COMPLETED": "CD", "CANCELLED": "CA",
    "FAILED": "F", "TIMEOUT": "TO", "PREEMPTED": "PR", "CONFIGURING": "CF", "NODE_FAIL": "NF",
    "OUT_OF_MEMORY": "OOM", "DEADLINE": "DL", "BOOT_FAIL": "BF", "REVOKED": "RV",
}  # fmt: skip
"""sacct's long state names and their codes (both spellings are accepted by `-s`)."""


@dataclass(frozen=True)
class AcctJob:
    """One sacct line (`row`, by field name) with what the filters read: the job's UID,
    account (tenant), user (submitter, else the tenant), state code, and its eligible
    (submit), start and end times (None: not yet)."""

    row: Mapping[str, str]
    uid: str
    account: str
    user: str
    code: str
    eligible: datetime | None
    start: datetime | None
    end: datetime | None


def live_job(item: SlurmJob, now: datetime, log: bool) -> AcctJob:
    """The AcctJob of a GryviaAIJob that still exists; `log`: its pods or a saved log hold
    its output (field Log)."""
    row = {**sacct_row(item, now), "User": item.login, "Log": "yes" if log else "no"}
    job = item.job
    end = job.completed if job.terminal else None
    return AcctJob(
        row, item.uid, item.user, item.login, state_of(job)[0], job.created, job.started, end
    )


def record_job(raw: Mapping[str, Any], log: bool) -> AcctJob | None:
    """The AcctJob of a GryviaJobRecord's job (None for a roll-up or an unreadable record);
    `log`: the job's saved-logs ConfigMap still exists."""
    spec = raw.get("spec") or {}
    if spec.get("rollup") or not spec.get("job"):
        return None
    code, name = STATES.get(str(spec.get("phase") or ""), ("CA", "CANCELLED"))
    if spec.get("timedOut"):
        code, name = "TO", "TIMEOUT"
    submitted, started = _time(spec.get("submitted")), _time(spec.get("started"))
    ended = _time(spec.get("ended"))
    elapsed = timefmt.seconds_between(started, ended) if started and ended else 0
    gpus, pods = _int(spec.get("gpus"), 0), _int(spec.get("pods"), 1)
    hours = _decimal(spec.get("gpuHours"))
    eff = spec.get("gpuEff")
    eff = float(eff) if isinstance(eff, int | float) else None
    tenant = str(spec.get("tenant") or "")
    user = str(spec.get("user") or tenant)
    row = {
        "JobID": str(spec["job"]), "JobName": str(spec.get("jobName") or spec["job"]),
        "Partition": str(spec.get("gpuType") or ("cpu" if not gpus else "any")),
        "Account": tenant, "User": user, "AllocCPUS": str(_int(spec.get("cpus"), pods)),
        "State": name, "ExitCode": exit_text(spec.get("exitCode"), code),
        "Elapsed": slurm_elapsed(elapsed or 0), "GPUHours": f"{hours:.2f}",
        "NNodes": str(pods), "AllocGPUs": str(gpus),
        "Start": slurm_timestamp(started) if started else "Unknown",
        "End": slurm_timestamp(ended) if ended else "Unknown",
        "Submit": slurm_timestamp(submitted) if submitted else "Unknown",
        "Timelimit": slurm_limit(_int(spec.get("limitSeconds"), 0) or None),
        "NodeList": compress_hostlist(tuple(spec.get("nodes") or ())) or "None assigned",
        "Reason": "None",
        "GPUEff": f"{eff:.1f}%" if eff is not None else "",
        "GPUActHrs": f"{hours * Decimal(str(eff)) / 100:.2f}" if eff is not None else "",
        "Log": "yes" if log else "no",
    }  # fmt: skip
    uid = str(spec.get("jobUID") or "")
    return AcctJob(row, uid, tenant, user, code, submitted, started, ended)


def exit_text(code: object, state_code: str) -> str:
    """sacct's `exit:signal` of a recorded container exit code (above 128: a signal, `0:9`);
    a completed job without one is `0:0`, any other ""."""
    if isinstance(code, int):
        return f"0:{code - 128}" if code > 128 else f"{code}:0"
    return "0:0" if state_code == "CD" else ""


def _time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _decimal(value: object) -> Decimal:
    try:
        return Decimal(str(value)) if value is not None else Decimal(0)
    except InvalidOperation:
        return Decimal(0)


def merge(live: Iterable[AcctJob], recorded: Iterable[AcctJob]) -> list[AcctJob]:
    """Live jobs, then the records of jobs no live one has the UID of (a live job wins; a
    new job that reuses a deleted one's name is a different job), each listed once."""
    out = list(live)
    seen = {job.uid for job in out if job.uid}
    for job in recorded:
        if job.uid and job.uid in seen:
            continue
        seen.add(job.uid)
        out.append(job)
    return out


def parse_states(values: Sequence[str] | None) -> set[str]:
    """`-s` values (comma-separated, codes or long names, any case) as state codes."""
    words = {s.strip().upper() for v in values or [] for s in v.split(",") if s.strip()}
    return {STATE_NAMES.get(w, w) for w in words}


def window(
    start: datetime | None, end: datetime | None, states: set[str], now: datetime
) -> tuple[datetime, datetime]:
    """sacct's time window (DEFAULT TIME WINDOW in sacct(1)): without -s, -S defaults to
    midnight UTC today and -E to now; with -s, -S to now and -E to -S."""
    if states:
        begin = start or now
        return begin, end or begin
    midnight = datetime.combine(now.astimezone(UTC).date(), time(), tzinfo=UTC)
    return start or midnight, end or now


def in_window(job: AcctJob, begin: datetime, end: datetime, states: set[str]) -> bool:
    """True when sacct lists `job` for the window [begin, end] and the states (codes; empty:
    any), by slurmdbd's rules (module docstring)."""
    if not states:
        return (
            job.eligible is not None
            and job.eligible < end
            and (job.end is None or job.end >= begin)
        )
    if job.code not in states:
        return False
    if job.code in END_CODES:
        return job.end is not None and begin <= job.end <= end
    if job.code in ("R", "CF", "S"):
        return job.start is not None and job.start < end and (job.end is None or begin < job.end)
    return job.eligible is not None and job.eligible < end  # pending now, since eligible


def picked(job: AcctJob, users: set[str], accounts: set[str]) -> bool:
    """`-u` and `-A`: the user (submitter; a tenant's name also picks the tenant's jobs, as
    `-u` did before it meant the submitter) and the account (tenant) are among those asked
    (an empty set: any)."""
    if accounts and job.account not in accounts:
        return False
    return not users or job.user in users or job.account in users


def rollup_notes(
    rollups: Iterable[Mapping[str, Any]],
    begin: datetime,
    end: datetime,
    accounts: set[str] | None,
) -> list[str]:
    """One line per roll-up (a GryviaJobRecord with `spec.rollup`) of the asked accounts
    (None: any) whose month meets [begin, end]: its jobs are no longer listed one by one."""
    out = []
    for raw in rollups:
        spec = raw.get("spec") or {}
        roll = spec.get("rollup") or {}
        month, tenant = str(roll.get("month") or ""), str(spec.get("tenant") or "")
        if not month or (accounts is not None and tenant not in accounts):
            continue
        try:
            first = datetime.strptime(month, "%Y-%m").replace(tzinfo=UTC)
        except ValueError:
            continue
        through = _time(roll.get("through")) or first
        if first > end or through < begin:
            continue
        counts = sorted((roll.get("states") or {}).items())
        states = ", ".join(f"{n} {STATES.get(k, ('', k))[1]}" for k, n in counts)
        cost = f"; cost {_decimal(spec.get('cost')):.2f} {spec.get('currency') or 'USD'}"
        out.append(
            f"note: jobs of account {tenant} that ended in {month} (through "
            f"{slurm_timestamp(through)}) are only in a roll-up: {roll.get('jobs', 0)} jobs "
            f"({states}); {_decimal(spec.get('gpuHours')):.2f} GPU-hours"
            + (cost if spec.get("cost") is not None else "")
        )
    return out


def render_parsable(
    fields: Sequence[Field], rows: Iterable[Mapping[str, str]], *, header: bool = True
) -> list[str]:
    """sacct's `-P/--parsable2`: values joined by `|`, no trailing `|`, no padding or
    truncation; the header names the fields."""
    lines = ["|".join(f.header for f in fields)] if header else []
    lines += ["|".join(row.get(f.key, "") for f in fields) for row in rows]
    return lines
