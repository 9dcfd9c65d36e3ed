"""Reading dcgm-exporter, two ways (docs/gpu-metrics.md, "Two ways to read"): from the
Prometheus server that scrapes it (one PromQL instant query, `api.promql`) when a URL is set
(`gryvia config set-prometheus`, GRYVIA_PROMETHEUS_URL, `gryvia sandbox up`), else, or when it
does not answer, the exporter pods' /metrics through the API server's pod proxy, so a user
needs nothing but their kubeconfig (and `get` on `pods/proxy` in the exporters' namespace)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from gryvia_cli.core.gpuuse import GpuFault
from gryvia_cli.errors import GryviaError
from gryvia_cli.kube import resources as r
from gryvia_operator.api.dcgm import EXPORTER_SELECTOR, GpuReading, metrics_port, parse

CONCURRENT_READS = 8
"""Exporters read at once."""
PROMETHEUS_TIMEOUT = 10.0
"""Seconds to wait for Prometheus' answer before reading the exporters instead."""
POD_PROXY = "the dcgm-exporter pods through the API server"
"""The source named when the readings came through the pod proxy."""


@dataclass(frozen=True)
class GpuRead:
    """What one read found: the readings, "" or a sentence saying why some or all could not be
    read, and where they came from (`Prometheus <url>` or `POD_PROXY`, with why Prometheus
    was passed over when it was)."""

    readings: list[GpuReading]
    note: str
    source: str


def read_gpus(
    access: Any, nodes: Collection[str], pods: Collection[str] = (), prometheus: str = ""
) -> GpuRead:
    """The readings of the GPUs on `nodes` (all nodes when empty), only of those the pods
    named `pods` hold when given: from the Prometheus server at URL `prometheus` when given
    and it answers, else from the running dcgm-exporter pods (see `GpuRead`)."""
    if prometheus:
        try:
            found = query_prometheus(prometheus, pods, () if pods else nodes)
            return GpuRead(found, "", f"Prometheus {prometheus}")
        except (OSError, ValueError) as exc:
            passed = f"{POD_PROXY} (Prometheus {prometheus} did not answer: {exc})"
            readings, note = read_exporters(access, nodes, pods)
            return GpuRead(readings, note, passed)
    readings, note = read_exporters(access, nodes, pods)
    return GpuRead(readings, note, POD_PROXY)


def query_prometheus(
    url: str, pods: Collection[str] = (), hosts: Collection[str] = ()
) -> list[GpuReading]:
    """dcgm-exporter's series from the Prometheus at `url`: one instant query
    (`api.promql.exporter_query`). Raises OSError when it cannot be reached or answers with
    an HTTP error, ValueError when its answer is not a query result."""
    import httpx

    from gryvia_operator.api.promql import QUERY_PATH, exporter_query, readings_from_http

    try:
        answer = httpx.get(
            url.rstrip("/") + QUERY_PATH,
            params={"query": exporter_query(pods, hosts)},
            timeout=PROMETHEUS_TIMEOUT,
        )
    except httpx.HTTPError as exc:
        raise OSError(f"{type(exc).__name__}: {exc}") from exc
    return readings_from_http(answer.status_code, answer.text)


def read_exporters(
    access: Any, nodes: Collection[str], pods: Collection[str] = ()
) -> tuple[list[GpuReading], str]:
    """The readings of the running dcgm-exporter pods on `nodes` (all nodes when empty), only
    of the GPUs the pods named `pods` hold when given, and "" or a sentence saying why some or
    all could not be read (no exporter pods, no right to list pods cluster-wide, an exporter
    that did not answer)."""
    try:
        exporters = access.items(r.POD, None, label_selector=EXPORTER_SELECTOR)
    except GryviaError as exc:
        return [], f"cannot find the dcgm-exporter pods: {exc}"
    wanted = [
        p
        for p in exporters
        if (p.get("status") or {}).get("phase") == "Running"
        and (not nodes or (p.get("spec") or {}).get("nodeName") in nodes)
    ]
    if not wanted:
        return [], f"no running dcgm-exporter pod ({EXPORTER_SELECTOR}) on the job's nodes"
    from concurrent.futures import ThreadPoolExecutor

    def read(pod: dict[str, Any]) -> tuple[list[GpuReading], str]:
        meta = pod["metadata"]
        try:
            body = access.pod_proxy_get(
                meta["name"], meta["namespace"], metrics_port(pod), "metrics"
            )
            return parse(body.decode("utf-8", "replace"), pods), ""
        except (GryviaError, ValueError) as exc:
            return [], f"{meta['namespace']}/{meta['name']}: {exc}"

    with ThreadPoolExecutor(min(len(wanted), CONCURRENT_READS)) as pool:
        done = list(pool.map(read, wanted))
    readings = [reading for found, _ in done for reading in found]
    return readings, "; ".join(problem for _, problem in done if problem)


def fault_jobs(access: Any, faults: Sequence[GpuFault]) -> dict[tuple[str, str], str | None]:
    """The job of each faulty GPU's pod, by (namespace, pod): None when the pod is gone, has
    no job label or cannot be read."""
    from gryvia_cli.core.jobs import job_of_pod

    jobs: dict[tuple[str, str], str | None] = {}
    for fault in faults:
        if not fault.pod or (fault.namespace, fault.pod) in jobs:
            continue
        try:
            pod = access.get(r.POD, fault.pod, fault.namespace)
        except GryviaError:
            pod = {}
        jobs[(fault.namespace, fault.pod)] = job_of_pod(pod) if pod else None
    return jobs
