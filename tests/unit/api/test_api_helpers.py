"""Shared helpers: GPU arithmetic, phases, durations, GPU type names, quantities."""

from __future__ import annotations

import contextlib
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gryvia_operator.api import (
    ACTIVE_PHASES,
    PENDING_PHASES,
    TERMINAL_PHASES,
    DurationError,
    JobPhase,
    format_duration,
    normalize_gpu_type,
    parse_duration,
)
from gryvia_operator.api.aijob import GryviaAIJobSpec
from gryvia_operator.api.gputype import gpu_type_is_any
from gryvia_operator.api.helpers import phase_of
from gryvia_operator.api.quantity import parse_quantity

FEW = settings(max_examples=60, deadline=None)


def _spec(**kw: object) -> GryviaAIJobSpec:
    return GryviaAIJobSpec.model_validate({"type": "training", "image": "i", **kw})


@pytest.mark.parametrize(
    ("spec", "pods", "per_pod", "total"),
    [
        ({"gpus": 8}, 1, 8, 8),
        ({"gpus": 0}, 1, 0, 0),
        ({"gpus": 8, "distributed": {"enabled": True, "nodes": 4, "gpusPerNode": 8}}, 4, 8, 32),
        ({"gpus": 8, "distributed": {"enabled": True, "nodes": 4}}, 4, 8, 32),
        ({"gpus": 8, "distributed": {"enabled": True, "nodes": 4, "gpusPerNode": 0}}, 4, 8, 32),
        ({"gpus": 2, "distributed": {"enabled": True, "nodes": 3, "gpusPerNode": 4}}, 3, 4, 12),
        ({"gpus": 0, "distributed": {"enabled": True, "nodes": 3}}, 3, 0, 0),
        ({"gpus": 8, "distributed": {"enabled": False, "nodes": 4, "gpusPerNode": 2}}, 1, 8, 8),
        ({"gpus": 8, "distributed": {"enabled": True}}, 1, 8, 8),
    ],
)
def test_gpu_arithmetic(spec: dict[str, object], pods: int, per_pod: int, total: int) -> None:
    job = _spec(**spec)
    assert (job.pod_count(), job.gpus_per_pod(), job.total_gpus()) == (pods, per_pod, total)
    assert job.cpu_only is (per_pod == 0)


def test_effective_workload_kind_and_framework() -> None:
    assert _spec(gpus=1).effective_workload_kind() == "job"
    assert _spec(gpus=1, type="inference").effective_workload_kind() == "statefulset"
    assert _spec(gpus=1, type="inference", workloadKind="job").effective_workload_kind() == "job"
    assert _spec(gpus=1).effective_framework() == "pytorch"
    assert _spec(gpus=1, distributed={"framework": ""}).effective_framework() == "pytorch"
    assert (
        _spec(gpus=1, distributed={"framework": "deepspeed"}).effective_framework() == "deepspeed"
    )


def test_timeout_seconds() -> None:
    assert _spec(gpus=1).timeout_seconds() is None
    assert _spec(gpus=1, timeout="").timeout_seconds() is None
    assert _spec(gpus=1, timeout="1d12h").timeout_seconds() == 129600
    with pytest.raises(DurationError, match=r"^spec\.timeout: duration must be positive"):
        _spec(gpus=1, timeout="0m").timeout_seconds()


def test_gpu_type_constraint() -> None:
    assert gpu_type_is_any(None) and gpu_type_is_any("") and gpu_type_is_any(" ANY ")
    assert not gpu_type_is_any("H100")
    assert not _spec(gpus=1, gpuType="any").gpu_type_constrained
    assert _spec(gpus=1, gpuType="T4").gpu_type_constrained


def test_phase_sets_partition_every_phase() -> None:
    sets = [PENDING_PHASES, ACTIVE_PHASES, TERMINAL_PHASES]
    assert set().union(*sets) == set(JobPhase)
    assert sum(len(s) for s in sets) == len(JobPhase)
    assert JobPhase.PREEMPTED in TERMINAL_PHASES
    assert phase_of(None) is JobPhase.PENDING and phase_of("") is JobPhase.PENDING
    assert phase_of("Running") is JobPhase.RUNNING
    with pytest.raises(ValueError):
        phase_of("Completed")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90m", 5400),
        ("24h", 86400),
        ("7d", 604800),
        ("1d12h", 129600),
        ("1h30m", 5400),
        ("1.5h", 5400),
        ("2h45m30s", 9930),
        ("500ms", 1),
        ("1500ms", 2),
        ("1ns", 1),
        (" 45s ", 45),
        ("0d1s", 1),
        ("2µs", 1),
    ],
)
def test_parse_duration(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "abc", "10", "1x", "-5m", "+5m", "h", "1d 2h", "1h1d", "d"])
def test_parse_duration_rejects_malformed_and_names_the_field(text: str) -> None:
    with pytest.raises(DurationError) as info:
        parse_duration(text, field="spec.schedule.recurrence.duration")
    assert str(info.value).startswith("spec.schedule.recurrence.duration: invalid duration")
    assert info.value.field == "spec.schedule.recurrence.duration"


