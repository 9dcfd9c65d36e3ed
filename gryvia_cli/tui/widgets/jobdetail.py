"""JobOverview: one job's spec, status, cost, waiting reason, GPU activity per replica over
time, conditions, pods and events.

Every value is user data: string cells go through `views.usertext.user_text` (Rich would
read a `str` cell as markup and drop `[print(i) for i in x]` from a command)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from gryvia_cli.core.events import event_time, sort_events
from gryvia_cli.core.gpuuse import replica_lines, sparkline
from gryvia_cli.core.jobs import (
    JobSummary,
    durations,
    gpu_text,
    preemption_text,
    priority_text,
    sort_pods,
)
from gryvia_cli.core.spend import JobCost
from gryvia_cli.core.timefmt import age, format_seconds
from gryvia_cli.tui.rows import money, phase_cell
from gryvia_cli.tui.store import JobItem
from gryvia_cli.usertext import user_text

LOW_ACTIVITY = 10
"""A replica's newest activity under this (percent) is marked, as the Jobs view's GPU% is."""


@dataclass(frozen=True)
class JobFacts:
    """Everything the overview shows, gathered by the Job view."""

    item: JobItem
    now: datetime
    cost: JobCost
    reason: str | None
    pods: Sequence[Mapping[str, Any]]
    events: Sequence[Mapping[str, Any]]


def pod_nodes(pods: Sequence[Mapping[str, Any]]) -> list[str]:
    """The nodes the pods run on, in order, once each: where a job without GPUs (so without
    `status.nodesAllocated`) runs, as `gryvia describe job` shows it."""
    names = (str((p.get("spec") or {}).get("nodeName") or "") for p in pods)
    return list(dict.fromkeys(n for n in names if n))


def pod_facts(pod: Mapping[str, Any]) -> tuple[str, str, str, str, int]:
    """(name, node, phase, ready `r/n`, restarts) of a raw pod."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    total = len(spec.get("containers") or statuses)
    return (
        str(meta.get("name") or ""),
        str(spec.get("nodeName") or "-"),
        str(status.get("phase") or "Pending"),
        f"{ready}/{total}",
        restarts,
    )


def _waiting_rows(job: JobSummary) -> list[tuple[str, RenderableType]]:
    """`waiting` (the operator's blocker, as `gryvia status` says it) while the job waits."""
    from gryvia_operator.api.pendingtext import waiting_line

    if job.pending is None or job.terminal:
        return []
    line = waiting_line(job.pending, job.estimated_start).removeprefix("waiting: ")
    return [("waiting", user_text(line))]


def plain(cell: RenderableType) -> RenderableType:
    """A string cell as plain Text (never markup); other renderables as they are."""
    return user_text(cell) if isinstance(cell, str) else cell


