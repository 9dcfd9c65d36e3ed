"""Jobs that name a storage backend (issue 41 points 1 and 5): the claim a backend makes, the
admission warnings and denial, and the words of a job that waits for its storage."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, cast

from aiohttp.test_utils import TestClient, TestServer

from gryvia_operator.api.jobstorage import (
    DataClaim,
    data_claim,
    find_backend,
    is_quota_refusal,
    quota_refusal_text,
    storage_admission,
)
from gryvia_operator.api.pending import EstimatedStart, PendingStatus
from gryvia_operator.api.pendingtext import waiting_line
from gryvia_operator.api.storage import GryviaStorage
from gryvia_operator.handlers.jobstorage import with_storage_message
from gryvia_operator.reconcile.aijob import Observed, reconcile_job
from gryvia_operator.reconcile.children import build_batch_job, build_pvc
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.jobstorage import storage_wait
from gryvia_operator.reconcile.pending import WaitContext, wait_status
from gryvia_operator.reconcile.views import ChildView, PodView
from gryvia_operator.webhook.review import AIJOB_PATH, PolicyContext, review_aijob
from gryvia_operator.webhook.server import TlsFiles, WebhookServer
from tests.builders import gpu_node, make_child, make_job, make_pod

NOW = datetime(2026, 12, 6, 7, 0, 0, tzinfo=UTC)
NODES = (gpu_node("h100-a", "H100"),)
REFUSAL = (
    'persistentvolumeclaims "train-data" is forbidden: exceeded quota: gryvia-storage-fast, '
    "requested: fast-sc.storageclass.storage.k8s.io/requests.storage=5Gi, used: "
    "fast-sc.storageclass.storage.k8s.io/requests.storage=0, limited: "
    "fast-sc.storageclass.storage.k8s.io/requests.storage=1Gi"
)


def _backend(name: str = "fast", phase: str | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaStorage",
        "metadata": {"name": name},
        "spec": {"backend": "existing", "storageClass": f"{name}-sc", **spec},
    }
    if phase is not None:
        body["status"] = {"phase": phase, "message": "provisioner example.com/none never bound"}
    return body


def _model(body: dict[str, Any]) -> GryviaStorage:
    return GryviaStorage.model_validate(body)


def test_a_backend_gives_the_claim_its_class_and_first_access_mode() -> None:
    backend = find_backend("fast", [_backend("slow"), _backend("fast", accessModes=["RWO"])])
    assert backend is None  # a body that does not parse counts as absent
    backend = find_backend("fast", [_backend("fast", accessModes=["ReadWriteOnce"])])
    claim = data_claim("fast", backend)
    assert claim == DataClaim("fast-sc", "ReadWriteOnce", "fast")
    pvc = build_pvc(make_job("t").storage("fast", "2Ti").model(), claim)
    assert pvc is not None
    assert pvc["spec"]["storageClassName"] == "fast-sc"
    assert pvc["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert pvc["spec"]["resources"]["requests"]["storage"] == "2Ti"
    # no backend of that name: the name is the class, ReadWriteMany, as before backends
    assert data_claim("plain", None) == DataClaim("plain", "ReadWriteMany", None)


def test_reconcile_creates_the_claim_from_the_backend() -> None:
    claim = DataClaim("fast-sc", "ReadWriteOnce", "fast")
    job = make_job("t").gpus(0).storage("fast").model()
    result = reconcile_job(job, Observed(nodes=NODES, data_claim=claim), ReconcileConfig(), NOW)
    first = result.actions[0]
    assert (first.verb, first.kind) == ("create", "PersistentVolumeClaim")
    assert first.body["spec"]["storageClassName"] == "fast-sc"


def test_a_read_write_many_backend_gives_the_namespace_one_shared_claim() -> None:
    claim = data_claim("fast", _model(_backend("fast")))  # accessModes default: ReadWriteMany
    assert claim.shared and claim.claim_name("t") == "gryvia-data-fast"
    assert not DataClaim("plain").shared  # a plain class: the job's own claim
    assert not DataClaim("x", "ReadWriteOnce", "x").shared
    job = make_job("t").gpus(0).storage("fast", "500Gi").model()
    pvc = build_pvc(job, claim)
    assert pvc is not None
    meta = pvc["metadata"]
    assert (meta["name"], meta["namespace"]) == ("gryvia-data-fast", job.namespace)
    assert "ownerReferences" not in meta  # it outlives the jobs that mount it
    assert meta["labels"]["gryvia.io/job"] == "" and meta["labels"]["gryvia.io/storage"] == "fast"
    assert pvc["spec"]["resources"]["requests"]["storage"] == "500Gi"
    config = ReconcileConfig(data_claim=claim)
    template = build_batch_job(job, config)["spec"]["template"]["spec"]
    data = next(v for v in template["volumes"] if v["name"] == "data")
    assert data["persistentVolumeClaim"]["claimName"] == "gryvia-data-fast"
    # an existing shared claim (no owner) is the job's: never patched, never a conflict,
    # and a rejected job does not delete it
    shared = ChildView(
        "PersistentVolumeClaim", job.namespace, "gryvia-data-fast", spec={"resources": {}}
    )
    observed = Observed(nodes=NODES, data_claim=claim, pvc=shared)
    result = reconcile_job(job, observed, config, NOW)
    assert [a for a in result.actions if a.kind == "PersistentVolumeClaim"] == []
    rejected = make_job("t").gpus(0).storage("fast").status(phase="Rejected").model()
    assert reconcile_job(rejected, observed, config, NOW).actions == ()


def test_admission_warns_for_a_plain_class_and_a_backend_not_ready() -> None:
    denial, warnings = storage_admission("x", [], {"x": "example.com/p"})
    assert denial is None
    assert warnings == [
        'spec.storage "x" names no GryviaStorage; it is used as a StorageClass name (no health '
        "probe, no tenant storage limits): create one with 'gryvia storage create x --backend "
        "existing --class x'"
    ]
    denial, warnings = storage_admission("fast", [_model(_backend(phase="NotReady"))], {})
    assert denial is None
    assert len(warnings) == 1
    assert warnings[0].startswith('GryviaStorage "fast" is NotReady: provisioner example.com')
    assert storage_admission("fast", [_model(_backend(phase="Ready"))], {}) == (None, [])
    # classes not known yet: no denial, only the plain-class warning
    denial, warnings = storage_admission("x", [], None)
    assert denial is None and len(warnings) == 1


def test_admission_denies_a_name_that_is_neither_and_lists_the_backends() -> None:
    storages = [_model(_backend("fast")), _model(_backend("bulk"))]
    denial, _ = storage_admission("nope", storages, {"fast-sc": "p"})
    assert denial is not None
    assert denial.startswith('spec.storage "nope" names no GryviaStorage and no StorageClass')
    assert "(GryviaStorages: bulk, fast)" in denial
    assert "gryvia storage create nope" in denial


def _review(obj: dict[str, Any]) -> dict[str, Any]:
    request = {"uid": "u1", "operation": "CREATE", "object": obj}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def test_the_admission_review_carries_the_warning_or_the_denial() -> None:
    classes = PolicyContext(storage_classes={"x": "example.com/p"})
    allowed = review_aijob(_review(make_job().storage("x").obj()), None, lambda ns: classes)
    assert allowed["response"]["allowed"] is True
    assert allowed["response"]["warnings"][0].startswith('spec.storage "x" names no GryviaStorage')
    denied = review_aijob(_review(make_job().storage("y").obj()), None, lambda ns: classes)
    assert denied["response"]["allowed"] is False
    assert 'spec.storage "y" names no GryviaStorage' in denied["response"]["status"]["message"]
    loading = PolicyContext(ready=False, storage_classes={})
    unchecked = review_aijob(_review(make_job().storage("y").obj()), None, lambda ns: loading)
    assert unchecked["response"]["allowed"] is True  # policy not loaded: fail open


def test_a_quota_refusal_quotes_the_api_server_and_names_the_fix() -> None:
    assert is_quota_refusal(403, REFUSAL) and not is_quota_refusal(422, REFUSAL)
    text = quota_refusal_text("train-data", DataClaim("fast-sc", "ReadWriteMany", "fast"), REFUSAL)
    assert text.startswith(
        "data claim train-data (class fast-sc) was refused: exceeded quota: gryvia-storage-fast, "
        "requested: fast-sc.storageclass.storage.k8s.io/requests.storage=5Gi"
    )
    assert text.endswith(
        "ask for less with spec.storageRequest, or raise the tenant's limit in GryviaStorage "
        "fast spec.quotas"
    )
    plain = quota_refusal_text("train-data", DataClaim("fast-sc"), REFUSAL)
    assert plain.endswith("or raise ResourceQuota gryvia-storage-fast")
    other = REFUSAL.replace("gryvia-storage-fast", "tenant-storage")
    text = quota_refusal_text("train-data", DataClaim("fast-sc", backend="fast"), other)
    assert text.endswith("or raise ResourceQuota tenant-storage")


def test_a_refused_claim_leaves_the_job_pending_and_retried() -> None:
    text = quota_refusal_text("train-data", DataClaim("fast-sc", backend="fast"), REFUSAL)
    job = make_job("train").gpus(8).gpu_type("H100").storage("fast", "5Gi").model()
    observed = Observed(nodes=NODES, storage_refused=text)
    result = reconcile_job(job, observed, ReconcileConfig(), NOW)
    assert result.actions == ()
    assert result.status["phase"] == "Pending"
    assert result.status["message"] == text
    ready = next(c for c in result.status["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "StorageQuotaExceeded"
    assert result.requeue_after == 30.0
    found = storage_wait(job, result.status, text, None, ())
    status = wait_status(job, result.status, NODES, (), WaitContext(storage=found), NOW)
    assert status["pending"] == {"kind": "Storage", "resource": "storage fast", "message": text}
    pending = PendingStatus.model_validate(status["pending"])
    estimate = EstimatedStart.model_validate(status["estimatedStart"])
    assert waiting_line(pending, estimate) == f"waiting: {text}"  # said once


def _waiting_pod(message: str) -> PodView:
    pod = make_pod("train-0").job("train").phase("Pending").obj()
    pod["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    ]
    return PodView.from_pod(pod)


def test_an_unbound_claim_keeping_pods_waiting_is_the_blocker() -> None:
    job = make_job("train").gpus(8).gpu_type("H100").storage("fast").model()
    status = {"phase": "Scheduling", "message": "0/1 replicas are ready"}
    claim = make_child("PersistentVolumeClaim", "train-data").spec(storageClassName="fast-sc")
    pvc = claim.status(phase="Pending").view()
    pods = (
        _waiting_pod("0/7 nodes are available: pod has unbound immediate PersistentVolumeClaims."),
    )
    event = "waiting for a volume to be created by the external provisioner example.com/none"
    found = storage_wait(job, status, None, pvc, pods, event)
    assert found is not None
    message = found[0]["message"]
    assert message == (
        f"waits for its data claim ml/train-data (class fast-sc) to bind; last event: {event}; "
        "see 'gryvia health storage'"
    )
    assert with_storage_message({**status, "pending": found[0]})["message"] == message
    # pods that wait for GPUs: the (WaitForFirstConsumer) claim is not the reason
    gpus = (_waiting_pod("0/7 nodes are available: 7 Insufficient nvidia.com/gpu."),)
    assert storage_wait(job, status, None, pvc, gpus) is None
    # the scheduler picked a node for the claim: its provisioner alone is awaited
    picked = claim.obj()
    picked["metadata"]["annotations"] = {"volume.kubernetes.io/selected-node": "h100-a"}
    assert storage_wait(job, status, None, ChildView.from_object(picked), gpus) is not None
    bound = make_child("PersistentVolumeClaim", "train-data").status(phase="Bound").view()
    assert storage_wait(job, status, None, bound, pods) is None
    running = (make_pod("train-0").job("train").on("h100-a").view(),)
    assert storage_wait(job, status, None, pvc, running) is None
    started = {**status, "startTime": "2026-12-06T06:00:00Z"}
    assert storage_wait(job, started, None, pvc, pods) is None


async def test_the_webhook_reads_a_class_the_index_has_not_seen_yet() -> None:
    asked: list[str] = []

    async def lookup(name: str) -> str | None:
        asked.append(name)
        return "example.com/new" if name == "new" else None

    server = WebhookServer(
        "127.0.0.1",
        0,
        TlsFiles(cast(Any, None), cast(Any, None), b""),
        lambda: [],
        policy=lambda ns: PolicyContext(storage_classes={"old": "p"}),
        storage_class=lookup,
    )
    client = TestClient(TestServer(server.app()))
    await client.start_server()
    try:
        verdicts = {}
        for name in ("old", "new", "none"):
            review = _review(make_job().storage(name).obj())
            answer = await client.post(AIJOB_PATH, data=json.dumps(review))
            verdicts[name] = (await answer.json())["response"]["allowed"]
        assert verdicts == {"old": True, "new": True, "none": False}
        assert asked == ["new", "none"]  # the index's classes are not read again
    finally:
        await client.close()