@pytest.mark.parametrize("text", ["0s", "0d", "0h0m", "0.0001ns"])
def test_parse_duration_rejects_zero(text: str) -> None:
    with pytest.raises(DurationError, match="must be positive"):
        parse_duration(text)


@FEW
@given(
    days=st.integers(0, 400),
    hours=st.integers(0, 100),
    minutes=st.integers(0, 100),
    seconds=st.integers(0, 100),
)
def test_parse_duration_adds_up_components(
    days: int, hours: int, minutes: int, seconds: int
) -> None:
    text = (f"{days}d" if days else "") + f"{hours}h{minutes}m{seconds}s"
    expected = days * 86400 + hours * 3600 + minutes * 60 + seconds
    if expected == 0:
        with pytest.raises(DurationError):
            parse_duration(text)
    else:
        assert parse_duration(text) == expected


@FEW
@given(st.integers(1, 10**9))
def test_format_duration_round_trips(seconds: int) -> None:
    text = format_duration(seconds)
    assert parse_duration(text) == seconds
    assert text == format_duration(parse_duration(text))


@FEW
@given(st.text(max_size=12))
def test_parse_duration_never_raises_anything_but_duration_error(text: str) -> None:
    with contextlib.suppress(DurationError):
        assert parse_duration(text) >= 1


def test_format_duration() -> None:
    assert format_duration(129600) == "1d12h"
    assert format_duration(5400) == "1h30m"
    assert format_duration(59) == "59s"
    with pytest.raises(ValueError):
        format_duration(0)


@pytest.mark.parametrize(
    ("product", "gpu_type"),
    [
        ("NVIDIA-H100-80GB-HBM3", "H100"),
        ("NVIDIA-H100-NVL", "H100"),
        ("NVIDIA H100 PCIe", "H100"),
        ("NVIDIA-A100-SXM4-80GB", "A100-80G"),
        ("NVIDIA-A100-PCIE-40GB", "A100-40G"),
        ("A100-80G", "A100-80G"),
        ("a100_40gb", "A100-40G"),
        ("NVIDIA-A100", "A100"),
        ("NVIDIA-L40S", "L40S"),
        ("NVIDIA-L40", "L40"),
        ("NVIDIA-A10", "A10"),
        ("Tesla-T4", "T4"),
        ("Tesla-V100-SXM2-16GB", "V100"),
        ("NVIDIA-A10G", "A10G"),
        ("NVIDIA-L4", "L4"),
        ("NVIDIA-H200", "H200"),
        ("NVIDIA-A40", "A40"),
        ("NVIDIA-B200", "B200"),
        ("NVIDIA-RTX-A6000", "RTX-A6000"),
        ("NVIDIA-GeForce-RTX-4090", "RTX-4090"),
        ("NVIDIA-GH200-480GB", "GH200"),
        ("h100", "H100"),
        ("h-100", "H100"),
        ("H 100", "H100"),
        ("rtx a6000", "RTX-A6000"),
        ("", ""),
    ],
)
def test_normalize_gpu_type(product: str, gpu_type: str) -> None:
    assert normalize_gpu_type(product) == gpu_type


@FEW
@given(st.text(alphabet="AHLTV0123456789-_ GBNVIDaSXMPCIEl", max_size=30))
def test_normalize_gpu_type_is_idempotent(product: str) -> None:
    once = normalize_gpu_type(product)
    assert normalize_gpu_type(once) == once


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("500m", Decimal("0.5")),
        ("1", Decimal(1)),
        (2, Decimal(2)),
        ("1Gi", Decimal(2**30)),
        ("1.5Ki", Decimal(1536)),
        ("2k", Decimal(2000)),
        ("1e3", Decimal(1000)),
        ("1E-3", Decimal("0.001")),
        ("-1", Decimal(-1)),
        ("0", Decimal(0)),
        (".5", Decimal("0.5")),
    ],
)
def test_parse_quantity(value: str | int, expected: Decimal) -> None:
    assert parse_quantity(value) == expected


@pytest.mark.parametrize("value", ["", "abc", "1GB", "1 Gi", "Gi", "1.2.3", True, 1.5])
def test_parse_quantity_rejects(value: object) -> None:
    with pytest.raises(ValueError, match="invalid quantity"):
        parse_quantity(value)  # type: ignore[arg-type]
