"""DCGM field names and dcgm-exporter's text format: what a GPU exporter serves and what the
operator and the CLI read back.

Sources: the field identifiers of NVIDIA DCGM (`dcgm_fields.h`), the help texts and types of
dcgm-exporter's default counters file (`etc/default-counters.csv`), and dcgm-exporter's labels
(`gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`, `Hostname`, and `namespace`, `pod`,
`container` for the pod that holds the GPU). The profiling fields (`DCGM_FI_PROF_*`) are ratios
0..1; `DCGM_FI_DEV_GPU_UTIL` is a percentage; memory is MiB and power W, as DCGM writes them.

Standard library only: the exporter runs on GPU machines that have nothing else of Gryvia's.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

FIELD_ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
"""Profiling field: ratio of time any graphics or compute engine was busy, 0..1."""
FIELD_SM_ACTIVE = "DCGM_FI_PROF_SM_ACTIVE"
"""Profiling field: ratio of cycles an SM had at least one warp assigned, 0..1."""
FIELD_TENSOR_ACTIVE = "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"
"""Profiling field: ratio of cycles the tensor (HMMA) pipe was active, 0..1."""
FIELD_GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
"""Device field: percentage of time a kernel was running, 0..100; used where the profiling
fields are not served."""
FIELD_FB_USED = "DCGM_FI_DEV_FB_USED"
"""Device field: frame-buffer memory used, MiB."""
FIELD_FB_FREE = "DCGM_FI_DEV_FB_FREE"
"""Device field: frame-buffer memory free, MiB."""
FIELD_POWER_USAGE = "DCGM_FI_DEV_POWER_USAGE"
"""Device field: power draw, W."""
FIELD_XID_ERRORS = "DCGM_FI_DEV_XID_ERRORS"
"""Device field: the value of the last XID error, 0 when none."""
FIELD_ECC_DBE = "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"
"""Device field: double-bit volatile ECC errors since the driver loaded."""

EXPORTER_LABELS: Mapping[str, str] = {"app": "nvidia-dcgm-exporter"}
"""The label of dcgm-exporter pods: NVIDIA GPU Operator's, which the sandbox's exporters carry
too."""
EXPORTER_SELECTOR = ",".join(f"{k}={v}" for k, v in EXPORTER_LABELS.items())
"""`EXPORTER_LABELS` as a label selector."""
EXPORTER_PORT = 9400
"""dcgm-exporter's default port, used where its pod names no `metrics` container port."""


def metrics_port(pod: Mapping[str, Any]) -> int:
    """The port of an exporter pod's container port named `metrics`, else `EXPORTER_PORT`."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == "metrics":
                return int(port["containerPort"])
    return EXPORTER_PORT


MIB = 1024 * 1024
"""Bytes in one MiB, the unit of DCGM's frame-buffer fields."""


@dataclass(frozen=True)
class Field:
    """One DCGM field as dcgm-exporter serves it: its Prometheus type and help text."""

    name: str
    type: Literal["gauge", "counter"]
    help: str


