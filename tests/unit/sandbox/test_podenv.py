"""Container env, argv and host names as the kubelet builds them."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_cli.sandbox.podenv import (
    PodSpecError,
    container_argv,
    container_env,
    expand,
    pod_hostname,
)

INDEX = "batch.kubernetes.io/job-completion-index"
POD: dict[str, Any] = {
    "metadata": {
        "name": "job-0-abc",
        "namespace": "team-a",
        "uid": "u-1",
        "labels": {"app": "train"},
        "annotations": {"batch.kubernetes.io/job-completion-index": "3"},
    },
    "spec": {"nodeName": "gpu-h100-0", "hostname": "job-0", "subdomain": "job-headless"},
}


def _lookup(kind: str, ns: str, name: str, key: str | None) -> Any:
    data = {
        ("ConfigMap", "team-a", "cfg"): {"lr": "0.1", "bs": "32"},
        ("Secret", "team-a", "tok"): {"token": "s3cret"},
    }.get((kind, ns, name))
    if data is None:
        return None
    return data if key is None else data.get(key)


def test_expand_references_and_escapes() -> None:
    env = {"A": "1", "B": "two"}
    assert expand("$(A)-$(B)-$(C)-$$(A)", env) == "1-two-$(C)-$(A)"


def test_env_in_order_with_field_refs_and_lookups() -> None:
    container = {
        "name": "c",
        "resources": {"limits": {"nvidia.com/gpu": "8", "cpu": "1500m"}},
        "envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}],
        "env": [
            {
                "name": "IDX",
                "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{INDEX}']"}},
            },
            {"name": "RANK", "value": "$(IDX)"},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
            {
                "name": "GPUS",
                "valueFrom": {"resourceFieldRef": {"resource": "limits.nvidia.com/gpu"}},
            },
            {"name": "CPUS", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "tok", "key": "token"}}},
            {
                "name": "OPT",
                "valueFrom": {"configMapKeyRef": {"name": "nope", "key": "x", "optional": True}},
            },
        ],
    }
    env = container_env(POD, container, pod_ip="127.244.0.9", host_ip="127.0.0.1", lookup=_lookup)
    assert env == {
        "CFG_lr": "0.1",
        "CFG_bs": "32",
        "IDX": "3",
        "RANK": "3",
        "POD_IP": "127.244.0.9",
        "NODE": "gpu-h100-0",
        "APP": "train",
        "GPUS": "8",
        "CPUS": "2",
        "TOKEN": "s3cret",
    }


def test_missing_required_reference_is_an_error_naming_it() -> None:
    container = {
        "name": "c",
        "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "missing"}}}],
    }
    with pytest.raises(PodSpecError, match="key 'missing' of configmap 'cfg'"):
        container_env(POD, container, pod_ip="", host_ip="", lookup=_lookup)


def test_argv_expands_and_needs_a_command() -> None:
    assert container_argv({"command": ["echo"], "args": ["rank=$(RANK)"]}, {"RANK": "1"}) == [
        "echo",
        "rank=1",
    ]
    with pytest.raises(
        PodSpecError, match=r"set spec\.command \(and spec\.args\) in the GryviaAIJob"
    ):
        container_argv({"name": "c", "args": ["x"]}, {})


def test_hostname_prefers_spec_hostname() -> None:
    assert pod_hostname(POD) == "job-0"
    assert pod_hostname({"metadata": {"name": "p" * 80}, "spec": {}}) == "p" * 63


def test_a_missing_reference_is_its_own_error_so_the_runner_waits_for_it() -> None:
    """The kubelet keeps a container whose ConfigMap is missing waiting (and retries); a
    missing reference is told apart from a spec that can never start."""
    from gryvia_cli.sandbox.podenv import MissingReferenceError, container_env

    pod = {"metadata": {"namespace": "ns"}, "spec": {}}
    container = {
        "name": "c",
        "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}}],
    }
    with pytest.raises(MissingReferenceError, match="key 'k' of configmap 'cfg' not found"):
        container_env(pod, container, pod_ip="1.2.3.4", host_ip="1.2.3.4", lookup=lambda *a: None)
    found = container_env(
        pod, container, pod_ip="1.2.3.4", host_ip="1.2.3.4", lookup=lambda *a: "v"
    )
    assert found["X"] == "v"
