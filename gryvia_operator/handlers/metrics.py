"""The operator's Prometheus metrics and their text exposition (format 0.0.4).

Counters, gauges and histograms, without a client library.
"""

from __future__ import annotations

import bisect
import resource
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

Labels = tuple[tuple[str, str], ...]
DEFAULT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Labels, extra: tuple[tuple[str, str], ...] = ()) -> str:
    items = (*labels, *extra)
    if not items:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in items) + "}"


class Counter:
    """A monotonically increasing count per label set."""

    kind = "counter"

    def __init__(self, name: str, help_text: str) -> None:
        self.name, self.help = name, help_text
        self.values: dict[Labels, float] = {}

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        """Add `amount` to the series of `labels`."""
        key = tuple(sorted(labels.items()))
        self.values[key] = self.values.get(key, 0.0) + amount

    def samples(self) -> Iterator[str]:
        """Exposition lines of every series."""
        for key, value in sorted(self.values.items()):
            yield f"{self.name}{_labels(key)} {value:g}"


class Gauge:
    """A value read when scraped (from a callback) or set."""

    kind = "gauge"

    def __init__(self, name: str, help_text: str, read: Callable[[], float] | None = None) -> None:
        self.name, self.help, self.read = name, help_text, read
        self.values: dict[Labels, float] = {}

    def set(self, value: float, **labels: str) -> None:
        """Set the series of `labels`."""
        self.values[tuple(sorted(labels.items()))] = value

    def samples(self) -> Iterator[str]:
        """Exposition lines of every series."""
        if self.read is not None:
            yield f"{self.name} {self.read():g}"
        for key, value in sorted(self.values.items()):
            yield f"{self.name}{_labels(key)} {value:g}"


class Histogram:
    """Observations in cumulative buckets, with sum and count, per label set."""

    kind = "histogram"

    def __init__(
        self, name: str, help_text: str, buckets: tuple[float, ...] = DEFAULT_BUCKETS
    ) -> None:
        self.name, self.help, self.buckets = name, help_text, buckets
        self.series: dict[Labels, tuple[list[int], list[float]]] = {}

    def observe(self, value: float, **labels: str) -> None:
        """Record one observation (seconds)."""
        key = tuple(sorted(labels.items()))
        counts, totals = self.series.setdefault(key, ([0] * (len(self.buckets) + 1), [0.0]))
        counts[bisect.bisect_left(self.buckets, value)] += 1
        totals[0] += value

    @contextmanager
    def time(self, **labels: str) -> Iterator[None]:
        """Observe the duration of the `with` block."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.observe(time.perf_counter() - start, **labels)

    def samples(self) -> Iterator[str]:
        """Exposition lines: cumulative buckets, +Inf, sum and count."""
        for key, (counts, totals) in sorted(self.series.items()):
            running = 0
            for bound, count in zip(self.buckets, counts, strict=False):
                running += count
                yield f"{self.name}_bucket{_labels(key, (('le', f'{bound:g}'),))} {running}"
            running += counts[-1]
            yield f"{self.name}_bucket{_labels(key, (('le', '+Inf'),))} {running}"
            yield f"{self.name}_sum{_labels(key)} {totals[0]:g}"
            yield f"{self.name}_count{_labels(key)} {running}"


def _rss_bytes() -> float:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return float(pages * resource.getpagesize())
    except OSError:
        return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)


class Metrics:
    """Every metric the operator exports."""

    def __init__(self) -> None:
        self.reconciles = Counter(
            "gryvia_operator_reconcile_total", "Reconciles run, by controller and result."
        )
        self.errors = Counter(
            "gryvia_operator_reconcile_errors_total", "Reconciles that failed, by controller."
        )
        self.latency = Histogram(
            "gryvia_operator_reconcile_duration_seconds", "Time spent in one reconcile."
        )
        self.writes = Counter("gryvia_operator_api_writes_total", "API writes by kind and verb.")
        self.queue_depth = Gauge("gryvia_operator_workqueue_depth", "Keys waiting in a work queue.")
        self.webhook = Counter(
            "gryvia_operator_webhook_requests_total", "Admission reviews by webhook and verdict."
        )
        self.webhook_latency = Histogram(
            "gryvia_operator_webhook_duration_seconds", "Time to answer one admission review."
        )
        self.rss = Gauge(
            "gryvia_operator_resident_memory_bytes", "Resident memory of the operator.", _rss_bytes
        )
        self.all = (
            self.reconciles,
            self.errors,
            self.latency,
            self.writes,
            self.queue_depth,
            self.webhook,
            self.webhook_latency,
            self.rss,
        )

    def exposition(self) -> str:
        """The Prometheus text format of every metric."""
        lines: list[str] = []
        for metric in self.all:
            lines.append(f"# HELP {metric.name} {metric.help}")
            lines.append(f"# TYPE {metric.name} {metric.kind}")
            lines.extend(metric.samples())
        return "\n".join(lines) + "\n"
