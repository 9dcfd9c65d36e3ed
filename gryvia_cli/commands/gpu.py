"""`gryvia gpu training|nccl --job JOB`: per-rank GPU use and the straggler; NCCL's setup."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import typer

from gryvia_cli.cli.options import NamespaceOpt, OutputOpt
from gryvia_cli.cli.session import Session, session
from gryvia_cli.output import MACHINE_FORMATS, emit, render_data, render_table, section, warn
from gryvia_operator.api.names import CLI_API_VERSION

app = typer.Typer(
    help="GPU training and NCCL insights: per-rank GPU use, stragglers, NCCL transports.",
    no_args_is_help=True,
)
JobOpt = Annotated[str, typer.Option("--job", help="The job (GryviaAIJob) name.")]
LOG_LINES = 5000
"""Lines read from the end of each pod's log for step lines."""


@app.command("training")
def training(
    ctx: typer.Context, job: JobOpt, namespace: NamespaceOpt = None, output: OutputOpt = None
) -> None:
    """Each rank's GPU activity, tensor activity and memory, and the straggler.

    Ranks are numbered as torchrun numbers them (replica x GPUs per pod + local rank). The
    straggler is the replica whose step rate (from step lines such as `step 120 ...` in its
    log) is below 80 % of the median, else the rank whose GPU activity is below 80 % of the
    median. GPU figures are read now from the dcgm-exporter pods (docs/gpu-metrics.md).

    Examples:
      gryvia gpu training --job llama-ddp -n tenant-nlp

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: GpuTraining, job, ranks: [{rank, replica,
    pod, node, gpu, activityPercent, field, tensorActivityPercent, memoryUsedMiB, powerWatts}],
    stepRates: {replica: steps/s}, straggler: {replica, rank, reason} | null, advice: [..]}.
    """
    from gryvia_cli.core.gpuuse import job_gpu_use
    from gryvia_cli.core.jobs import replica_of_pod
    from gryvia_cli.core.training import advice, ranks, step_rate, straggler
    from gryvia_cli.views.gpumetrics import read_gpus

    state = session(ctx)
    fmt = state.fmt(output)
    body, pods, ns = _job_and_pods(state, job, namespace)
    live = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
    running = {str(p["metadata"]["name"]): replica_of_pod(p) for p in live}
    nodes = {str((p.get("spec") or {}).get("nodeName")) for p in live}
    read = read_gpus(state.access(), nodes, set(running), state.prometheus_url())
    readings, why = read.readings, read.note
    per_pod = int(((body.get("spec") or {}).get("gpus")) or 1)
    by_rank = ranks(job_gpu_use(readings, ns, running), per_pod)
    rates: dict[int, float] = {}
    for name, replica in running.items():
        rate = step_rate(_log_lines(state, name, ns, tail=LOG_LINES, timestamps=True))
        if rate is not None and replica is not None:
            rates[replica] = rate
    found = straggler(by_rank, rates)
    tips = advice(found, by_rank, job)
    if fmt in MACHINE_FORMATS:
        render_data(
            {
                "apiVersion": CLI_API_VERSION,
                "kind": "GpuTraining",
                "job": f"{ns}/{job}",
                "ranks": [{"rank": r.rank} | r.use.as_dict() for r in by_rank],
                "stepRates": {str(k): round(v, 4) for k, v in sorted(rates.items())},
                "straggler": None if found is None else vars(found),
                "advice": tips,
            },
            fmt,
        )
        return
    section(f"Training {ns}/{job}")
    if not by_rank:
        warn(f"no GPU readings for the job's running pods: {why or 'none reported'}")
    else:
        render_table(
            ["rank", "replica", "pod", "node", "gpu", "activity %", "tensor %", "memory MiB"],
            [
                [
                    r.rank,
                    r.use.replica,
                    r.use.pod,
                    r.use.node,
                    r.use.gpu,
                    _num(r.use.activity),
                    _num(r.use.tensor),
                    _num(r.use.memory_used_mib),
                ]
                for r in by_rank
            ],
        )
    for replica, rate in sorted(rates.items()):
        emit(f"Step rate:  replica {replica}: {rate:.2f} steps/s")
    if found is not None:
        who = (
            f"rank {found.rank} (replica {found.replica})"
            if found.rank is not None
            else (f"replica {found.replica}")
        )
        emit(f"Straggler:  {who}: {found.reason}")
    for tip in tips:
        emit(tip)


@app.command("nccl")
def nccl(
    ctx: typer.Context, job: JobOpt, namespace: NamespaceOpt = None, output: OutputOpt = None
) -> None:
    """NCCL's version, network, transports, rings and warnings, from the job's logs.

    Reads the NCCL_DEBUG=INFO lines of every pod of the job (Gryvia sets NCCL_DEBUG=INFO
    unless the backend is gloo): the network NCCL chose (IB, Socket), the transport of each
    connection (P2P, SHM, IB, Socket; GPUDirect RDMA), the rings and trees, and NCCL's
    warnings. Exits 1 when a job that asked for `network: rdma` went over sockets.

    Examples:
      gryvia gpu nccl --job llama-ddp -n tenant-nlp

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: NcclReport, job, version, networks,
    transports: {P2P, SHM, IB, Socket: connections}, gpuDirectRDMA, rings, trees, nranks,
    warnings, askedRDMA, socketFallback}.
    """
    from gryvia_cli.core.nccl import nccl_lines, read_nccl

    state = session(ctx)
    fmt = state.fmt(output)
    body, pods, ns = _job_and_pods(state, job, namespace)
    lines: list[str] = []
    for pod in pods:
        name = str(pod["metadata"]["name"])
        lines.extend(_log_lines(state, name, ns, tail=None, timestamps=False))
    report = read_nccl(lines)
    asked = (body.get("spec") or {}).get("network") == "rdma"
    if fmt in MACHINE_FORMATS:
        doc = {"apiVersion": CLI_API_VERSION, "kind": "NcclReport", "job": f"{ns}/{job}"}
        render_data(doc | report.as_dict(asked), fmt)
    else:
        for line in nccl_lines(report, f"{ns}/{job}", asked):
            emit(line)
    if report.socket_fallback(asked):
        raise typer.Exit(1)


def _job_and_pods(
    state: Session, job: str, namespace: str | None
) -> tuple[dict[str, Any], list[Mapping[str, Any]], str]:
    """The job (NotFoundError when missing), its pods and its namespace."""
    from gryvia_cli.kube import resources as r
    from gryvia_cli.views.reads import get_namespaced
    from gryvia_cli.views.streams import job_pods

    ns = state.resolve_namespace(namespace)
    access = state.access()
    body = get_namespaced(access, r.AIJOB, job, ns)
    return body, job_pods(access, ns, job), ns


def _log_lines(
    state: Session, pod: str, ns: str, *, tail: int | None, timestamps: bool
) -> list[str]:
    """A pod's log lines ([] when it has none yet or it cannot be read)."""
    from gryvia_cli.errors import GryviaError
    from gryvia_cli.kube.stream import stream_lines

    try:
        response = state.access().pod_log(pod, ns, tail=tail, timestamps=timestamps)
        return list(stream_lines(response))
    except GryviaError:
        return []


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"
