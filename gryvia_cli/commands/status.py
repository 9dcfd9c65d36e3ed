"""`gryvia status`: the platform report, or one job's state (`--watch` keeps it live)."""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer

from gryvia_cli.cli.options import NamespaceOpt, OutputOpt
from gryvia_cli.cli.session import Session, session
from gryvia_cli.core.cells import Marked
from gryvia_cli.errors import GryviaError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    emit,
    emit_marked,
    failure,
    render_data,
    render_table,
    section,
    warn,
)

app = typer.Typer()
STATE_MARKERS = {"OK": "ok", "Warning": "warn", "Error": "error", "disabled": "disabled"}


@app.command("status", rich_help_panel="Workloads")
def status(
    ctx: typer.Context,
    job: Annotated[
        str | None,
        typer.Argument(help="A job name; without it, the platform report.", show_default=False),
    ] = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
    watch: Annotated[
        bool,
        typer.Option(
            "-w", "--watch", "-f", "--follow", help="With JOB: refresh until the job ends."
        ),
    ] = False,
    brief: Annotated[
        bool, typer.Option("--brief", help="Platform: print OK or the broken components only.")
    ] = False,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait", help="Platform: re-check every 2s until no required part is broken."
        ),
    ] = False,
    wait_timeout: Annotated[
        str,
        typer.Option(
            "--wait-timeout",
            metavar="DURATION",
            help="Platform: give up --wait after this long (90s, 5m, 1h).",
        ),
    ] = "5m",
    platform_namespace: Annotated[
        str | None,
        typer.Option(
            "--platform-namespace",
            help="Namespace of the operator Deployment "
            "[default: gryvia-system; env: GRYVIA_PLATFORM_NAMESPACE].",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Platform health, or one job's state.

    Platform: operator (Deployment, or a local operator's lease), webhook, CRDs, GPU nodes,
    jobs by phase, and deleted job pods still held by the gryvia.io/save-log finalizer; exit 1
    when a required part (operator, CRDs, held pods with no operator) is broken. Read failures
    are warnings. Job: spec summary, phase, message, the nodes its pods are bound to, the
    cost so far, conditions, pods, events and how long it waited and ran.

    Examples:
      gryvia status
      gryvia status --brief || echo broken
      gryvia status train-ddp --watch

    JSON/YAML: platform {apiVersion: cli.gryvia.io/v1, kind: PlatformStatus, overall,
    components: [{name, state, message, required}], warnings, errors, jobs: {phase: count}};
    job {apiVersion: cli.gryvia.io/v1, kind: JobStatus, job, pods, events} (the API objects),
    nodes (bound) and cost {soFar, perHour, currency, metered}.
    """
    state = session(ctx)
    if job:
        from gryvia_cli.views.job import show_job

        show_job(state, job, namespace, output, watch=watch)
        return
    from gryvia_operator.api import parse_duration

    ns = platform_namespace or state.settings().platform_namespace
    deadline = time.monotonic() + parse_duration(wait_timeout, field="--wait-timeout")
    while True:
        report = platform_report(state, ns)
        if not wait or not report.broken or time.monotonic() > deadline:
            break
        time.sleep(2)
    show_platform(state, report, state.fmt(output), brief)
    if report.broken:
        raise typer.Exit(1)


def platform_report(state: Session, platform_ns: str) -> Any:
    """Read everything the platform report needs (failures become warnings) and build it."""
    from gryvia_cli.core.jobs import summarize_job
    from gryvia_cli.core.platform import PlatformInputs, build_report, local_webhook_urls
    from gryvia_cli.views.reads import read_supply, try_read
    from gryvia_operator.api.names import LABEL_JOB

    access = state.access()
    notes: list[str] = []
    inputs = PlatformInputs(platform_namespace=platform_ns, read_warnings=notes)
    inputs.served = access.served_resources(f"{r.AIJOB.group}/{r.AIJOB.version}")
    inputs.expected = {res.plural: res.kind for res in r.GRYVIA_RESOURCES}
    inputs.deployments = try_read(
        lambda: access.items(r.DEPLOYMENT, platform_ns), "Deployments", notes
    )
    inputs.pods = try_read(
        lambda: access.items(r.POD, platform_ns), f"pods in {platform_ns}", notes
    )
    inputs.leases = _quiet(
        lambda: access.items(r.LEASE, None, field_selector="metadata.namespace!=kube-node-lease")
    )
    inputs.peerings = _quiet(lambda: access.items(r.KOPF_PEERINGS))
    inputs.webhooks = try_read(
        lambda: access.items(r.VALIDATING_WEBHOOKS), "webhook configurations", notes
    )
    inputs.local_webhooks = [(url, _answers(url)) for url in local_webhook_urls(inputs.webhooks)]
    jobs = None
    if inputs.served and "gryviaaijobs" in inputs.served:
        raw = try_read(lambda: access.items(r.AIJOB, None), "GryviaAIJobs", notes)
        jobs = [summarize_job(j) for j in raw] if raw is not None else None
    inputs.jobs = jobs
    inputs.job_pods = _quiet(lambda: access.items(r.POD, None, label_selector=LABEL_JOB))
    inputs.gpu_nodes = read_supply(access, jobs, notes).nodes
    return build_report(inputs, state.now())


def _answers(url: str, timeout: float = 1.0) -> bool:
    """True when something accepts TCP connections at the URL's host and port."""
    import socket
    from urllib.parse import urlparse

    parsed = urlparse(url)
    try:
        with socket.create_connection(
            (parsed.hostname or "127.0.0.1", parsed.port or 443), timeout
        ):
            return True
    except OSError:
        return False


def _quiet(read: Any) -> Any:
    try:
        return read()
    except GryviaError:
        return None


def show_platform(state: Session, report: Any, fmt: OutputFormat, brief: bool) -> None:
    """Print the platform report: brief, JSON/YAML, or the component table and notes."""
    if fmt in MACHINE_FORMATS:
        from gryvia_operator.api.names import CLI_API_VERSION

        render_data(
            {"apiVersion": CLI_API_VERSION, "kind": "PlatformStatus"} | report.as_dict(), fmt
        )
        return
    if brief:
        bad = [
            c
            for c in report.components
            if c.state in ("Error", "Warning") and (c.required or c.state == "Error")
        ]
        if not bad:
            emit("OK")
        for comp in bad:
            emit(f"{comp.name}: {comp.state}: {comp.message}")
        return
    ctx = state.access().context
    section(f"Gryvia status: context {ctx.name} ({ctx.server})")
    render_table(
        ["component", "state", "detail"],
        [
            [
                c.name + (" *" if c.required else ""),
                Marked(c.state, STATE_MARKERS.get(c.state, "unknown")),
                c.message,
            ]
            for c in report.components
        ],
    )
    emit("  * required: `gryvia status` exits 1 when one of these is Error")
    for text in report.warnings:
        warn(text)
    for text in report.errors:
        failure(text)
    emit_marked(
        [
            "Overall: ",
            Marked(
                report.overall.upper(), {"ok": "ok", "warn": "warn"}.get(report.overall, "error")
            ),
        ]
    )
