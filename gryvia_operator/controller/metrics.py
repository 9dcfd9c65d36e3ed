"""The operator's Prometheus metrics, on `prometheus_client`, in a registry of their own.

Each `Metrics` owns a `CollectorRegistry` (not the process-global one), so tests can build
several. The `_created` series are off: counters restart with the process anyway.
"""

from __future__ import annotations

import resource
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import disable_created_metrics as _disable_created_metrics
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

_disable_created_metrics()  # type: ignore[no-untyped-call]

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
"""Content type of `Metrics.exposition()`: the Prometheus text format 0.0.4."""
DEFAULT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Histogram bucket bounds, in seconds."""


def _rss_bytes() -> float:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return float(pages * resource.getpagesize())
    except OSError:
        return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)


class Metrics:
    """Every metric the operator exports, registered in `self.registry`.

    - `reconciles{controller,result}`: reconciles run (`aijob`/`node`; `ok`, `error`,
      `conflict`);
    - `errors{controller}`: reconciles that failed;
    - `latency{controller}`: seconds per reconcile (`aijob`, `node`) or metering pass
      (`metering`);
    - `writes{kind,verb}`: API writes;
    - `queue_depth{queue}`: keys waiting (`aijob`, `node`, `waiting_for_nodes`), set at scrape;
    - `webhook{webhook,allowed}` and `webhook_latency{webhook}`: admission reviews;
    - `stripe_requests{step,result}`: calls to Stripe (`--stripe`), by step (`customer`,
      `invoice`, `item`, `finalize`, the searches and reads) and result (`ok`, `error`);
    - `stripe_passes`: passes of the Stripe pusher over the invoices (each looks at every
      invoice; a pushed one costs no call);
    - `stripe_events{type,outcome}`: Stripe webhook events (`paid`, `already-paid`,
      `ignored`, `unknown`, `bad-signature`);
    - `rss`: resident memory in bytes, read at scrape.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        self.reconciles = Counter(
            "gryvia_operator_reconcile_total",
            "Reconciles run, by controller and result.",
            ["controller", "result"],
            registry=reg,
        )
        self.errors = Counter(
            "gryvia_operator_reconcile_errors_total",
            "Reconciles that failed, by controller.",
            ["controller"],
            registry=reg,
        )
        self.latency = Histogram(
            "gryvia_operator_reconcile_duration_seconds",
            "Time spent in one reconcile.",
            ["controller"],
            buckets=DEFAULT_BUCKETS,
            registry=reg,
        )
        self.writes = Counter(
            "gryvia_operator_api_writes_total",
            "API writes by kind and verb.",
            ["kind", "verb"],
            registry=reg,
        )
        self.queue_depth = Gauge(
            "gryvia_operator_workqueue_depth",
            "Keys waiting in a work queue.",
            ["queue"],
            registry=reg,
        )
        self.webhook = Counter(
            "gryvia_operator_webhook_requests_total",
            "Admission reviews by webhook and verdict.",
            ["webhook", "allowed"],
            registry=reg,
        )
        self.webhook_latency = Histogram(
            "gryvia_operator_webhook_duration_seconds",
            "Time to answer one admission review.",
            ["webhook"],
            buckets=DEFAULT_BUCKETS,
            registry=reg,
        )
        self.stripe_requests = Counter(
            "gryvia_operator_stripe_requests_total",
            "Calls to Stripe by step and result.",
            ["step", "result"],
            registry=reg,
        )
        self.stripe_passes = Counter(
            "gryvia_operator_stripe_passes_total",
            "Passes of the Stripe pusher over the GryviaInvoices.",
            registry=reg,
        )
        self.stripe_events = Counter(
            "gryvia_operator_stripe_events_total",
            "Stripe webhook events by type and outcome.",
            ["type", "outcome"],
            registry=reg,
        )
        self.rss = Gauge(
            "gryvia_operator_resident_memory_bytes",
            "Resident memory of the operator.",
            registry=reg,
        )
        self.rss.set_function(_rss_bytes)

    def exposition(self) -> bytes:
        """Every metric in the Prometheus text format (`CONTENT_TYPE`), UTF-8."""
        return generate_latest(self.registry)

    def value(self, name: str, **labels: str) -> float | None:
        """The current value of one sample (e.g. `gryvia_operator_reconcile_total`), or None."""
        return self.registry.get_sample_value(name, labels)
