"""Children builders: batch Job, StatefulSet, headless Service, PVC and the pod template."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_operator.api import DurationError
from gryvia_operator.reconcile.children import (
    build_batch_job,
    build_headless_service,
    build_pvc,
    build_statefulset,
    build_workload,
    desired_children,
)
from gryvia_operator.reconcile.config import ReconcileConfig
from tests.builders import make_job


def _container(obj: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = obj["spec"]["template"]["spec"]["containers"][0]
    return container


def test_batch_job_is_indexed_and_owned() -> None:
    job = make_job("train").gpus(8).gpu_type("H100").retry_limit(3).timeout("1h30m").model()
    out = build_batch_job(job)
    spec = out["spec"]
    assert out["metadata"]["name"] == "train"
    assert out["metadata"]["namespace"] == "ml"
    ref = out["metadata"]["ownerReferences"][0]
    assert ref == {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAIJob",
        "name": "train",
        "uid": "uid-train",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == 1
    assert spec["backoffLimit"] == 3
    assert spec["activeDeadlineSeconds"] == 5400
    assert spec["suspend"] is False
    assert spec["podFailurePolicy"]["rules"][0] == {
        "action": "Ignore",
        "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
    }
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["subdomain"] == "train-headless"
    assert pod["nodeSelector"] == {"gryvia.io/gpu": "H100"}
    assert _container(out)["name"] == "trainer"
    assert _container(out)["resources"] == {"limits": {"nvidia.com/gpu": "8"}}


def test_labels_on_job_and_pods() -> None:
    out = build_batch_job(make_job("train").type("fine-tuning").model())
    expected = {
        "gryvia.io/job": "train",
        "gryvia.io/job-name": "train",
        "gryvia.io/type": "fine-tuning",
        "app.kubernetes.io/managed-by": "gryvia-operator",
    }
    assert out["metadata"]["labels"] == expected
    assert out["spec"]["template"]["metadata"]["labels"] == expected


def test_cpu_only_job_has_no_gpu_limit_or_selector() -> None:
    out = build_batch_job(make_job().gpus(0).gpu_type("H100").model())
    assert "resources" not in _container(out)
    assert "nodeSelector" not in out["spec"]["template"]["spec"]


def test_distributed_job_gets_completions_shm_and_port() -> None:
    job = make_job("d").gpus(4).distributed(3).model()
    out = build_batch_job(job)
    assert out["spec"]["completions"] == out["spec"]["parallelism"] == 3
    pod = out["spec"]["template"]["spec"]
    assert {"name": "shm", "emptyDir": {"medium": "Memory"}} in pod["volumes"]
    assert {"name": "shm", "mountPath": "/dev/shm"} in _container(out)["volumeMounts"]
    assert _container(out)["ports"] == [{"name": "torch-dist", "containerPort": 29500}]


def test_elastic_job_gets_a_success_policy() -> None:
    job = make_job().gpus(1).distributed(4, min_nodes=2).model()
    assert build_batch_job(job)["spec"]["successPolicy"] == {"rules": [{"succeededCount": 2}]}
    same = make_job().gpus(1).distributed(4, min_nodes=4).model()
    assert "successPolicy" not in build_batch_job(same)["spec"]


def test_suspend_and_bad_timeout() -> None:
    assert build_batch_job(make_job().suspend().model())["spec"]["suspend"] is True
    with pytest.raises(DurationError):
        build_batch_job(make_job().timeout("0s").model())


def test_rdma_pod_template() -> None:
    out = build_batch_job(make_job().gpus(8).gpu_type("H100").network("rdma").model())
    template = out["spec"]["template"]
    assert template["spec"]["nodeSelector"] == {"gryvia.io/gpu": "H100", "gryvia.io/rdma": "true"}
    assert template["metadata"]["annotations"] == {
        "gryvia.io/env-version": "2",
        "gryvia.io/rdma": "true",
        "k8s.v1.cni.cncf.io/networks": "rdma-network",
    }
    sriov = build_batch_job(make_job().network("sriov").model())["spec"]["template"]
    assert sriov["metadata"]["annotations"]["gryvia.io/sriov"] == "true"
    assert "gryvia.io/rdma" not in sriov["spec"].get("nodeSelector", {})


def test_pass_through_fields() -> None:
    job = (
        make_job()
        .command("python", "train.py")
        .set(
            args=["--lr", "1e-4"],
            workingDir="/work",
            imagePullPolicy="Always",
            resources={"requests": {"cpu": "4", "memory": "16Gi"}},
            tolerations=[{"key": "gpu", "operator": "Exists"}],
            affinity={"nodeAffinity": {}},
            volumes=[{"name": "cfg", "configMap": {"name": "c"}}],
            volumeMounts=[{"name": "cfg", "mountPath": "/cfg"}],
            nodeSelector={"zone": "a"},
        )
        .annotate("gryvia.io/priority-class", "high")
        .model()
    )
    out = build_batch_job(job)
    pod, container = out["spec"]["template"]["spec"], _container(out)
    assert container["command"] == ["python", "train.py"]
    assert container["args"] == ["--lr", "1e-4"]
    assert container["workingDir"] == "/work"
    assert container["imagePullPolicy"] == "Always"
    assert container["resources"] == {
        "requests": {"cpu": "4", "memory": "16Gi"},
        "limits": {"nvidia.com/gpu": "1"},
    }
    assert pod["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
    assert pod["affinity"] == {"nodeAffinity": {}}
    assert pod["volumes"] == [{"name": "cfg", "configMap": {"name": "c"}}]
    assert container["volumeMounts"] == [{"name": "cfg", "mountPath": "/cfg"}]
    assert pod["nodeSelector"] == {"zone": "a"}
    assert pod["priorityClassName"] == "high"


def test_statefulset_for_inference() -> None:
    job = make_job("serve").type("inference").gpus(1).distributed(2).model()
    out = build_workload(job)
    assert out["kind"] == "StatefulSet"
    assert out["metadata"]["name"] == "serve-training"
    assert out["spec"]["replicas"] == 2
    assert out["spec"]["serviceName"] == "serve-headless"
    assert out["spec"]["selector"] == {"matchLabels": {"gryvia.io/job": "serve"}}
    assert out["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    assert "subdomain" not in out["spec"]["template"]["spec"]
    assert build_statefulset(job)["kind"] == "StatefulSet"
    assert build_workload(make_job().workload_kind("statefulset").model())["kind"] == "StatefulSet"


def test_headless_service() -> None:
    out = build_headless_service(make_job("train").model())
    assert out["metadata"]["name"] == "train-headless"
    assert out["spec"]["clusterIP"] == "None"
    assert out["spec"]["publishNotReadyAddresses"] is True
    assert out["spec"]["selector"] == {"gryvia.io/job": "train"}
    assert out["spec"]["ports"][0]["port"] == 29500


def test_pvc_only_with_storage() -> None:
    assert build_pvc(make_job().model()) is None
    pvc = build_pvc(make_job("t").storage("fast-rwx").model())
    assert pvc is not None
    assert pvc["metadata"]["name"] == "t-data"
    assert pvc["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "storageClassName": "fast-rwx",
        "resources": {"requests": {"storage": "100Gi"}},
    }
    sized = build_pvc(make_job().storage("x", "2Ti").model())
    assert sized is not None
    assert sized["spec"]["resources"]["requests"]["storage"] == "2Ti"


def test_storage_is_mounted_at_data() -> None:
    out = build_batch_job(make_job("t").storage("x").model())
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "t-data"}} in out["spec"][
        "template"
    ]["spec"]["volumes"]
    assert {"name": "data", "mountPath": "/data"} in _container(out)["volumeMounts"]


def test_desired_children_order() -> None:
    kinds = [c["kind"] for c in desired_children(make_job().storage("x").model())]
    assert kinds == ["PersistentVolumeClaim", "Service", "Job"]
    kinds = [
        c["kind"] for c in desired_children(make_job().model(), ReconcileConfig(), "statefulset")
    ]
    assert kinds == ["Service", "StatefulSet"]


def test_mig_slice_job_requests_the_mig_resource_and_no_gpu_label() -> None:
    job = make_job("slice").gpus(1).gpu_type("H100-MIG-3G.40GB").model()
    out = build_batch_job(job)
    assert _container(out)["resources"] == {"limits": {"nvidia.com/mig-3g.40gb": "1"}}
    assert "gryvia.io/gpu" not in (out["spec"]["template"]["spec"].get("nodeSelector") or {})
