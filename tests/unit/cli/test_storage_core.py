"""Storage backends on the client: the body `gryvia storage create` writes (options and -f) and
its errors, `--quota` parsing, the rows of `list` and `health storage`, the probe stamp and when
a probe request counts as answered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gryvia_cli.core.storage import (
    HEALTH_COLUMNS,
    STORAGE_COLUMNS,
    STORAGE_WIDE_COLUMNS,
    build_storage,
    health_item,
    health_row,
    parse_quota,
    probe_cell,
    probe_finished,
    probe_stamp,
    provisioner_state,
    storage_details,
    storage_from_manifest,
    storage_row,
    storage_wide_row,
)
from gryvia_operator.api.storage import GryviaStorage

NOW = datetime(2026, 12, 6, 6, 30, 0, 250000, tzinfo=UTC)
STAMP = "2026-12-06T06:30:00Z"


def _storage(status: dict[str, Any] | None = None, **spec: Any) -> GryviaStorage:
    body = build_storage("fast", **({"backend": "local-path"} | spec))
    body["metadata"]["creationTimestamp"] = (NOW - timedelta(hours=3)).isoformat()
    if status is not None:
        body["status"] = status
    return GryviaStorage.model_validate(body)


READY: dict[str, Any] = {
    "phase": "Ready",
    "storageClass": "fast",
    "classExists": True,
    "provisioner": "rancher.io/local-path",
    "provisionerAnswering": True,
    "claims": 3,
    "used": "1536Gi",
    "free": "510Ti",
    "lastProbeRequest": STAMP,
    "probe": {
        "claim": "probe-fast-1",
        "startedAt": "2026-12-06T06:30:01Z",
        "finishedAt": "2026-12-06T06:30:02Z",
        "result": "Bound",
        "bindSeconds": 0.42,
    },
}


def test_quota_texts() -> None:
    assert parse_quota("vision=2Ti") == {"tenant": "vision", "requests": "2Ti"}
    assert parse_quota(" vision=2Ti/20 ") == {"tenant": "vision", "requests": "2Ti", "claims": 20}
    for bad in ("vision", "vision=", "=2Ti", "vision=2Ti/x", "vision=2Ti/3/4", "a b=1Gi"):
        with pytest.raises(ValueError, match=r"--quota .*TENANT=QUANTITY\[/CLAIMS\]"):
            parse_quota(bad)


def test_create_builds_a_valid_body_with_only_the_options_given() -> None:
    body = build_storage(
        "fast-nfs",
        backend="nfs",
        endpoint="nfs-1:/export/ai",
        capacity="100Ti",
        access_modes=["ReadWriteMany", "ReadOnlyMany"],
        mount_options=["nfsvers=4.1"],
        quotas=["vision=2Ti/20", "nlp=500Gi"],
        rdma=True,
        probe_seconds=60,
    )
    assert "namespace" not in body["metadata"] and body["kind"] == "GryviaStorage"
    assert body["spec"] == {
        "backend": "nfs",
        "endpoint": "nfs-1:/export/ai",
        "capacity": "100Ti",
        "accessModes": ["ReadWriteMany", "ReadOnlyMany"],
        "mountOptions": ["nfsvers=4.1"],
        "quotas": [
            {"tenant": "vision", "requests": "2Ti", "claims": 20},
            {"tenant": "nlp", "requests": "500Gi"},
        ],
        "rdma": True,
        "probeSeconds": 60,
    }
    assert build_storage("s", backend="existing", storage_class="local-path")["spec"] == {
        "backend": "existing",
        "storageClass": "local-path",
    }


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"backend": "tape"}, r"^spec\.backend \(--backend\): "),
        ({"backend": "nfs"}, r"^spec\.endpoint \(--endpoint\) is required with backend nfs"),
        ({"backend": "nfs", "endpoint": "nfs-1"}, r"^spec\.endpoint \(--endpoint\) is required"),
        ({"backend": "csi"}, r"^spec\.provisioner \(--provisioner\) is required with backend csi"),
        (
            {"backend": "local-path", "capacity": "lots"},
            r'^spec\.capacity \(--capacity\): .*"lots"',
        ),
        ({"backend": "local-path", "access_modes": ["RWX"]}, r"^spec\.accessModes\.0 \(--access"),
        ({"backend": "local-path", "probe_seconds": 5}, r"^spec\.probeSeconds \(--probe-seconds\)"),
        ({"backend": "local-path", "quotas": ["a=1Gi", "a=2Gi"]}, r"^spec\.quotas \(--quota\) "),
        ({"backend": "local-path", "quotas": ["a=much"]}, r"^spec\.quotas\.0\.requests \(--quota"),
        ({"backend": "local-path", "storage_class": "Bad_Class"}, r"^spec\.storageClass \(--cl"),
    ],
)
def test_create_names_the_field_and_its_option(options: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        build_storage("s", **options)


def test_a_manifest_loses_its_namespace_and_status_and_names_the_file() -> None:
    doc = {
        "kind": "GryviaStorage",
        "metadata": {"name": "fast", "namespace": "ml"},
        "spec": {"backend": "local-path", "capacity": "1Ti"},
        "status": {"phase": "Ready"},
    }
    body = storage_from_manifest(doc, "s.yaml")
    assert body["metadata"] == {"name": "fast"} and "status" not in body
    assert body["apiVersion"].startswith("gryvia.io/")
    with pytest.raises(ValueError, match=r"^s\.yaml: spec\.endpoint is required"):
        storage_from_manifest({**doc, "spec": {"backend": "nfs"}}, "s.yaml")
    with pytest.raises(ValueError, match="expected a GryviaStorage manifest"):
        storage_from_manifest({**doc, "kind": "GryviaTenant"}, "s.yaml")


def test_rows_before_the_operator_saw_it() -> None:
    fresh = _storage(storage_class="local-path", capacity="2Ti")
    row = storage_row(fresh, NOW)
    assert len(row) == len(STORAGE_COLUMNS)
    assert row == ["fast", "local-path", "local-path", "2Ti", "-", "-", "-", "unknown", "Unknown"]
    wide = storage_wide_row(fresh, NOW)
    assert len(wide) == len(STORAGE_WIDE_COLUMNS) and wide[-4:] == ["no", "-", "3h", "-"]
    assert dict(storage_details(fresh, NOW))["Status"] == "not seen by the operator yet"


def test_rows_of_a_ready_backend_and_of_a_failing_one() -> None:
    ready = _storage(READY, capacity="512Ti", rdma=True)
    assert storage_row(ready, NOW) == [
        "fast", "local-path", "fast", "512Ti", "1536Gi", "510Ti", "3", "answering", "Ready",
    ]  # fmt: skip
    assert storage_wide_row(ready, NOW)[9:11] == ["yes", "bound in 0.4s"]
    failing = READY | {
        "phase": "NotReady",
        "message": "the probe claim did not bind in 60s; is the provisioner running?",
        "provisionerAnswering": False,
        "probe": READY["probe"] | {"result": "Pending", "bindSeconds": None, "message": "waiting"},
    }
    sick = _storage(failing)
    assert storage_row(sick, NOW)[7:] == ["not answering", "NotReady"]
    assert storage_wide_row(sick, NOW)[-1].startswith("the probe claim did not bind")
    assert probe_cell(sick) == "Pending: waiting"
    details = dict(storage_details(sick, NOW))
    assert details["Status"].startswith("NotReady: the probe claim")
    assert details["Provisioner"] == "rancher.io/local-path, not answering"


def test_health_rows_and_items() -> None:
    ready = _storage(READY, capacity="512Ti")
    row = health_row(ready)
    assert len(row) == len(HEALTH_COLUMNS)
    assert [str(c) for c in row] == [
        "fast", "local-path", "fast", "512Ti", "1536Gi", "510Ti", "no",
        "rancher.io/local-path answering", "bound in 0.4s", "Ready",
    ]  # fmt: skip
    assert row[-1].marker == "ok"
    late = health_row(ready, timed_out=True, waited=120)
    assert str(late[8]) == "no answer in 2m" and late[-1].marker == "ok"
    item = health_item(ready, timed_out=True)
    assert item["healthy"] is False and item["probe"]["bindSeconds"] == 0.42
    assert health_item(ready)["healthy"] is True
    fresh = _storage()
    assert str(health_row(fresh)[7]) == "rancher.io/local-path unknown"
    assert health_row(fresh)[-1].marker == "warn" and health_item(fresh)["healthy"] is False


def test_probe_stamp_and_when_a_request_is_answered() -> None:
    assert probe_stamp(NOW) == STAMP
    assert probe_stamp(NOW.astimezone(timezone_plus_two())) == STAMP
    assert probe_finished(_storage(READY), STAMP)
    assert not probe_finished(_storage(READY), "2026-12-06T06:31:00Z")  # an older answer
    running = READY | {"probe": {"claim": "p", "startedAt": "2026-12-06T06:30:01Z"}}
    assert (
        not probe_finished(_storage(running), STAMP) and probe_cell(_storage(running)) == "running"
    )
    assert not probe_finished(_storage(), STAMP)
    stale = READY | {"probe": READY["probe"] | {"startedAt": "2026-12-06T06:30:03Z"}}
    assert not probe_finished(_storage(stale), STAMP)  # the last probe's finish, a new start
    assert provisioner_state(_storage(READY | {"provisionerAnswering": None})) == "unknown"


def timezone_plus_two() -> Any:
    """A non-UTC zone: the stamp is UTC whatever zone the clock gives."""
    from datetime import timezone

    return timezone(timedelta(hours=2))