FIELDS: tuple[Field, ...] = (
    Field(FIELD_GPU_UTIL, "gauge", "GPU utilization (in %)."),
    Field(FIELD_FB_FREE, "gauge", "Framebuffer memory free (in MiB)."),
    Field(FIELD_FB_USED, "gauge", "Framebuffer memory used (in MiB)."),
    Field(FIELD_POWER_USAGE, "gauge", "Power draw (in W)."),
    Field(FIELD_XID_ERRORS, "gauge", "Value of the last XID error encountered."),
    Field(FIELD_ECC_DBE, "counter", "Total number of double-bit volatile ECC errors."),
    Field(FIELD_ENGINE_ACTIVE, "gauge", "Ratio of time the graphics engine is active."),
    Field(FIELD_SM_ACTIVE, "gauge", "The ratio of cycles an SM has at least 1 warp assigned."),
    Field(FIELD_TENSOR_ACTIVE, "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
)
"""The fields a Gryvia exporter serves, in dcgm-exporter's order; readers accept any others."""

GPU_LABELS = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname")
"""dcgm-exporter's labels naming the GPU, in its order."""
POD_LABELS = ("namespace", "pod", "container")
"""dcgm-exporter's labels naming the pod that holds the GPU (empty when none does)."""


@dataclass(frozen=True)
class GpuReading:
    """One GPU's values at one scrape.

    `values` maps DCGM field names to the numbers served, in DCGM's units (ratios 0..1 for the
    profiling fields, percent, MiB, W). `namespace`, `pod` and `container` are "" when no pod
    holds the GPU.
    """

    hostname: str
    gpu: int
    uuid: str
    model: str = ""
    pci_bus_id: str = ""
    namespace: str = ""
    pod: str = ""
    container: str = ""
    values: Mapping[str, float] = field(default_factory=dict)

    def labels(self) -> dict[str, str]:
        """The series labels dcgm-exporter writes for this GPU, GPU labels first."""
        return {
            "gpu": str(self.gpu),
            "UUID": self.uuid,
            "pci_bus_id": self.pci_bus_id,
            "device": f"nvidia{self.gpu}",
            "modelName": self.model,
            "Hostname": self.hostname,
            "namespace": self.namespace,
            "pod": self.pod,
            "container": self.container,
        }


def activity(reading: GpuReading) -> tuple[float, str] | None:
    """The GPU's activity as a percentage 0..100 and the field it came from.

    Prefers DCGM's profiling field `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (a ratio, scaled by 100),
    then `DCGM_FI_DEV_GPU_UTIL`; None when the reading has neither.
    """
    if (ratio := reading.values.get(FIELD_ENGINE_ACTIVE)) is not None:
        return _percent(ratio * 100), FIELD_ENGINE_ACTIVE
    if (util := reading.values.get(FIELD_GPU_UTIL)) is not None:
        return _percent(util), FIELD_GPU_UTIL
    return None


def tensor_activity(reading: GpuReading) -> float | None:
    """The tensor pipe's activity as a percentage 0..100, or None where not served."""
    ratio = reading.values.get(FIELD_TENSOR_ACTIVE)
    return None if ratio is None else _percent(ratio * 100)


def memory_used_bytes(reading: GpuReading) -> int | None:
    """Frame-buffer memory used, bytes (DCGM serves MiB), or None where not served."""
    mib = reading.values.get(FIELD_FB_USED)
    return None if mib is None else int(mib * MIB)


def parse(text: str, pods: Collection[str] = ()) -> list[GpuReading]:
    """Read dcgm-exporter's text format (Prometheus exposition 0.0.4) into one reading per GPU.

    Series are grouped by `Hostname`, `gpu` and `UUID`; the pod labels of a GPU's first series
    are kept. Series without a `gpu` label are ignored. With `pods`, only the series labelled
    with one of those pod names are read (the text is cut down before the parser sees it: the
    parser costs about 70 us a series). Raises ValueError when the text is not in the
    exposition format (the message comes from prometheus_client's parser).
    """
    from prometheus_client.parser import text_string_to_metric_families

    if pods:
        wanted = tuple(f'pod="{_escape(p)}"' for p in pods)
        text = "".join(
            line
            for line in text.splitlines(keepends=True)
            if line.startswith("#") or any(w in line for w in wanted)
        )
    by_gpu: dict[tuple[str, str, str], dict[str, float]] = {}
    labels_of: dict[tuple[str, str, str], Mapping[str, str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if "gpu" not in labels:
                continue
            key = (labels.get("Hostname", ""), labels["gpu"], labels.get("UUID", ""))
            # The parser names a counter's samples `<name>_total`; DCGM's names are kept.
            name = family.name if sample.name == f"{family.name}_total" else sample.name
            by_gpu.setdefault(key, {})[name] = float(sample.value)
            labels_of.setdefault(key, labels)
    return [reading_of(labels_of[key], values) for key, values in by_gpu.items()]


def render(readings: Iterable[GpuReading]) -> str:
    """Write readings in dcgm-exporter's text format: for each field of `FIELDS` some reading
    has, its HELP and TYPE lines, then one series per GPU. Label values are escaped as the
    exposition format asks (backslash, double quote, newline)."""
    readings = list(readings)
    lines: list[str] = []
    for spec in FIELDS:
        held = [r for r in readings if spec.name in r.values]
        if not held:
            continue
        lines.append(f"# HELP {spec.name} {spec.help}")
        lines.append(f"# TYPE {spec.name} {spec.type}")
        for reading in held:
            labels = ",".join(f'{k}="{_escape(v)}"' for k, v in reading.labels().items())
            lines.append(f"{spec.name}{{{labels}}} {_number(reading.values[spec.name])}")
    return "\n".join(lines) + "\n" if lines else ""


def reading_of(labels: Mapping[str, str], values: dict[str, float]) -> GpuReading:
    """A reading from one GPU's dcgm-exporter labels and its values by DCGM field name (a
    `gpu` label that is not a number reads as GPU -1)."""
    try:
        gpu = int(labels["gpu"])
    except ValueError:
        gpu = -1
    return GpuReading(
        hostname=labels.get("Hostname", ""),
        gpu=gpu,
        uuid=labels.get("UUID", ""),
        model=labels.get("modelName", ""),
        pci_bus_id=labels.get("pci_bus_id", ""),
        namespace=labels.get("namespace", ""),
        pod=labels.get("pod", ""),
        container=labels.get("container", ""),
        values=values,
    )


def _percent(value: float) -> float:
    return min(100.0, max(0.0, value))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
