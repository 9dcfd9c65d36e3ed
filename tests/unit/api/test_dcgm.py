"""dcgm-exporter's text format: what the exporters write is what the readers read back, the
profiling field wins over the device field, and the NVML numbers become DCGM's units."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from gryvia_operator.api.dcgm import (
    FIELD_ECC_DBE,
    FIELD_ENGINE_ACTIVE,
    FIELD_FB_FREE,
    FIELD_FB_USED,
    FIELD_GPU_UTIL,
    FIELD_POWER_USAGE,
    FIELD_SM_ACTIVE,
    FIELD_TENSOR_ACTIVE,
    MIB,
    GpuReading,
    activity,
    memory_used_bytes,
    parse,
    render,
    tensor_activity,
)
from gryvia_operator.exporter.nvml import device_values
from gryvia_operator.exporter.serve import make_server

# As dcgm-exporter 3.x serves it on a GPU Operator node (one series each; labels in its order).
_LABELS = (
    'gpu="1",UUID="GPU-9f1c",pci_bus_id="00000000:19:00.0",device="nvidia1",'
    'modelName="NVIDIA H100 80GB HBM3",Hostname="node-a",DCGM_FI_DRIVER_VERSION="550.54.15",'
    'container="trainer",namespace="team-a",pod="llm-0"'
)
DCGM_EXPORTER_TEXT = f"""\
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{{{_LABELS}}} 87
# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{_LABELS}}} 0.912345
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{{gpu="1",UUID="GPU-9f1c",Hostname="node-a"}} 41
# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 12
"""


def test_dcgm_exporters_own_text_reads_as_one_gpu_held_by_its_pod() -> None:
    (gpu,) = parse(DCGM_EXPORTER_TEXT)
    assert (gpu.hostname, gpu.gpu, gpu.uuid, gpu.model) == (
        "node-a",
        1,
        "GPU-9f1c",
        "NVIDIA H100 80GB HBM3",
    )
    assert (gpu.namespace, gpu.pod, gpu.container) == ("team-a", "llm-0", "trainer")
    assert gpu.values["DCGM_FI_DEV_GPU_TEMP"] == 41  # fields we do not serve are kept
    # the profiling field wins over GPU_UTIL, and says so
    assert activity(gpu) == (pytest.approx(91.2345), FIELD_ENGINE_ACTIVE)


def test_without_the_profiling_fields_gpu_util_is_the_activity() -> None:
    reading = GpuReading("n", 0, "u", values={FIELD_GPU_UTIL: 35.0})
    assert activity(reading) == (35.0, FIELD_GPU_UTIL)
    assert activity(GpuReading("n", 0, "u", values={FIELD_FB_USED: 1.0})) is None
    assert tensor_activity(reading) is None and memory_used_bytes(reading) is None


def test_render_then_parse_gives_the_same_readings_with_awkward_label_values() -> None:
    readings = [
        GpuReading(
            "node-b",
            index,
            f"GPU-{index}",
            "NVIDIA-L40",
            namespace='a"b\\c',
            pod="p\nq",
            container="main",
            values={FIELD_ENGINE_ACTIVE: 0.5, FIELD_ECC_DBE: 2.0, FIELD_FB_USED: 1024.0},
        )
        for index in range(2)
    ]
    text = render(readings)
    assert text.count(f"# TYPE {FIELD_ECC_DBE} counter") == 1
    back = parse(text)
    assert sorted(back, key=lambda r: r.gpu) == readings  # counters keep DCGM's name too
    assert tensor_activity(back[0]) is None
    assert memory_used_bytes(back[0]) == 1024 * MIB
    assert render([]) == ""


def test_nvml_numbers_become_dcgm_units_and_gpm_becomes_the_profiling_fields() -> None:
    values = device_values(
        util_percent=97,
        memory_used_bytes=5 * MIB + 100,
        memory_free_bytes=10 * MIB,
        power_milliwatts=512345,
        gpm_percent={1: 93.5, 2: 101.0, 5: 40.0, 9: 12.0},
        ecc_double_bit=0,
    )
    assert values[FIELD_GPU_UTIL] == 97
    assert (values[FIELD_FB_USED], values[FIELD_FB_FREE]) == (5, 10)  # MiB
    assert values[FIELD_POWER_USAGE] == 512.345  # W
    assert values[FIELD_ENGINE_ACTIVE] == 0.935
    assert values[FIELD_SM_ACTIVE] == 1.0  # clamped
    assert values[FIELD_TENSOR_ACTIVE] == 0.4
    assert len([k for k in values if k.startswith("DCGM_FI_PROF")]) == 3  # id 9 is not served
    plain = device_values(
        util_percent=3, memory_used_bytes=0, memory_free_bytes=0, power_milliwatts=None
    )
    assert FIELD_POWER_USAGE not in plain and FIELD_ENGINE_ACTIVE not in plain


class _Source:
    def __init__(self) -> None:
        self.broken = False

    def read(self) -> list[GpuReading]:
        if self.broken:
            raise RuntimeError("NVML: GPU is lost")
        return [GpuReading("n", 0, "u", values={FIELD_GPU_UTIL: 12.0})]


@pytest.fixture
def served() -> Iterator[tuple[str, _Source]]:
    source = _Source()
    server = make_server(source, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", source
    server.shutdown()
    server.server_close()


def test_the_exporter_serves_metrics_and_says_503_when_the_gpus_cannot_be_read(
    served: tuple[str, _Source],
) -> None:
    url, source = served
    answer = httpx.get(f"{url}/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert activity(parse(answer.text)[0]) == (12.0, FIELD_GPU_UTIL)
    assert httpx.get(f"{url}/health").status_code == 200
    assert httpx.get(f"{url}/other").status_code == 404
    source.broken = True
    down = httpx.get(f"{url}/metrics")
    assert down.status_code == 503 and "GPU is lost" in down.text


def test_reading_only_some_pods_leaves_the_other_gpus_out() -> None:
    readings = [
        GpuReading("n", i, f"u{i}", namespace="t", pod=f"p{i}", values={FIELD_GPU_UTIL: 1.0 * i})
        for i in range(4)
    ]
    text = render(readings)
    assert [r.pod for r in parse(text, {"p1", "p3"})] == ["p1", "p3"]
    assert parse(text, {"p9"}) == [] and len(parse(text)) == 4