class JobOverview(Static):
    """Renders JobFacts; styles come from the `marker--*` and `overview--*` classes."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "overview--heading",
        "overview--label",
        "overview--reason",
        "marker--ok",
        "marker--warn",
        "marker--error",
        "marker--disabled",
        "marker--unknown",
        "marker--dim",
    }

    def show(self, facts: JobFacts) -> None:
        """Render `facts`."""
        self.update(self._render_facts(facts))

    def _style(self, name: str) -> Any:
        return self.get_component_rich_style(name, partial=True)

    def _heading(self, text: str) -> Text:
        return Text(f"━━━ {text} ━━━", style=self._style("overview--heading"))

    def _pairs(self, rows: Sequence[tuple[str, RenderableType]]) -> Table:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style=self._style("overview--label"), no_wrap=True)
        grid.add_column(overflow="fold")
        for label, value in rows:
            grid.add_row(label, plain(value))
        return grid

    def _render_facts(self, f: JobFacts) -> RenderableType:
        job, raw = f.item.summary, f.item.raw
        spec = raw.get("spec") or {}
        phase_text, marker = phase_cell(job)
        times = durations(job, f.now)
        command = shlex.join(str(x) for x in (spec.get("command") or []) + (spec.get("args") or []))
        left = self._pairs(
            [
                ("type", job.job_type or "-"),
                ("image", job.image or "-"),
                ("gpus", gpu_text(job)),
                ("priority", priority_text(job)),
                *([("preempted", preemption_text(job))] if job.preemptions else []),
                ("timeout", job.timeout or "-"),
                ("storage", str(spec.get("storage") or "-")),
                ("command", command or "-"),
                ("tenant", f.item.tenant or "-"),
            ]
        )
        cost = f.cost
        burn = (
            f"{money(cost.per_hour, cost.currency)}/h"
            if cost.per_hour
            else "no GPUs, no GPU price"
            if not job.total_gpus
            else "no price for this GPU type"
        )
        right = self._pairs(
            [
                ("phase", user_text(phase_text, self._style(f"marker--{marker}"))),
                ("message", job.message or "-"),
                *_waiting_rows(job),
                ("created", f"{age(job.created, f.now)} ago"),
                ("waited", format_seconds(times["waiting"])),
                ("ran", format_seconds(times["running"])),
                ("ready", f"{job.replicas_ready}/{job.pods}  retries {job.retries}"),
                ("nodes", ", ".join(job.nodes_allocated or pod_nodes(f.pods)) or "-"),
                (
                    "cost",
                    f"{money(cost.so_far, cost.currency)} so far"
                    + (" (metered)" if cost.metered else " (estimate)")
                    + f" · {burn}",
                ),
                (
                    "estimate",
                    money(cost.estimate, cost.currency)
                    if cost.estimate is not None
                    else "open-ended (no timeout)",
                ),
            ]
        )
        top = Table.grid(expand=True, padding=(0, 2))
        top.add_column(ratio=1)
        top.add_column(ratio=1)
        top.add_row(left, right)
        parts: list[RenderableType] = [top]
        if f.reason:
            parts += [
                Text(""),
                user_text(f"⏳ waiting: {f.reason}", self._style("overview--reason")),
            ]
        parts += self._gpu_activity(job, f.now)
        parts += [Text(""), self._heading("Conditions"), self._conditions(job, f.now)]
        parts += [Text(""), self._heading(f"Pods ({len(f.pods)})"), self._pods(f)]
        parts += [Text(""), self._heading(f"Events ({len(f.events)})"), self._events(f)]
        return Group(*parts)

    def _table(self, *headers: str) -> Table:
        table = Table(box=None, padding=(0, 1), show_edge=False, expand=False)
        for name in headers:
            table.add_column(name, header_style=self._style("overview--label"), overflow="fold")
        return table

    @staticmethod
    def _add(table: Table, *cells: RenderableType) -> None:
        table.add_row(*(plain(cell) for cell in cells))

    def _gpu_activity(self, job: JobSummary, now: datetime) -> list[RenderableType]:
        """Each replica's GPU activity over its recent samples as a sparkline (the ring the
        operator keeps in `status.metrics.replicas`), with the newest and mean; nothing for a
        job without one."""
        lines = replica_lines(job.metrics)
        if not lines:
            return []
        width = max(len(line.values) for line in lines)
        newest = age(job.metrics.get("lastSampleTime"), now)
        heading = f"GPU activity (last {width} samples per replica, newest {newest} ago)"
        table = self._table("REPLICA", "ACTIVITY", "NOW", "MEAN")
        for line in lines:
            low = self._style("marker--warn") if line.last < LOW_ACTIVITY else ""
            self._add(
                table,
                str(line.replica),
                sparkline(line.values, width),
                user_text(f"{line.last}%", low),
                f"{line.mean:.0f}%",
            )
        return [Text(""), self._heading(heading), table]

    def _conditions(self, job: JobSummary, now: datetime) -> RenderableType:
        if not job.conditions:
            return Text("none yet", style=self._style("marker--dim"))
        table = self._table("TYPE", "STATUS", "REASON", "AGE", "MESSAGE")
        for cond in job.conditions:
            ok = cond.get("status") == "True"
            bad = cond.get("type") == "Rejected" and ok
            marker = "error" if bad else ("ok" if ok else "warn")
            self._add(
                table,
                str(cond.get("type") or ""),
                user_text(cond.get("status"), self._style(f"marker--{marker}")),
                str(cond.get("reason") or ""),
                age(cond.get("lastTransitionTime"), now),
                str(cond.get("message") or ""),
            )
        return table

    def _pods(self, f: JobFacts) -> RenderableType:
        if not f.pods:
            return Text("no pods yet", style=self._style("marker--dim"))
        table = self._table("POD", "NODE", "PHASE", "READY", "RESTARTS", "AGE")
        for pod in sort_pods(list(f.pods)):
            name, node, phase, ready, restarts = pod_facts(pod)
            marker = {"Running": "ok", "Succeeded": "ok", "Failed": "error"}.get(phase, "warn")
            created = (pod.get("metadata") or {}).get("creationTimestamp")
            self._add(
                table,
                name,
                node,
                user_text(phase, self._style(f"marker--{marker}")),
                ready,
                Text(str(restarts), style=self._style("marker--warn") if restarts else ""),
                age(created, f.now),
            )
        return table

    def _events(self, f: JobFacts) -> RenderableType:
        if not f.events:
            return Text("no events", style=self._style("marker--dim"))
        table = self._table("AGE", "TYPE", "REASON", "OBJECT", "MESSAGE")
        for ev in sort_events(f.events)[-12:]:
            when = event_time(ev)
            kind = str(ev.get("type") or "")
            target = ev.get("involvedObject") or {}
            self._add(
                table,
                age(when, f.now),
                user_text(kind, self._style("marker--warn") if kind == "Warning" else ""),
                str(ev.get("reason") or ""),
                f"{str(target.get('kind') or '').lower()}/{target.get('name') or ''}",
                str(ev.get("message") or ""),
            )
        return table
