"""The pure decision of a GryviaDataset: check, copy, share, status; and its Jobs' logs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from gryvia_operator.api.dataset import LABEL_ROLE, GryviaDataset
from gryvia_operator.api.storage import GryviaStorage
from gryvia_operator.reconcile import datasetjobs as dj
from gryvia_operator.reconcile.dataset import (
    DatasetObserved,
    JobView,
    mirror_volume_name,
    reconcile_dataset,
)

NOW = datetime(2026, 12, 6, 8, 0, tzinfo=UTC)
STORAGE = GryviaStorage.model_validate(
    {"metadata": {"name": "fast", "uid": "s1"}, "spec": {"backend": "local-path"}}
)


def dataset(status: dict[str, Any] | None = None, **source: Any) -> GryviaDataset:
    body: dict[str, Any] = {
        "metadata": {"name": "mini", "uid": "d1", "generation": 1},
        "spec": {
            "source": {"url": "s3://datasets/mini", "endpoint": "http://10.0.0.1:8333",
                       "secretRef": {"name": "s3-reader"}, **source},
            "cache": {"storage": "fast", "size": "1Gi", "refreshSeconds": 600},
        },
    }  # fmt: skip
    if status is not None:
        body["status"] = status
    return GryviaDataset.model_validate(body)


def seen(**over: Any) -> DatasetObserved:
    base: dict[str, Any] = {
        "staging_namespace": "gryvia-system",
        "storage": STORAGE,
        "storages": ("fast",),
        "secret_found": True,
        "jobs": (),
        "claims": {},
        "volume": None,
        "consumers": (),
        "mirrors": {},
        "mirror_volumes": (),
    }
    base.update(over)
    return DatasetObserved(**base)


CHECK_LOG = (
    "GRYVIA-DATASET-VERSION 0123456789abcdef\n"
    'GRYVIA-DATASET-SIZE {"count": 100, "bytes": 52428800}\n'
)


def test_a_new_dataset_is_checked_then_copied_into_a_claim_of_its_version() -> None:
    first = reconcile_dataset(dataset(), seen(), NOW)
    [check] = first.create
    assert check["kind"] == "Job" and check["metadata"]["labels"][LABEL_ROLE] == "check"
    env = {e["name"]: e for e in check["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["RCLONE_CONFIG_SRC_ENDPOINT"]["value"] == "http://10.0.0.1:8333"
    assert env["AWS_SECRET_ACCESS_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "s3-reader"
    assert env["GRYVIA_SOURCE"]["value"] == "src:datasets/mini"
    assert first.status["phase"] == "Pending"
    done = JobView(check["metadata"]["name"], "check", "Succeeded", None, CHECK_LOG)
    second = reconcile_dataset(
        dataset(first.status), seen(jobs=(done,)), NOW + timedelta(seconds=5)
    )
    claim, copy = second.create
    assert claim["metadata"]["name"] == "gryvia-dataset-mini-0123456789abcdef"
    assert claim["spec"]["storageClassName"] == "fast"
    assert (
        copy["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"]
        == (claim["metadata"]["name"])
    )
    assert ("Job", "gryvia-system", done.name) in second.delete
    assert second.status["phase"] == "Staging"
    assert second.status["stagingVersion"] == "0123456789abcdef"
    stats = {"stats": {"bytes": 26214400, "totalBytes": 52428800, "transfers": 50,
                       "totalTransfers": 100, "speed": 1048576.0, "eta": 25}}  # fmt: skip
    running = JobView(
        copy["metadata"]["name"], "copy", "Running", "0123456789abcdef", json.dumps(stats)
    )
    third = reconcile_dataset(
        dataset(second.status), seen(jobs=(running,)), NOW + timedelta(seconds=8)
    )
    progress = third.status["progress"]
    assert (progress["percent"], progress["files"], progress["totalFiles"]) == (50.0, 50, 100)
    assert progress["etaSeconds"] == 25
    finished = JobView(running.name, "copy", "Succeeded", "0123456789abcdef", CHECK_LOG)
    fourth = reconcile_dataset(
        dataset(third.status), seen(jobs=(finished,)), NOW + timedelta(seconds=20)
    )
    assert fourth.status["phase"] == "Ready"
    assert (fourth.status["files"], fourth.status["sizeBytes"]) == (100, 52428800)
    assert fourth.status["version"] == "0123456789abcdef"
    assert "progress" not in fourth.status and "staging" not in fourth.status
    assert fourth.requeue_after == 585.0  # the next check: 600 s after the first one


def test_an_unchanged_source_is_not_copied_again() -> None:
    staged = {"version": "0123456789abcdef", "staging": "gryvia-check-mini-1",
              "lastCheckAt": "2026-12-06T07:00:00Z", "files": 100, "sizeBytes": 1}  # fmt: skip
    done = JobView("gryvia-check-mini-1", "check", "Succeeded", None, CHECK_LOG)
    plan = reconcile_dataset(dataset(staged), seen(jobs=(done,)), NOW)
    assert plan.create == []
    assert plan.status["phase"] == "Ready"
    assert plan.status["lastCheckAt"] == "2026-12-06T08:00:00Z"


def test_a_declared_version_change_checks_and_names_the_new_version() -> None:
    staged = {"version": "v1-0123456789abcdef", "lastCheckAt": NOW.isoformat()}
    plan = reconcile_dataset(dataset(staged, version="v2"), seen(), NOW)
    assert plan.create[0]["metadata"]["labels"][LABEL_ROLE] == "check"


def test_a_missing_bucket_fails_with_rclone_s_error() -> None:
    error = json.dumps({"level": "error", "msg": "directory not found", "source": "x"})
    status = {"staging": "gryvia-check-mini-1"}
    done = JobView("gryvia-check-mini-1", "check", "Failed", None, error + "\n")
    plan = reconcile_dataset(dataset(status), seen(jobs=(done,)), NOW)
    assert plan.status["phase"] == "Failed"
    assert "directory not found" in plan.status["message"]
    assert "spec.source.url s3://datasets/mini" in plan.status["message"]
    assert plan.create == []  # retried after RETRY_SECONDS, not at once


def test_a_missing_secret_or_backend_waits_with_the_fix() -> None:
    plan = reconcile_dataset(dataset(), seen(secret_found=False), NOW)
    assert plan.status["phase"] == "Pending" and plan.create == []
    assert 'Secret "s3-reader" not found in namespace gryvia-system' in plan.status["message"]
    assert "kubectl create secret generic s3-reader" in plan.status["message"]
    plan = reconcile_dataset(dataset(), seen(storage=None, storages=("other",)), NOW)
    assert 'spec.cache.storage names no GryviaStorage "fast"' in plan.status["message"]
    assert "(other)" in plan.status["message"]


def test_consumers_get_a_read_only_copy_of_the_staged_volume() -> None:
    staged = {"version": "v", "cacheClaim": "gryvia-dataset-mini-v", "lastCheckAt": NOW.isoformat()}
    volume = {"spec": {"hostPath": {"path": "/x"}, "capacity": {"storage": "1Gi"},
                       "storageClassName": "fast", "claimRef": {"name": "c"}}}  # fmt: skip
    plan = reconcile_dataset(dataset(staged), seen(volume=volume, consumers=("tenant-a",)), NOW)
    pv, pvc = plan.create
    assert pv["spec"]["hostPath"] == {"path": "/x"}
    assert pv["spec"]["accessModes"] == ["ReadOnlyMany"]
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert pv["spec"]["claimRef"] == {"namespace": "tenant-a", "name": "gryvia-dataset-mini-v"}
    assert pv["metadata"]["name"] == mirror_volume_name(dataset(), "v", "tenant-a")
    assert pvc["spec"]["volumeName"] == pv["metadata"]["name"]
    assert plan.status["namespaces"] == ["tenant-a"]


def test_log_parsing() -> None:
    assert dj.result_lines(CHECK_LOG) == ("0123456789abcdef", 100, 52428800)
    assert dj.log_error("plain failure\n") == "plain failure"
    assert dj.last_stats("nothing") is None
    assert dj.staging_namespace(dataset(url="pvc://team/claim/sub"), "d") == "team"
    env, path, _ = dj.source_env(dataset(url="pvc://team/claim/sub"))
    assert path == "source/sub" and env == []
    _, path, flag = dj.source_env(dataset(url="https://example.org/data"))
    assert path == "src:" and flag == ""
