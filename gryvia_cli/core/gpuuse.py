"""A job's GPU use from dcgm-exporter readings: one row per GPU its pods hold, and a summary.

dcgm-exporter labels each GPU's series with the `namespace`, `pod` and `container` holding it;
a job's GPUs are those whose pod is one of the job's pods. Activity is
`gryvia_operator.api.dcgm.activity`'s (the profiling field where served, else
`DCGM_FI_DEV_GPU_UTIL`), in percent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gryvia_operator.api.dcgm import (
    FIELD_ECC_DBE,
    FIELD_FB_USED,
    FIELD_POWER_USAGE,
    FIELD_XID_ERRORS,
    GpuReading,
    activity,
    tensor_activity,
)

if TYPE_CHECKING:
    from gryvia_operator.api import GryviaUsageRecord


@dataclass(frozen=True)
class GpuUse:
    """One GPU a job's pod holds, as read: activity and tensor activity in percent 0..100
    (None where not served), memory used in MiB, power in W."""

    pod: str
    replica: int | None
    node: str
    gpu: int
    activity: float | None
    field: str
    tensor: float | None
    memory_used_mib: float | None
    power_w: float | None

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON shape (`status JOB -o json`, key `gpus`)."""
        return {
            "pod": self.pod,
            "replica": self.replica,
            "node": self.node,
            "gpu": self.gpu,
            "activityPercent": self.activity,
            "field": self.field,
            "tensorActivityPercent": self.tensor,
            "memoryUsedMiB": self.memory_used_mib,
            "powerWatts": self.power_w,
        }


def job_gpu_use(
    readings: Iterable[GpuReading], namespace: str, replicas: Mapping[str, int | None]
) -> list[GpuUse]:
    """The GPUs held by the pods named in `replicas` (pod name -> replica index) in
    `namespace`, ordered by replica, pod and GPU index."""
    rows = []
    for reading in readings:
        if reading.namespace != namespace or reading.pod not in replicas:
            continue
        measured = activity(reading)
        rows.append(
            GpuUse(
                pod=reading.pod,
                replica=replicas[reading.pod],
                node=reading.hostname,
                gpu=reading.gpu,
                activity=None if measured is None else round(measured[0], 1),
                field="" if measured is None else measured[1],
                tensor=tensor_activity(reading),
                memory_used_mib=reading.values.get(FIELD_FB_USED),
                power_w=reading.values.get(FIELD_POWER_USAGE),
            )
        )
    return sorted(rows, key=lambda u: (u.replica if u.replica is not None else -1, u.pod, u.gpu))


def summary_text(rows: Sequence[GpuUse]) -> str:
    """One line for the job view, e.g. "mean 97.5 % over 2 GPUs (DCGM_FI_PROF_GR_ENGINE_ACTIVE),
    lowest 95.0 % (replica 1), memory 13 MiB peak, 1396 W"; "" when no row has activity."""
    measured = [u for u in rows if u.activity is not None]
    if not measured:
        return ""
    values = [u.activity for u in measured if u.activity is not None]
    fields = sorted({u.field for u in measured})
    text = (
        f"mean {sum(values) / len(values):.1f} % over {len(measured)} GPU(s) ({', '.join(fields)})"
    )
    if len(measured) > 1:
        low = min(measured, key=lambda u: u.activity or 0.0)
        where = f"replica {low.replica}" if low.replica is not None else low.pod
        text += f", lowest {low.activity:.1f} % ({where}, GPU {low.gpu})"
    memory = [u.memory_used_mib for u in rows if u.memory_used_mib is not None]
    if memory:
        text += f", memory {max(memory):.0f} MiB peak"
    power = [u.power_w for u in rows if u.power_w is not None]
    if power:
        text += f", {sum(power):.0f} W"
    return text


def idle_cost(record: GryviaUsageRecord) -> Decimal | None:
    """(GPU-hours - active GPU-hours) x rate of a sealed, sampled record (6-place amounts, as
    the ledger writes them); None when the record has no active GPU-hours."""
    from gryvia_operator.api.ledger import amount

    active = record.spec.active_gpu_hours
    if active is None:
        return None
    idle = Decimal(amount(record.spec.gpu_hours)) - Decimal(amount(active))
    return max(Decimal(0), idle) * Decimal(amount(record.spec.rate))


