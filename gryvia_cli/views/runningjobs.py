"""`gryvia queue --running`: read the jobs, keep the running ones, print them idlest first
(`core.running`), once or redrawn on every change with `-w`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gryvia_cli.cli.options import render_entries
from gryvia_cli.kube import resources as r
from gryvia_cli.output import OutputFormat, render_table

if TYPE_CHECKING:
    from gryvia_cli.cli.session import Session
    from gryvia_cli.core.running import RunningJob


def read_running(
    state: Session,
    show_ns: str | None,
    gpu_type: str | None,
    fallback: str,
    users: frozenset[str] | None,
) -> list[RunningJob]:
    """The running jobs of `show_ns` (None: every readable namespace), of `gpu_type` and of
    `users` when given, idlest first."""
    from gryvia_cli.core.jobs import summarize_job
    from gryvia_cli.core.running import running_jobs
    from gryvia_cli.views.reads import read_jobs

    raw, _ = read_jobs(state.access(), show_ns, fallback)
    jobs = [summarize_job(j) for j in raw]
    if gpu_type is not None:
        jobs = [j for j in jobs if j.type_key.lower() == gpu_type.lower()]
    if users is not None:
        jobs = [j for j in jobs if j.submitter in users]
    return running_jobs(jobs, state.now())


def render_running(
    state: Session, entries: list[RunningJob], fmt: OutputFormat, ns: str | None
) -> None:
    """Print `entries` in `fmt` (a table unless json, yaml or name)."""
    from gryvia_cli.core.running import RUNNING_COLUMNS, RUNNING_WIDE_COLUMNS, running_row

    items = [e.as_dict() for e in entries]
    names = [f"{r.AIJOB.qualified}/{e.job.name}" for e in entries]
    empty = "No jobs running" + ("" if ns is None else f" in namespace {ns}") + "."
    if render_entries(fmt, "RunningJobs", items, names, empty):
        return
    wide = fmt is OutputFormat.wide
    columns = list(RUNNING_WIDE_COLUMNS if wide else RUNNING_COLUMNS)
    if ns is None:
        columns.insert(1, "namespace")
    now = state.now()
    rows = [running_row(e, all_namespaces=ns is None, wide=wide, now=now) for e in entries]
    render_table(columns, rows)


def show_running(
    state: Session,
    fmt: OutputFormat,
    show_ns: str | None,
    gpu_type: str | None,
    fallback: str,
    users: frozenset[str] | None,
    watch: float | None,
) -> None:
    """Print the running jobs once, or with `watch` redraw them on every job change (at most
    every `watch` seconds) until Ctrl-C."""
    if not watch:
        entries = read_running(state, show_ns, gpu_type, fallback, users)
        render_running(state, entries, fmt, show_ns)
        return
    from gryvia_cli.views.streams import new_link
    from gryvia_cli.views.watching import redraw_on_changes

    link = new_link(state.access())

    def draw() -> None:
        entries = link.call(lambda: read_running(state, show_ns, gpu_type, fallback, users))
        render_running(state, entries, fmt, show_ns)

    redraw_on_changes(state.access(), [(r.AIJOB, None)], draw, watch)
