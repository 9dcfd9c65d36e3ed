"""`gryvia reservation`: the GryviaReservation a `create` builds from its options, and the
rows and details `list` and `get` print. Pure: times are passed in (UTC)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from gryvia_cli.core.billing import parse_when
from gryvia_cli.core.cells import Marked
from gryvia_cli.core.manifests import new_object
from gryvia_operator.api import GryviaReservation
from gryvia_operator.api.helpers import DurationError, parse_duration
from gryvia_operator.api.reservation import cron_problem

OWNER_TYPES = ("team", "namespace", "tenant")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
RESERVATION_COLUMNS = ("name", "owner", "gpus", "gpu type", "state", "nodes", "window")
_STATE_MARKS = {"active": "ok", "pending": "info", "expired": "disabled"}


def parse_owner(text: str) -> dict[str, str]:
    """`TYPE:NAME` (team, namespace or tenant) -> `{type, name}`; ValueError naming --owner."""
    kind, sep, name = text.partition(":")
    if not sep or kind not in OWNER_TYPES or not name:
        raise ValueError(
            f"--owner {text!r}: use TYPE:NAME with TYPE team, namespace or tenant, "
            "e.g. team:ml or tenant:acme"
        )
    return {"type": kind, "name": name}


def _stamp(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_reservation(
    name: str,
    *,
    owner: str,
    now: dt.datetime,
    gpu_type: str | None = None,
    gpus: int | None = None,
    nodes: Sequence[str] = (),
    start: str | None = None,
    end: str | None = None,
    duration: str | None = None,
    cron: str | None = None,
    exclusive: bool = False,
) -> dict[str, Any]:
    """The GryviaReservation to create. Schedule: `cron` -> recurring (windows of
    `duration`, optional `start`/`end` bounds); `start` -> scheduled; else immediate (from
    now). The end of a one-off window is `end` or its start + `duration` (not both), and must
    be after `now`; `nodes` excludes `gpu_type`/`gpus`. Raises ValueError naming the option
    and the fix."""
    if not _NAME.match(name) or len(name) > 63:
        raise ValueError(
            f"name {name!r}: lowercase letters, digits and '-', at most 63 characters "
            "(node labels carry it)"
        )
    resources: dict[str, Any] = {}
    if nodes and (gpu_type or gpus is not None):
        raise ValueError(
            "--node holds the named nodes whole (all their GPUs): leave out --gpu-type and "
            "--gpus, or leave out --node to let the operator pick nodes of a GPU type"
        )
    if nodes:
        resources["nodes"] = list(dict.fromkeys(nodes))
    elif gpus is None or not gpu_type:
        raise ValueError("give --gpu-type and --gpus (GPUs to hold), or --node NAME")
    if gpu_type:
        resources["gpuType"] = gpu_type
    if gpus is not None:
        resources["gpuCount"] = gpus
    span = None
    if duration:
        try:
            span = dt.timedelta(seconds=parse_duration(duration, field="--duration"))
        except DurationError as exc:
            raise ValueError(str(exc)) from None
    first = parse_when(start, option="--start") if start else None
    last = parse_when(end, option="--end") if end else None
    schedule: dict[str, Any]
    if cron:
        problem = cron_problem(cron)
        if problem:
            raise ValueError(problem.replace("schedule.recurrence.cron", "--cron"))
        if not duration:
            raise ValueError("--cron needs --duration: the length of each window, e.g. 8h")
        schedule = {"type": "recurring", "recurrence": {"cron": cron, "duration": duration}}
        if first:
            schedule["startTime"] = _stamp(first)
        if last:
            if last <= now:
                raise ValueError(
                    f"--end {_stamp(last)} is before now ({_stamp(now)}): no window would "
                    "come; give a later --end or leave it out"
                )
            schedule["endTime"] = _stamp(last)
    else:
        begin = first or now
        if last is None and span is None:
            raise ValueError("give --end TIME or --duration D (e.g. 2h): when the window ends")
        if last is not None and span is not None:
            raise ValueError(
                "give --end TIME or --duration D, not both: a one-off window has one end "
                "(--duration takes it from the start)"
            )
        finish = last or begin + (span or dt.timedelta())
        if finish <= begin:
            raise ValueError(f"--end {_stamp(finish)} must be after the start {_stamp(begin)}")
        if finish <= now:
            raise ValueError(
                f"the window ends at {_stamp(finish)}, before now ({_stamp(now)}): "
                "give a later --end or --start"
            )
        schedule = {"type": "scheduled" if first else "immediate", "endTime": _stamp(finish)}
        if first:
            schedule["startTime"] = _stamp(first)
    spec: dict[str, Any] = {
        "owner": parse_owner(owner),
        "resources": resources,
        "schedule": schedule,
    }
    if exclusive:
        spec["guarantees"] = {"exclusive": True}
    return new_object("GryviaReservation", name, spec)


def window_text(res: GryviaReservation) -> str:
    """The schedule in one line: `until T`, `T1 -> T2`, or `<cron> for <duration>`."""
    sched = res.spec.schedule
    if sched.type == "recurring" and sched.recurrence:
        return f"{sched.recurrence.cron} for {sched.recurrence.duration} (UTC)"
    end = _stamp(sched.end_time) if sched.end_time else "?"
    if sched.type == "scheduled" and sched.start_time:
        return f"{_stamp(sched.start_time)} -> {end}"
    return f"until {end}"


def reservation_row(res: GryviaReservation) -> list[Any]:
    """One `list` row."""
    status = res.status
    state = (status.state if status else None) or "pending"
    owner = res.spec.owner
    nodes = ", ".join(status.allocated_nodes or []) if status else ""
    return [
        res.name,
        f"{owner.type}:{owner.name}",
        res.spec.resources.gpu_count or (status.allocated_gpus if status else None) or "-",
        res.spec.resources.gpu_type or "-",
        Marked(state, _STATE_MARKS.get(state, "unknown")),
        nodes or "-",
        window_text(res),
    ]


def reservation_details(res: GryviaReservation) -> list[tuple[str, str]]:
    """`get`'s label/value lines."""
    status = res.status
    owner = res.spec.owner
    spec = res.spec.resources
    out = [
        ("Name", res.name),
        ("Owner", f"{owner.type}:{owner.name}"),
        ("Opt in", f"annotate jobs gryvia.io/reservation: {res.name}"),
        ("GPUs", f"{spec.gpu_count or '-'} {spec.gpu_type or ''}".strip()),
        ("Schedule", f"{res.spec.schedule.type}: {window_text(res)}"),
        ("State", (status.state if status else None) or "pending (not seen by the operator)"),
    ]
    if spec.nodes:
        out.append(("Requested nodes", ", ".join(spec.nodes)))
    if status:
        out.append(("Nodes held", ", ".join(status.allocated_nodes or []) or "none"))
        out.append(("GPUs held", str(status.allocated_gpus or 0)))
        if status.actual_start_time:
            out.append(("Held since", _stamp(status.actual_start_time)))
        if status.actual_end_time:
            out.append(("Released at", _stamp(status.actual_end_time)))
        if status.message:
            out.append(("Message", status.message))
    return out
