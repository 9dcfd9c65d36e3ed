"""What `gryvia list jobs` reads and prints, without Typer: the Typer command
(`commands.listing`) and the start-up fast path (`cli.fastpath`) both call `list_jobs`.

A table (`-o table|wide`) is printed page by page as the pages of a paged LIST arrive
(`limit`/`continue`, `kube.paging.PAGE_SIZE` jobs a page, as kubectl's `--chunk-size`): the
header once, then each page's rows laid out on their own, so column widths are decided per
page as kubectl decides them per chunk. `-o json` without filters passes the API server's
bytes through; the other machine formats read every page first (they print one document).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from gryvia_cli.errors import ForbiddenError, UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.errors import ExpiredError
from gryvia_cli.kube.paging import PAGE_SIZE
from gryvia_cli.output import OutputFormat, info, render_json_bytes, render_table

Filter = Callable[[dict[str, Any]], bool]
"""Which listed jobs are shown (--phase, --mine, -u)."""


def array_selector(selector: str | None, array: str | None) -> str | None:
    """The label selector with the job array's label added (`list jobs ARRAY`)."""
    if not array:
        return selector
    from gryvia_operator.api.names import LABEL_ARRAY_NAME

    wanted = f"{LABEL_ARRAY_NAME}={array}"
    return f"{selector},{wanted}" if selector else wanted


def wanted_phase(phase: str | None) -> str | None:
    """The canonical `--phase`, or None; a misspelt phase is a usage error listing them."""
    if phase is None:
        return None
    from gryvia_cli.core.phases import parse_phase

    try:
        return parse_phase(phase)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def job_filter(phase: str | None, users: frozenset[str] | None) -> Filter:
    """Keeps jobs in canonical phase `phase` (None: any) submitted by one of `users` (None:
    anyone)."""

    def keep(item: dict[str, Any]) -> bool:
        if phase is not None:
            from gryvia_cli.core.phases import normalize_phase

            if normalize_phase((item.get("status") or {}).get("phase")) != phase:
                return False
        if users is None:
            return True
        from gryvia_operator.api.submitter import submitter_of

        return submitter_of(item) in users

    return keep


def job_rows(
    state: Any, fmt: OutputFormat, ns: str | None
) -> tuple[list[str], Callable[[list[dict[str, Any]]], list[list[Any]]]]:
    """The columns of the jobs table and a function turning jobs into its rows (`-o wide`
    reads the pods and prices once, here). `ns` None: a NAMESPACE column first."""
    from gryvia_cli.core.jobs import (
        JOB_COLUMNS,
        JOB_WIDE_COLUMNS,
        bound_nodes,
        job_row,
        summarize_job,
    )

    access = state.access()
    now = state.now()
    wide = fmt is OutputFormat.wide
    columns = list(JOB_WIDE_COLUMNS if wide else JOB_COLUMNS)
    nodes: dict[tuple[str, str], Any] = {}
    cost_of: Callable[[dict[str, Any]], str] = lambda _item: "-"  # noqa: E731
    if wide:  # pricing pulls in the API models: only -o wide shows costs
        from gryvia_cli.core.spend import cost_text
        from gryvia_cli.views.reads import read_job_pods, read_pricing

        nodes = bound_nodes(read_job_pods(access, ns))
        pricing = read_pricing(access)
        cost_of = lambda item: cost_text(pricing.job_cost(item, now))  # noqa: E731

    def rows_of(items: list[dict[str, Any]]) -> list[list[Any]]:
        rows = []
        for item in items:
            job = summarize_job(item)
            bound = nodes.get((job.namespace, job.name), ())
            row = job_row(job, now, wide=wide, nodes=bound, cost=cost_of(item))
            rows.append([job.namespace, *row] if ns is None else row)
        return rows

    return (["namespace", *columns] if ns is None else columns), rows_of


def read_jobs(state: Any, ns: str | None, selector: str | None) -> dict[str, Any]:
    """The GryviaAIJobList of `ns` (None: every namespace this user may read, with a warning
    naming them when a cluster-wide list is forbidden), in one read."""
    access = state.access()
    if ns is not None:
        return dict(access.list_objects(r.AIJOB, ns, label_selector=selector))
    from gryvia_cli.views.readable import list_readable

    data, _ = list_readable(access, r.AIJOB, state.resolve_namespace(None), label_selector=selector)
    return data


def job_pages(state: Any, ns: str | None, selector: str | None) -> Iterator[list[dict[str, Any]]]:
    """The jobs of `ns` (None: all namespaces) page by page as a paged LIST reads them.

    A cluster-wide list that is forbidden falls back to `read_jobs` (the namespaces this user
    may read, one page); a continue token that expires before the first page is shown restarts
    the list, after that its ExpiredError is raised (rows already printed cannot be taken back,
    as kubectl ends then too)."""
    access = state.access()
    token: str | None = None
    shown = False
    restarts = 2
    while True:
        try:
            body = access.list_objects(
                r.AIJOB, ns, label_selector=selector, limit=PAGE_SIZE, continue_token=token
            )
        except ForbiddenError:
            if ns is not None or token is not None:
                raise
            yield list(read_jobs(state, None, selector).get("items") or [])
            return
        except ExpiredError:
            if shown or token is None or restarts == 0:
                raise
            restarts, token = restarts - 1, None
            continue
        items = list(body.get("items") or [])
        token = (body.get("metadata") or {}).get("continue") or None
        if items or not token:
            shown = shown or bool(items)
            yield items
        if not token:
            return


def list_jobs(
    state: Any,
    fmt: OutputFormat,
    *,
    namespace: str | None,
    all_namespaces: bool,
    selector: str | None,
    phase: str | None = None,
    mine: bool = False,
    user: list[str] | None = None,
) -> None:
    """`gryvia list jobs` without `-w`: print the jobs of the effective namespace (or all,
    with `all_namespaces`) in `fmt`; `namespace` is the command's `-n` (the session's global
    one applies too). Raises GryviaError."""
    from gryvia_cli.views.submitters import wanted_users

    wanted = wanted_phase(phase)
    ns = None if all_namespaces else state.resolve_namespace(namespace)
    users = wanted_users(state, mine, user)
    keep = job_filter(wanted, users)
    if fmt is OutputFormat.json and wanted is None and users is None:
        try:
            render_json_bytes(state.access().list_bytes(r.AIJOB, ns, label_selector=selector))
            return
        except ForbiddenError:
            if ns is not None:
                raise  # all namespaces: read the ones this user may (below)
    if fmt in (OutputFormat.table, OutputFormat.wide):
        _print_pages(state, fmt, ns, selector, keep)
        return
    from gryvia_cli.cli.rawoutput import render_raw

    data = read_jobs(state, ns, selector)
    render_raw({**data, "items": [i for i in data.get("items") or [] if keep(i)]}, r.AIJOB, fmt)


def _print_pages(
    state: Any, fmt: OutputFormat, ns: str | None, selector: str | None, keep: Filter
) -> None:
    columns, rows_of = job_rows(state, fmt, ns)
    printed = False
    for page in job_pages(state, ns, selector):
        rows = rows_of([item for item in page if keep(item)])
        if rows:
            render_table(columns, rows, header=not printed)
            printed = True
    if not printed:
        info(f"No jobs found{'' if ns is None else f' in namespace {ns}'}.")
