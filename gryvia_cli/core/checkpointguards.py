"""Checkpoint guards for people: the guard body `gryvia checkpoint create` applies, the rows of
`gryvia checkpoint list` and the lines of `gryvia checkpoint get` (pure, no I/O)."""

from __future__ import annotations

from typing import Any

from gryvia_cli.core.manifests import new_object
from gryvia_operator.api.checkpointguard import GryviaCheckpointGuard

GUARD_COLUMNS = ("NAME", "SELECTOR", "INTERVAL", "JOBS", "LAST-RESTORE")
GUARD_WIDE_COLUMNS = (*GUARD_COLUMNS, "DIRECTORY", "WHOLE-JOB")


def parse_selector(items: list[str]) -> dict[str, str]:
    """`key=value` items -> matchLabels. Raises ValueError naming the bad item and the fix."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--selector {item!r}: expected KEY=VALUE, e.g. checkpoint=on")
        out[key.strip()] = value.strip()
    return out


def build_guard(
    name: str,
    namespace: str,
    selector: dict[str, str],
    interval_seconds: int,
    directory: str,
    *,
    restore: bool = True,
    whole_job: bool = True,
) -> dict[str, Any]:
    """A GryviaCheckpointGuard body, validated by the model. Raises ValueError with the
    model's message (field and limit) when a value is out of range."""
    from pydantic import ValidationError

    body = new_object(
        "GryviaCheckpointGuard",
        name,
        {
            "jobSelector": {"matchLabels": selector},
            "checkpointPolicy": {"intervalSeconds": interval_seconds, "directory": directory},
            "restore": {"enabled": restore, "wholeJob": whole_job},
        },
        namespace,
    )
    try:
        GryviaCheckpointGuard.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{where}: {first['msg']}") from None
    return body


def _selector_text(guard: GryviaCheckpointGuard) -> str:
    sel = guard.spec.job_selector
    parts = [f"{k}={v}" for k, v in sorted((sel.match_labels or {}).items())]
    parts += [
        f"{e.key} {e.operator} {','.join(e.values or [])}".strip()
        for e in sel.match_expressions or []
    ]
    return ",".join(parts) or "(every job)"


def _last_restore(guard: GryviaCheckpointGuard) -> str:
    last = guard.status.last_restore if guard.status else None
    return f"{last.job} @ step {last.step}" if last else "-"


def guard_row(guard: GryviaCheckpointGuard) -> list[Any]:
    """NAME, SELECTOR, INTERVAL, JOBS, LAST-RESTORE."""
    jobs = len(guard.status.jobs or []) if guard.status else 0
    interval = f"{guard.spec.checkpoint_policy.interval_seconds}s"
    return [guard.name, _selector_text(guard), interval, jobs, _last_restore(guard)]


def guard_wide_row(guard: GryviaCheckpointGuard) -> list[Any]:
    """The row plus DIRECTORY, WHOLE-JOB (NAMESPACE comes first with `-A`, as in every list)."""
    restore = guard.spec.restore
    whole = "yes" if restore is None or restore.whole_job else "no"
    return [
        *guard_row(guard),
        f"/data/{guard.spec.checkpoint_policy.directory}",
        whole,
    ]


def guard_details(guard: GryviaCheckpointGuard) -> list[tuple[str, str]]:
    """(label, value) lines for `gryvia checkpoint get`: policy, then each job's steps."""
    spec, status = guard.spec, guard.status
    restore = spec.restore
    lines = [
        ("Name", f"{guard.namespace}/{guard.name}"),
        ("Selects", _selector_text(guard)),
        ("Saves", f"every {spec.checkpoint_policy.interval_seconds}s "
                  f"to /data/{spec.checkpoint_policy.directory}"),
        ("Restore", "off" if restore is not None and not restore.enabled else
                    "whole job" if restore is None or restore.whole_job else "lost pods only"),
        ("Last restore", "-"),
    ]  # fmt: skip
    last = status.last_restore if status else None
    if last is not None:
        when = last.time.isoformat().replace("+00:00", "Z")
        lines[-1] = ("Last restore", f"{last.pod} from step {last.step} ({last.reason}, {when})")
    for job in (status.jobs or []) if status else []:
        steps = ", ".join(str(s) for s in job.steps) or "none yet"
        lines.append((f"Job {job.job}", f"committed {steps}; {job.restores} restore(s)"))
    if not status or not status.jobs:
        lines.append(("Jobs", "none guarded yet (or the operator runs without checkpoint guards)"))
    return lines
