"""Checkpoint guards for people: the guard body `gryvia checkpoint create` applies, the rows of
`gryvia checkpoint list`, the lines of `gryvia checkpoint get` and the Checkpoints line of
`gryvia status JOB` (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from gryvia_cli.core import timefmt
from gryvia_cli.core.manifests import new_object
from gryvia_operator.api.checkpointguard import (
    KEY_CLAIM,
    KEY_DIRECTORY,
    KEY_LAST_COMMIT,
    KEY_RESTORES,
    KEY_STEPS,
    KEY_STORAGE,
    GryviaCheckpointGuard,
)

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


def checkpoints_text(data: Mapping[str, Any], now: datetime) -> str:
    """One line for `gryvia status JOB` from the job's checkpoint ConfigMap data (keys in
    `api.checkpointguard`): the last committed step and when it was seen, then where the
    checkpoints are (folder, claim and its GryviaStorage). E.g. `step 1200 (3 committed, 2m
    ago), in /data/checkpoints/train on claim gryvia-data-fast-nfs (GryviaStorage fast-nfs)`."""
    steps = [s for s in str(data.get(KEY_STEPS) or "").split(",") if s.strip().isdigit()]
    if steps:
        when = str(data.get(KEY_LAST_COMMIT) or "")
        ago = f", {timefmt.age(when, now)} ago" if when else ""
        text = f"step {steps[-1]} ({len(steps)} committed{ago})"
    else:
        text = "no step committed yet"
    restores = str(data.get(KEY_RESTORES) or "0")
    if restores.isdigit() and int(restores):
        text += f", {restores} pod(s) resumed"
    directory, claim = str(data.get(KEY_DIRECTORY) or ""), str(data.get(KEY_CLAIM) or "")
    storage = str(data.get(KEY_STORAGE) or "")
    if directory:
        text += f", in {directory}"
    if claim:
        text += f" on claim {claim}" + (f" (GryviaStorage {storage})" if storage else "")
    return text
