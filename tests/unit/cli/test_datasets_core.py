"""Datasets on the client (gryvia_cli/core/datasets.py): the body `gryvia dataset create`
writes and its errors, the stage request and when `stage --wait` ends, the rows of `list`
and the console's detail lines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from gryvia_cli.core.datasets import (
    DATASET_COLUMNS,
    DATASET_WIDE_COLUMNS,
    DatasetInputError,
    access_text,
    build_dataset,
    dataset_details,
    dataset_from_manifest,
    dataset_row,
    dataset_wide_row,
    stage_request,
    stage_wait,
)
from gryvia_operator.api.dataset import ANNOTATION_STAGE, GryviaDataset

NOW = datetime(2026, 12, 6, 7, 0, 5, 123456, tzinfo=UTC)
EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "dataset.yaml"
ARGS: dict[str, Any] = {"source": "s3://datasets/imagenet-mini", "storage": "fast-nfs",
                        "size": "200Gi"}  # fmt: skip


def _dataset(status: dict[str, Any] | None = None, **args: Any) -> GryviaDataset:
    body = build_dataset("imagenet-mini", **(ARGS | args))
    body["metadata"]["creationTimestamp"] = (NOW - timedelta(hours=3)).isoformat()
    if status is not None:
        body["status"] = status
    return GryviaDataset.model_validate(body)


def test_create_builds_a_valid_body_with_only_the_options_given() -> None:
    body = build_dataset(
        "imagenet-mini",
        **ARGS,
        endpoint="http://127.0.0.1:8333",
        secret="s3-reader",
        refresh_seconds=0,
        tenants=["vision"],
    )
    assert body["spec"] == {
        "source": {
            "url": "s3://datasets/imagenet-mini",
            "endpoint": "http://127.0.0.1:8333",
            "secretRef": {"name": "s3-reader"},
        },
        "cache": {"storage": "fast-nfs", "size": "200Gi", "refreshSeconds": 0},
        "access": {"tenants": ["vision"]},
    }
    assert "namespace" not in body["metadata"]  # cluster-scoped
    assert "access" not in build_dataset("d", **ARGS)["spec"]  # everyone


@pytest.mark.parametrize(
    ("args", "flag", "field", "fix"),
    [
        ({"source": "ftp://host/x"}, "--source", "spec.source.url", "s3://bucket/prefix"),
        ({"size": "200GB"}, "--size", "spec.cache.size", "200Gi"),
        ({"size": "0"}, "--size", "spec.cache.size", "200Gi"),
        ({"refresh_seconds": -1}, "--refresh-seconds", "spec.cache.refreshSeconds", "2592000"),
        ({"tenants": ["x" * 64]}, "--tenant", "spec.access.tenants.0", "63"),
        ({"region": "r" * 64}, "--region", "spec.source.region", "63"),
    ],
)
def test_create_names_the_flag_the_field_and_the_fix(
    args: dict[str, Any], flag: str, field: str, fix: str
) -> None:
    with pytest.raises(DatasetInputError) as caught:
        build_dataset("d", **(ARGS | args))
    err = caught.value
    assert (err.flag, err.field) == (flag, field) and fix in err.fix
    assert str(err).startswith(f"{flag} ({field}): ")


def test_a_manifest_validates_and_loses_its_namespace() -> None:
    doc = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    body = dataset_from_manifest({**doc, "metadata": {**doc["metadata"], "namespace": "x"}}, "f")
    assert body["metadata"] == {"name": "imagenet-mini"}
    GryviaDataset.model_validate(body)
    bad = {**doc, "spec": {**doc["spec"], "cache": {"storage": "s", "size": "lots"}}}
    with pytest.raises(DatasetInputError, match=r"^spec\.cache\.size: ") as caught:
        dataset_from_manifest(bad, "f")
    assert caught.value.flag is None
    with pytest.raises(ValueError, match="expected a GryviaDataset"):
        dataset_from_manifest({**doc, "kind": "GryviaStorage"}, "f")


def test_stage_request_is_the_annotation_at_utc_seconds() -> None:
    value, patch = stage_request(NOW.astimezone(datetime.now().astimezone().tzinfo))
    assert value == "2026-12-06T07:00:05Z"
    assert patch == {"metadata": {"annotations": {ANNOTATION_STAGE: value}}}


def test_stage_wait_ends_when_the_request_was_taken_and_nothing_runs() -> None:
    asked = "2026-12-06T07:00:05Z"
    staged = {"phase": "Ready", "version": "1a2b3c4d5e6f7a8b"}
    old = _dataset({**staged, "lastStageRequest": "2026-12-01T00:00:00Z"})
    waiting = stage_wait(old, asked)
    assert not waiting.done and waiting.text == "waiting for the operator to check the source"
    # the operator records the request when it starts the check; Ready all along
    checking = stage_wait(_dataset({**staged, "lastStageRequest": asked, "staging": "c"}), asked)
    assert not checking.done and checking.text == "checking the source"
    progress = {"bytes": 512, "totalBytes": 1024, "files": 1, "totalFiles": 2}
    copying = _dataset({**staged, "lastStageRequest": asked, "staging": "copy-1",
                        "stagingVersion": "9f8e7d6c5b4a3210", "progress": progress})  # fmt: skip
    assert stage_wait(copying, asked).text == "staging 50% (512 B of 1.0 KiB, 1 of 2 files)"
    ready = stage_wait(_dataset({**staged, "lastStageRequest": asked}), asked)
    assert (ready.done, ready.ok) == (True, True)
    error = "directory not found"
    kept = stage_wait(_dataset({**staged, "lastStageRequest": asked, "sourceError": error}), asked)
    assert (kept.done, kept.ok, kept.message) == (True, False, error)  # Ready, re-stage failed
    failed = stage_wait(
        _dataset({"phase": "Failed", "lastStageRequest": asked, "message": "403 Forbidden"}),
        asked,
    )
    assert (failed.done, failed.ok, failed.message) == (True, False, "403 Forbidden")
    secret = "Secret s3-reader not found in default"
    pending = stage_wait(_dataset({"phase": "Pending", "message": secret}), asked)
    assert not pending.done and pending.text == f"pending: {secret}"
    invalid = stage_wait(_dataset({"phase": "Invalid", "message": "bad"}), asked)
    assert (invalid.done, invalid.ok) == (True, False)
    assert not stage_wait(_dataset(), asked).done


def test_rows_before_the_operator_and_while_staging() -> None:
    fresh = dataset_row(_dataset(), NOW)
    assert len(fresh) == len(DATASET_COLUMNS)
    assert fresh == ["imagenet-mini", "s3://datasets/imagenet-mini", "fast-nfs", "-", "-", "-",
                     "-", "-", "3h"]  # fmt: skip
    status = {
        "phase": "Ready",
        "version": "1a2b3c4d5e6f7a8b",
        "staging": "imagenet-mini-copy-1",
        "stagingVersion": "9f8e7d6c5b4a3210",
        "sizeBytes": 3 * 2**30,
        "files": 100,
        "cacheClaim": "gryvia-dataset-imagenet-mini-1a2b3c4d5e6f7a8b",
        "stagedAt": (NOW - timedelta(hours=1)).isoformat(),
        "progress": {"bytes": 2**30, "totalBytes": 4 * 2**30, "files": 10, "totalFiles": 120},
        "message": "staging version 9f8e7d6c5b4a3210",
    }
    row = dataset_wide_row(_dataset(status, tenants=["vision"], namespaces=["ml"]), NOW)
    assert len(row) == len(DATASET_WIDE_COLUMNS)
    assert row[3:8] == [
        "Ready",  # the staged version stays while the next one copies
        "1a2b3c4d5e6f7a8b",
        "3.0 GiB",
        100,
        "staging 25% (1.0 GiB of 4.0 GiB, 10 of 120 files)",
    ]
    assert row[9:] == [
        "tenants vision; namespaces ml",
        status["cacheClaim"],
        "2026-12-06 06:00Z",
        status["message"],
    ]
    done = {k: v for k, v in status.items() if k not in ("staging", "stagingVersion")}
    assert dataset_row(_dataset(done), NOW)[7] == "-"  # nothing runs
    checking = dataset_row(_dataset({**done, "staging": "imagenet-mini-check-1"}), NOW)
    assert checking[7] == "checking the source"


def test_access_in_words() -> None:
    assert access_text(_dataset()) == "all"
    assert access_text(_dataset(tenants=["a", "b"])) == "tenants a,b"
    body = build_dataset("d", **ARGS)
    body["spec"]["access"] = {"tenants": []}
    assert access_text(GryviaDataset.model_validate(body)) == "none"


def test_details_say_what_is_staged_and_what_stages() -> None:
    lines = dict(dataset_details(_dataset(refresh_seconds=0), NOW))
    assert lines["Refresh"] == "only when asked" and lines["Status"].startswith("not seen")
    status = {
        "phase": "Staging",
        "stagingVersion": "v2-9f8e7d6c5b4a3210",
        "progress": {"bytes": 10, "files": 1},
        "lastCheckAt": (NOW - timedelta(minutes=5)).isoformat(),
        "namespaces": ["tenant-vision"],
        "sourceError": "403 Forbidden",
        "copySeconds": 125.5,
    }
    lines = dict(dataset_details(_dataset(status, secret="s3-reader"), NOW))
    assert lines["Source error"] == "403 Forbidden" and lines["Copy took"] == "2m5s"
    assert lines["Source"].endswith("(credentials: Secret s3-reader)")
    assert lines["Refresh"] == "every 60m"
    assert lines["Now"] == "v2-9f8e7d6c5b4a3210: staging 10 B, 1 file"
    assert lines["Last check"] == "5m ago" and lines["Mounted in"] == "tenant-vision"