def usage_fields(
    unpriced_gpu_hours: float, active_gpu_hours: float | None, idle: Decimal | None
) -> dict[str, Any]:
    """The optional JSON fields of a usage or cost row, in this order: `unpricedGpuHours` when
    some GPU-hours are unpriced, `activeGpuHours` and `idleCost` when its runs were sampled
    (both known); 4-place numbers."""
    out: dict[str, Any] = {}
    if unpriced_gpu_hours > 0:
        out["unpricedGpuHours"] = round(unpriced_gpu_hours, 4)
    if active_gpu_hours is not None and idle is not None:
        out["activeGpuHours"] = round(active_gpu_hours, 4)
        out["idleCost"] = float(round(idle, 4))
    return out


SPARK_MARKS = "▁▂▃▄▅▆▇█"
"""A sparkline's marks, lowest (0 %) to highest (100 %)."""


def sparkline(values: Sequence[float], width: int = 0) -> str:
    """Percentages 0..100 as a line of block marks, one per value, oldest first (values out of
    range are clamped), right-aligned in `width` characters when wider."""
    top = len(SPARK_MARKS) - 1
    line = "".join(SPARK_MARKS[min(top, max(0, round(v * top / 100)))] for v in values)
    return line.rjust(width)


@dataclass(frozen=True)
class ReplicaLine:
    """One replica's GPU activity in its recent samples (percent, oldest first)."""

    replica: int
    values: tuple[int, ...]

    @property
    def last(self) -> int:
        """The newest sample's activity."""
        return self.values[-1]

    @property
    def mean(self) -> float:
        """Mean activity over the samples kept."""
        return sum(self.values) / len(self.values)


def replica_lines(metrics: Mapping[str, Any]) -> list[ReplicaLine]:
    """Each replica's recent activity from `status.metrics` as stored (`replicas`: the ring
    the operator keeps, docs/gpu-metrics.md), by replica; entries that are not what the
    operator writes (another version, no values) are skipped."""
    out = []
    for entry in metrics.get("replicas") or []:
        if not isinstance(entry, Mapping):
            continue
        replica, values = entry.get("replica"), entry.get("recentActivityPercent")
        if not isinstance(replica, int) or not isinstance(values, list):
            continue
        kept = tuple(
            int(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)
        )
        if kept:
            out.append(ReplicaLine(replica, kept))
    return sorted(out, key=lambda line: line.replica)


@dataclass(frozen=True)
class GpuFault:
    """A GPU that reports an error: the last XID (`DCGM_FI_DEV_XID_ERRORS`, 0 is none) or
    double-bit ECC errors (`DCGM_FI_DEV_ECC_DBE_VOL_TOTAL`), with the pod holding it."""

    node: str
    gpu: int
    uuid: str
    error: str
    namespace: str
    pod: str

    def as_dict(self, job: str | None) -> dict[str, Any]:
        """The documented JSON shape (`health gpu -o json`, key `gpuFaults`)."""
        return {
            "node": self.node,
            "gpu": self.gpu,
            "uuid": self.uuid,
            "error": self.error,
            "namespace": self.namespace or None,
            "pod": self.pod or None,
            "job": job,
        }


def gpu_faults(readings: Iterable[GpuReading]) -> list[GpuFault]:
    """The GPUs among `readings` that report an XID or double-bit ECC errors, by node and
    index. XID meanings are NVIDIA's (e.g. 79: the GPU has fallen off the bus, 48: a
    double-bit ECC error, 94/95: contained/uncontained ECC errors)."""
    faults = []
    for reading in readings:
        xid = int(reading.values.get(FIELD_XID_ERRORS, 0) or 0)
        dbe = int(reading.values.get(FIELD_ECC_DBE, 0) or 0)
        errors = ([f"XID {xid}"] if xid else []) + ([f"{dbe} double-bit ECC"] if dbe else [])
        if errors:
            faults.append(
                GpuFault(
                    reading.hostname,
                    reading.gpu,
                    reading.uuid,
                    ", ".join(errors),
                    reading.namespace,
                    reading.pod,
                )
            )
    return sorted(faults, key=lambda f: (f.node, f.gpu))
