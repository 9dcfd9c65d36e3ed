"""The exporter's NVML source: a machine's NVIDIA GPUs read through NVML (nvidia-ml-py).

NVML has no DCGM profiling fields; on GPUs with GPU Performance Monitoring (Hopper and later)
its GPM metrics measure the same things, and are served under DCGM's profiling names:
`NVML_GPM_METRIC_GRAPHICS_UTIL` as `DCGM_FI_PROF_GR_ENGINE_ACTIVE`, `NVML_GPM_METRIC_SM_UTIL`
as `DCGM_FI_PROF_SM_ACTIVE`, `NVML_GPM_METRIC_ANY_TENSOR_UTIL` as
`DCGM_FI_PROF_PIPE_TENSOR_ACTIVE` (each a percentage in NVML, a ratio in DCGM). A GPM metric
is a difference of two samples, so it appears from the second scrape on. Where GPM is not
supported only the device fields are served and readers fall back to `DCGM_FI_DEV_GPU_UTIL`.
The pod labels are left empty: mapping a GPU to a pod is the kubelet's pod-resources API's
work, which dcgm-exporter does on real nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gryvia_operator.api.dcgm import (
    FIELD_ECC_DBE,
    FIELD_ENGINE_ACTIVE,
    FIELD_FB_FREE,
    FIELD_FB_USED,
    FIELD_GPU_UTIL,
    FIELD_POWER_USAGE,
    FIELD_SM_ACTIVE,
    FIELD_TENSOR_ACTIVE,
    FIELD_XID_ERRORS,
    MIB,
    GpuReading,
)

GPM_FIELDS: Mapping[int, str] = {
    1: FIELD_ENGINE_ACTIVE,  # NVML_GPM_METRIC_GRAPHICS_UTIL
    2: FIELD_SM_ACTIVE,  # NVML_GPM_METRIC_SM_UTIL
    5: FIELD_TENSOR_ACTIVE,  # NVML_GPM_METRIC_ANY_TENSOR_UTIL
}
"""NVML GPM metric ids (nvml.h) and the DCGM profiling field each is served as."""


def device_values(
    *,
    util_percent: float,
    memory_used_bytes: int,
    memory_free_bytes: int,
    power_milliwatts: float | None,
    gpm_percent: Mapping[int, float] | None = None,
    last_xid: int = 0,
    ecc_double_bit: int | None = None,
) -> dict[str, float]:
    """DCGM field values from NVML's raw numbers: memory in bytes becomes MiB, power in mW
    becomes W, GPM percentages (keyed by metric id) become ratios 0..1. Unknown GPM ids and
    values NVML could not give (None) are left out."""
    values: dict[str, float] = {
        FIELD_GPU_UTIL: float(util_percent),
        FIELD_FB_USED: memory_used_bytes // MIB,
        FIELD_FB_FREE: memory_free_bytes // MIB,
        FIELD_XID_ERRORS: float(last_xid),
    }
    if power_milliwatts is not None:
        values[FIELD_POWER_USAGE] = round(power_milliwatts / 1000, 3)
    if ecc_double_bit is not None:
        values[FIELD_ECC_DBE] = float(ecc_double_bit)
    for metric, percent in (gpm_percent or {}).items():
        if metric in GPM_FIELDS:
            values[GPM_FIELDS[metric]] = round(min(100.0, max(0.0, percent)) / 100, 4)
    return values


class NvmlSource:
    """Reads every GPU NVML sees. Raises RuntimeError when NVML cannot start (no driver, no
    nvidia-ml-py, no GPU)."""

    def __init__(self, hostname: str) -> None:
        try:
            import pynvml
        except ImportError as exc:
            raise RuntimeError("nvidia-ml-py is not installed (pip install nvidia-ml-py)") from exc
        self._nvml: Any = pynvml
        try:
            pynvml.nvmlInit()
            count = pynvml.nvmlDeviceGetCount()
        except pynvml.NVMLError as exc:
            raise RuntimeError(f"NVML: {exc}") from exc
        if count == 0:
            raise RuntimeError("NVML sees no GPU")
        self.hostname = hostname
        self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        self._gpm_last: dict[int, Any] = {}
        self._gpm = [self._gpm_supported(h) for h in self._handles]
        self._xid = [0] * count
        self._events = self._xid_events()

    def read(self) -> list[GpuReading]:
        """One reading per GPU; raises RuntimeError when NVML fails."""
        nvml = self._nvml
        self._drain_xids()
        readings = []
        try:
            for index, handle in enumerate(self._handles):
                memory = nvml.nvmlDeviceGetMemoryInfo(handle)
                values = device_values(
                    util_percent=nvml.nvmlDeviceGetUtilizationRates(handle).gpu,
                    memory_used_bytes=memory.used,
                    memory_free_bytes=memory.free,
                    power_milliwatts=self._optional(nvml.nvmlDeviceGetPowerUsage, handle),
                    gpm_percent=self._gpm_sample(index, handle),
                    last_xid=self._xid[index],
                    ecc_double_bit=self._optional(
                        nvml.nvmlDeviceGetTotalEccErrors,
                        handle,
                        nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                        nvml.NVML_VOLATILE_ECC,
                    ),
                )
                readings.append(
                    GpuReading(
                        hostname=self.hostname,
                        gpu=index,
                        uuid=_text(nvml.nvmlDeviceGetUUID(handle)),
                        model=_text(nvml.nvmlDeviceGetName(handle)),
                        pci_bus_id=_text(nvml.nvmlDeviceGetPciInfo(handle).busId),
                        values=values,
                    )
                )
        except nvml.NVMLError as exc:
            raise RuntimeError(f"NVML: {exc}") from exc
        return readings

    def _optional(self, call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except self._nvml.NVMLError:  # not supported on this GPU or driver
            return None

    def _gpm_supported(self, handle: Any) -> bool:
        try:
            return bool(self._nvml.nvmlGpmQueryDeviceSupport(handle).isSupportedDevice)
        except (self._nvml.NVMLError, AttributeError):
            return False

    def _gpm_sample(self, index: int, handle: Any) -> dict[int, float] | None:
        """GPM percentages between the last scrape's sample and now, or None on the first
        scrape and where GPM is not supported."""
        if not self._gpm[index]:
            return None
        nvml = self._nvml
        try:
            sample = nvml.nvmlGpmSampleGet(handle, nvml.nvmlGpmSampleAlloc())
        except nvml.NVMLError:
            self._gpm[index] = False
            return None
        previous, self._gpm_last[index] = self._gpm_last.get(index), sample
        if previous is None:
            return None
        request = nvml.c_nvmlGpmMetricsGet_t()
        request.version = nvml.NVML_GPM_METRICS_GET_VERSION
        request.numMetrics = len(GPM_FIELDS)
        request.sample1, request.sample2 = previous, sample
        for slot, metric in enumerate(GPM_FIELDS):
            request.metrics[slot].metricId = metric
        try:
            nvml.nvmlGpmMetricsGet(request)
        finally:
            nvml.nvmlGpmSampleFree(previous)
        return {
            m.metricId: m.value
            for m in request.metrics[: len(GPM_FIELDS)]
            if m.nvmlReturn == nvml.NVML_SUCCESS
        }

    def _xid_events(self) -> Any:
        nvml = self._nvml
        try:
            events = nvml.nvmlEventSetCreate()
            for handle in self._handles:
                nvml.nvmlDeviceRegisterEvents(handle, nvml.nvmlEventTypeXidCriticalError, events)
        except nvml.NVMLError:
            return None
        return events

    def _drain_xids(self) -> None:
        """Record the XID events NVML queued since the last scrape (the last one per GPU)."""
        nvml = self._nvml
        if self._events is None:
            return
        while True:
            try:
                event = nvml.nvmlEventSetWait(self._events, 0)
            except nvml.NVMLError:  # NVML_ERROR_TIMEOUT: none queued
                return
            for index, handle in enumerate(self._handles):
                if _same(nvml, handle, event.device):
                    self._xid[index] = int(event.eventData)


def _same(nvml: Any, handle: Any, other: Any) -> bool:
    try:
        return bool(nvml.nvmlDeviceGetIndex(handle) == nvml.nvmlDeviceGetIndex(other))
    except nvml.NVMLError:
        return False


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
