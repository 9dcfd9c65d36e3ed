"""The CLI's pure workspace helpers: the manifest, rows, details and the heartbeat patch."""

from __future__ import annotations

import datetime as dt

import pytest

from gryvia_cli.core.workspaces import (
    build_workspace,
    heartbeat_patch,
    phase_of,
    workspace_details,
    workspace_row,
)
from gryvia_operator.api.workspace import ANNOTATION_SESSION_AT, GryviaWorkspace

NOW = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)


def test_manifest_carries_only_what_was_given() -> None:
    body = build_workspace(
        "dev", "ml", image="busybox", gpus=1, gpu_type="H100", storage_size="5Gi",
        idle_timeout_minutes=30, max_lifetime_hours=1.5,
    )  # fmt: skip
    assert body["spec"] == {
        "image": "busybox",
        "gpus": 1,
        "gpuType": "H100",
        "storage": {"size": "5Gi"},
        "idleTimeoutMinutes": 30,
        "maxLifetimeHours": 1.5,
    }
    assert build_workspace("dev", "ml", image="x")["spec"] == {"image": "x", "gpus": 0}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gpu_type": "H100"}, "--gpu-type needs --gpus"),
        ({"cpu": "lots"}, "--cpu:"),
        ({"storage_size": "big"}, "--storage:"),
    ],
)
def test_bad_options_are_named(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_workspace("dev", "ml", image="x", **kwargs)  # type: ignore[arg-type]


def _ws(stopped: bool, phase: str | None, reason: str | None = None) -> GryviaWorkspace:
    body = build_workspace("dev", "ml", image="x", idle_timeout_minutes=5, stopped=stopped)
    if phase:
        body["status"] = {"phase": phase, "stopReason": reason, "runs": 1}
    return GryviaWorkspace.model_validate(body)


def test_phase_shows_a_pending_start_or_stop() -> None:
    assert phase_of(_ws(False, None)) == "Pending"
    assert phase_of(_ws(True, "Running")) == "Stopping"
    assert phase_of(_ws(False, "Stopped")) == "Starting"
    assert phase_of(_ws(True, "Stopped")) == "Stopped"


def test_row_and_details_name_the_stop_reason() -> None:
    row = workspace_row(_ws(True, "Stopped", "Idle"), NOW)
    assert row[:6] == ["dev", "Stopped", 0, "5m", "-", "Idle"]
    lines = dict(workspace_details(_ws(True, "Stopped", "Idle"), NOW))
    assert lines["Stopped by"] == "Idle"
    assert lines["Home"].startswith("/home/gryvia on PVC dev-home")


def test_heartbeat_is_utc() -> None:
    local = NOW.astimezone(dt.timezone(dt.timedelta(hours=2)))
    patch = heartbeat_patch(local)
    assert patch["metadata"]["annotations"][ANNOTATION_SESSION_AT] == "2026-12-02T12:00:00Z"


def test_a_gpu_workspace_is_idle_by_its_gpus_where_they_are_sampled() -> None:
    from gryvia_cli.core.workspaces import idle_rule

    body = build_workspace("dev", "ml", image="x", gpus=1, idle_gpu_percent=12.5,
                           idle_timeout_minutes=30)  # fmt: skip
    assert body["spec"]["idleGPUActivityPercent"] == 12.5
    gpu = GryviaWorkspace.model_validate(body)
    assert idle_rule(gpu) == (
        "no shell session, GPU activity at most 12.5 % where GPUs are sampled, else CPU at "
        "most 100m"
    )
    assert dict(workspace_details(gpu, NOW))["Idle timeout"] == f"30m ({idle_rule(gpu)})"
    cpu = GryviaWorkspace.model_validate(build_workspace("c", "ml", image="x"))
    assert idle_rule(cpu) == "no shell session, CPU at most 100m"
    default = GryviaWorkspace.model_validate(build_workspace("d", "ml", image="x", gpus=1))
    assert default.spec.idle_gpu_activity_percent == 5.0
    with pytest.raises(ValueError, match="--idle-gpu-percent needs --gpus"):
        build_workspace("c", "ml", image="x", idle_gpu_percent=10)
