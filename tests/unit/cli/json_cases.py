"""The cases of tests/unit/cli/test_json_schemas.py for the documents about one job, the
nodes, the fair share and the versions (JobStatus, SeffReport, GpuTraining, NcclReport,
HealthReport, FairShareList, Version): each prints the document through the CLI over the fake
access layer of the command's own tests; GPU readings are fixed where the command reads the
dcgm-exporters."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.unit.cli.fakes import FakeAccess

NCCL = Path(__file__).parents[2] / "data" / "nccl"


@contextmanager
def gpus_read(fake: FakeAccess) -> Iterator[None]:
    """`read_gpus` answering two GPUs of every running pod of `fake` (activity 50 and 90 %)."""
    from gryvia_cli.views import gpumetrics
    from gryvia_operator.api.dcgm import (
        FIELD_ENGINE_ACTIVE,
        FIELD_FB_USED,
        FIELD_POWER_USAGE,
        GpuReading,
    )

    pods = [o for o in fake.objects if o.get("kind") == "Pod"]
    readings = [
        GpuReading(
            str(pod["spec"].get("nodeName")),
            gpu,
            f"GPU-{gpu}",
            namespace=str(pod["metadata"].get("namespace")),
            pod=str(pod["metadata"]["name"]),
            values={FIELD_ENGINE_ACTIVE: ratio, FIELD_FB_USED: 2048.0, FIELD_POWER_USAGE: 300.0},
        )
        for pod in pods
        for gpu, ratio in ((0, 0.5), (1, 0.9))
    ]

    def read(*_: Any, **__: Any) -> gpumetrics.GpuRead:
        return gpumetrics.GpuRead(readings, "", gpumetrics.POD_PROXY)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gpumetrics, "read_gpus", read)
        yield


def _running_job() -> FakeAccess:
    from tests.unit.cli.test_seff import SAMPLED, _cluster

    return _cluster(SAMPLED)


def _status_metered() -> str:
    from tests.unit.cli.helpers import ago, run
    from tests.unit.cli.test_newcomer_fixes import _placed_elsewhere
    from tests.unit.cli.test_tenancy_core import record

    metered = record("ml", "run", ago(1800), 4.0, rate=8.0, sku_name="h100", namespace="ml")
    fake = _placed_elsewhere().add(metered)
    fake.objects[2]["metadata"]["uid"] = "uid-run"
    with gpus_read(fake):
        return run(["status", "run", "-o", "json"], fake).stdout


def _status_pending() -> str:
    from tests.unit.cli.helpers import make_job, run

    fake = FakeAccess(make_job("wait").gpus(8).gpu_type("B300").phase("Queued").obj())
    return run(["status", "wait", "-o", "json"], fake).stdout


def _seff(sampled: bool) -> Callable[[], str]:
    def printed() -> str:
        from tests.unit.cli.helpers import run
        from tests.unit.cli.test_seff import SAMPLED, _cluster

        return run(["seff", "run", "-o", "json"], _cluster(SAMPLED if sampled else None)).stdout

    return printed


def _training() -> str:
    from gryvia_cli.core.jobs import COMPLETION_INDEX_ANNOTATION
    from tests.unit.cli.helpers import run

    fake = _running_job()
    pod = next(o for o in fake.objects if o.get("kind") == "Pod")
    pod["metadata"].setdefault("annotations", {})[COMPLETION_INDEX_ANNOTATION] = "0"
    fake.logs["run-0-abc"] = [
        "2026-12-04T10:00:01Z step 100 loss 2.1",
        "2026-12-04T10:00:11Z step 300 loss 1.9",
    ]
    with gpus_read(fake):
        return run(["gpu", "training", "--job", "run", "-o", "json"], fake).stdout


def _nccl(log: str) -> Callable[[], str]:
    def printed() -> str:
        from tests.unit.cli.helpers import run

        fake = _running_job()
        fake.logs["run-0-abc"] = (NCCL / log).read_text().splitlines()
        return run(["gpu", "nccl", "--job", "run", "-o", "json"], fake).stdout

    return printed


def _health(faulty: bool) -> Callable[[], str]:
    def printed() -> str:
        from tests.unit.cli.helpers import run

        fake = _running_job()
        if not faulty:
            return run(["health", "-o", "json"], fake).stdout
        from gryvia_cli.views import gpumetrics
        from gryvia_operator.api.dcgm import FIELD_XID_ERRORS, GpuReading

        reading = GpuReading("h0", 1, "GPU-1", namespace="", pod="", values={FIELD_XID_ERRORS: 79})

        def read(*_: Any, **__: Any) -> gpumetrics.GpuRead:
            return gpumetrics.GpuRead([reading], "", gpumetrics.POD_PROXY)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(gpumetrics, "read_gpus", read)
            return run(["health", "-o", "json"], fake).stdout

    return printed


def _health_storage() -> str:
    from tests.unit.cli.helpers import run
    from tests.unit.cli.test_storage_core import READY

    fake = _running_job()
    ready = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaStorage",
        "metadata": {"name": "fast"},
        "spec": {"backend": "local-path", "capacity": "512Ti"},
        "status": READY,
    }
    fresh = {**ready, "metadata": {"name": "new"}, "status": None}
    return run(["health", "storage", "--no-probe", "-o", "json"], fake.add(ready, fresh)).stdout


def _fair_share() -> str:
    from tests.unit.cli.test_fairshare import FLAVORS, NLP, VISION
    from tests.unit.cli.test_tenancy_commands import TenancyFake, run

    return run(["quota", "--fair-share", "-o", "json"], TenancyFake(VISION, NLP, *FLAVORS)).stdout


def _version(*args: str) -> Callable[[], str]:
    def printed() -> str:
        from tests.unit.cli.helpers import run
        from tests.unit.cli.test_cli_read import cluster

        return run(["version", *args, "-o", "json"], cluster()).stdout

    return printed


CASES: list[tuple[str, str, Callable[..., str]]] = [
    ("JobStatus", "running, metered, GPUs read", _status_metered),
    ("JobStatus", "queued, no pods", _status_pending),
    ("SeffReport", "sampled", _seff(True)),
    ("SeffReport", "never sampled", _seff(False)),
    ("GpuTraining", "two GPUs, a step rate", _training),
    ("NcclReport", "infiniband", _nccl("ib-two-nodes.log")),
    ("NcclReport", "socket fallback", _nccl("socket-fallback.log")),
    ("HealthReport", "healthy", _health(False)),
    ("HealthReport", "XID 79", _health(True)),
    ("HealthReport", "storage, one Ready, one not seen yet", _health_storage),
    ("FairShareList", "borrowing", _fair_share),
    ("Version", "client and server", _version()),
    ("Version", "client only", _version("--client")),
]
"""(kind, what, a function printing the document)."""
