"""Issue 20: `gryvia submit --explain` / `--dry-run=server` (exit 0/3/4, JSON, nothing created)
and fail fast at submit (exit 3 unless --force)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import ago, h100, make_job, make_pod, run, stamp

SKU = {
    "kind": "GryviaGpuSku",
    "apiVersion": "gryvia.io/v1alpha1",
    "metadata": {"name": "h100"},
    "spec": {"gpuType": "H100", "hourlyRate": 2},
}


def manifest(tmp_path: Path, name: str, gpus: int, gpu_type: str = "H100", **spec: Any) -> str:
    body = make_job(name).gpus(gpus).gpu_type(gpu_type).set(**spec).obj()
    body["metadata"] = {"name": name}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(body))
    return str(path)


def busy_cluster() -> FakeAccess:
    """One 8-GPU H100 node, held (6 GPUs) by job `c` that started 10 minutes ago with 30m."""
    running = make_job("c").gpus(6).gpu_type("H100").timeout("30m").phase("Running")
    running = running.status(startTime=ago(600), nodesAllocated=["n0"])
    return FakeAccess(
        h100("n0"),
        SKU,
        stamp(running.obj(), 700),
        make_pod("c-0").gpus(6).on("n0").job("c").obj(),
    )


def explain(fake: FakeAccess, path: str, *extra: str) -> tuple[int, dict[str, Any]]:
    result = run(["submit", "-f", path, "--explain", "-o", "json", *extra], fake)
    return result.exit_code, json.loads(result.stdout)


def test_start_now_exits_0_and_creates_nothing(tmp_path: Path) -> None:
    fake = busy_cluster()
    before = len(fake.objects)
    code, doc = explain(fake, manifest(tmp_path, "small", 2, timeout="1h"))
    assert code == 0 and doc["exitCode"] == 0
    item = doc["items"][0]
    assert item["verdict"] == "start-now"
    assert item["placement"] == {"fitsNow": True, "nodes": [{"name": "n0", "freeGPUs": 2}]}
    assert item["serverDryRun"] == {"allowed": True, "message": None, "warnings": []}
    assert item["cost"] == {
        "currency": "USD",
        "sku": "h100",
        "perHour": 4.0,
        "forTimeout": 4.0,
        "timeout": "1h",
    }
    assert len(fake.objects) == before


def test_would_wait_exits_4_with_the_estimate(tmp_path: Path) -> None:
    code, doc = explain(busy_cluster(), manifest(tmp_path, "big", 8))
    assert code == 4
    item = doc["items"][0]
    assert item["verdict"] == "wait"
    assert item["blocker"] == {
        "kind": "Resources",
        "resource": "H100",
        "needed": 8,
        "freeNow": 2,
        "ahead": {"count": 0},
        "holders": [{"name": "c", "gpus": 6, "expectedEnd": ago(-1200), "basis": "timeout"}],
        "message": "needs 8 H100 on 1 node(s), 2 free on nodes that could take its pods",
    }
    assert item["estimatedStart"] == {"earliest": ago(-1200), "likely": ago(-1200)}
    text = run(["submit", "-f", manifest(tmp_path, "big", 8), "--dry-run=server"], busy_cluster())
    assert text.exit_code == 4
    assert "would wait" in text.stdout and "likely start 12:20 UTC" in text.stdout


def test_never_exits_3(tmp_path: Path) -> None:
    code, doc = explain(busy_cluster(), manifest(tmp_path, "odd", 8, "B200"))
    assert code == 3
    assert doc["items"][0]["blocker"]["kind"] == "NoSuchGPUType"
    code, doc = explain(busy_cluster(), manifest(tmp_path, "huge", 16))
    assert code == 3
    assert doc["items"][0]["blocker"]["message"] == (
        "each pod needs 16 H100, the largest H100 node has 8"
    )


def test_submit_fails_fast_unless_forced(tmp_path: Path) -> None:
    fake = busy_cluster()
    before = len(fake.objects)
    path = manifest(tmp_path, "huge", 16)
    result = run(["submit", "-f", path], fake)
    assert result.exit_code == 3
    assert "would never run: huge: each pod needs 16 H100" in result.output
    assert len(fake.objects) == before
    forced = run(["submit", "-f", path, "--force"], fake)
    assert forced.exit_code == 0
    assert len(fake.objects) == before + 1


def test_server_refusal_is_never(tmp_path: Path) -> None:
    from gryvia_cli.errors import RejectedError

    fake = busy_cluster()

    def refuse(*_a: object, **_k: object) -> Any:
        raise RejectedError('admission webhook denied: GPU type "H100" is not allowed')

    fake.dry_run_create = refuse  # type: ignore[method-assign]
    code, doc = explain(fake, manifest(tmp_path, "small", 2))
    assert code == 3
    assert doc["items"][0]["serverDryRun"]["allowed"] is False


def test_dry_run_alone_means_client(tmp_path: Path) -> None:
    from gryvia_cli.cli.optional import with_default_value

    def rewrite(*args: str) -> list[str]:
        return with_default_value(list(args), "--dry-run", "client", ("client", "server"))

    assert rewrite("--dry-run", "-f", "x") == ["--dry-run=client", "-f", "x"]
    assert rewrite("--dry-run", "server") == ["--dry-run", "server"]
    assert rewrite("--", "--dry-run") == ["--", "--dry-run"]
    result = run(["submit", "--dry-run", "-f", manifest(tmp_path, "a", 1)], FakeAccess())
    assert result.exit_code == 0 and "nothing created" in result.output
