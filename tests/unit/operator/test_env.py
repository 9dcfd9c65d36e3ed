"""Distributed environment variables of the trainer container."""

from __future__ import annotations

from typing import Any

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.reconcile.env import (
    WorkloadKind,
    build_distributed_env,
    build_env,
    master_addr,
)
from tests.builders import make_job


def _env(
    job: GryviaAIJob, kind: WorkloadKind = "job", domain: str = "cluster.local"
) -> dict[str, Any]:
    return {
        e["name"]: e.get("value", e.get("valueFrom"))
        for e in build_env(job, kind=kind, cluster_domain=domain)
    }


def test_not_distributed_has_no_rendezvous_env() -> None:
    assert build_distributed_env(make_job().model(), kind="job") == []


def test_job_rendezvous_env() -> None:
    env = _env(make_job("train", "team").gpus(8).distributed(4).model())
    assert env["MASTER_ADDR"] == "train-0.train-headless.team.svc.cluster.local"
    assert env["MASTER_PORT"] == "29500"
    assert env["WORLD_SIZE"] == "32"
    index = {
        "fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        }
    }
    assert env["RANK"] == index
    assert env["NODE_RANK"] == index
    assert env["NNODES"] == "4"
    assert env["NPROC_PER_NODE"] == "8"
    assert env["NCCL_DEBUG"] == "INFO"
    assert "NCCL_IB_DISABLE" not in env


def test_statefulset_uses_pod_index_and_training_name() -> None:
    job = make_job("serve").gpus(1).distributed(2).model()
    env = _env(job, kind="statefulset", domain="corp.local")
    assert env["MASTER_ADDR"] == "serve-training-0.serve-headless.ml.svc.corp.local"
    assert env["RANK"] == {
        "fieldRef": {"fieldPath": "metadata.labels['apps.kubernetes.io/pod-index']"}
    }
    assert master_addr(job, "job", "x") == "serve-0.serve-headless.ml.svc.x"


def test_cpu_only_gloo() -> None:
    env = _env(make_job().gpus(0).distributed(2, backend="gloo", framework="pytorch").model())
    assert env["WORLD_SIZE"] == "2"
    assert env["NPROC_PER_NODE"] == "1"
    assert env["GRYVIA_DIST_BACKEND"] == "gloo"
    assert env["GRYVIA_DIST_FRAMEWORK"] == "pytorch"
    assert "NCCL_DEBUG" not in env


def test_rdma_nccl_settings() -> None:
    env = _env(make_job().gpus(8).network("rdma").distributed(2, backend="nccl").model())
    assert env["NCCL_IB_DISABLE"] == "0"
    assert env["NCCL_NET_GDR_LEVEL"] == "5"
    gloo = _env(make_job().gpus(8).network("rdma").distributed(2, backend="gloo").model())
    assert "NCCL_IB_DISABLE" not in gloo


def test_elastic_range() -> None:
    env = _env(make_job().gpus(1).distributed(4, min_nodes=2).model())
    assert env["NNODES"] == "2:4"
    assert env["GRYVIA_ELASTIC"] == "true"
    assert env["GRYVIA_ELASTIC_MIN_NODES"] == "2"
    assert env["GRYVIA_ELASTIC_MAX_NODES"] == "4"


def test_user_env_first_and_wins() -> None:
    job = make_job().gpus(1).env("A", "1").env("NCCL_DEBUG", "WARN").distributed(2).model()
    env = build_env(job, kind="job")
    names = [e["name"] for e in env]
    assert names[:2] == ["A", "NCCL_DEBUG"]
    assert names.count("NCCL_DEBUG") == 1
    assert env[1]["value"] == "WARN"
