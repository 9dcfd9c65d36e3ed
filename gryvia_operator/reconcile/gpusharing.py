"""GPU sharing policies, pure: which policy covers which GPU node, the NVIDIA device plugin
configuration (the ConfigMap NVIDIA's GPU Operator reads), the node labels that select it, the
sandbox's simulated device plugin, and a policy's status.

The configuration shape is the device plugin's config file (`version: v1`, `flags`,
`sharing.timeSlicing.resources[{name, replicas}]`) as NVIDIA's k8s-device-plugin README
("Shared Access to GPUs") and the GPU Operator's "Time-Slicing GPUs in Kubernetes" page
describe it: one ConfigMap whose keys are configuration names; the GPU Operator's
ClusterPolicy names the ConfigMap (`devicePlugin.config.name`) and each node picks a key with
the label `nvidia.com/device-plugin.config=<key>`. MIG layouts are chosen with the MIG
manager's label `nvidia.com/mig.config=<layout>`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import yaml

from gryvia_operator.api.gpusharing import GryviaGPUSharingPolicy
from gryvia_operator.api.names import GPU_RESOURCE, LABEL_GPU_SHARING
from gryvia_operator.api.timeslicing import LABEL_REPLICAS
from gryvia_operator.reconcile.checkpoint import selector_matches

LABEL_PLUGIN_CONFIG = "nvidia.com/device-plugin.config"
LABEL_MIG_CONFIG = "nvidia.com/mig.config"
LABEL_SHARING_STRATEGY = "nvidia.com/gpu.sharing-strategy"
LABEL_GPU_COUNT = "nvidia.com/gpu.count"
LABEL_GPU_PRESENT = "nvidia.com/gpu.present"
OWNED_LABELS = (
    LABEL_GPU_SHARING,
    LABEL_PLUGIN_CONFIG,
    LABEL_MIG_CONFIG,
    LABEL_REPLICAS,
    LABEL_SHARING_STRATEGY,
)
"""Labels a policy puts on a node (the last two only in the sandbox's simulation)."""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _labels(node: Mapping[str, Any]) -> dict[str, str]:
    return dict(_meta(node).get("labels") or {})


def physical_gpus(node: Mapping[str, Any]) -> int:
    """Physical GPUs of a node: GPU feature discovery's `nvidia.com/gpu.count`, 0 if unset."""
    value = _labels(node).get(LABEL_GPU_COUNT, "")
    return int(value) if value.isdigit() else 0


def is_gpu_node(node: Mapping[str, Any]) -> bool:
    """A node with GPUs (GFD's gpu.present or a positive gpu.count)."""
    return _labels(node).get(LABEL_GPU_PRESENT) == "true" or physical_gpus(node) > 0


def config_key(policy: GryviaGPUSharingPolicy) -> str:
    """The configuration's key in the ConfigMap: `gryvia-ts-<replicas>` (time-slicing) or
    `gryvia-mig-<single|mixed>` (MIG); equal policies share a key."""
    spec = policy.spec
    if spec.strategy == "time-slicing" and spec.time_slicing is not None:
        return f"gryvia-ts-{spec.time_slicing.replicas}"
    return f"gryvia-mig-{spec.mig.strategy if spec.mig else 'mixed'}"


def plugin_config(policy: GryviaGPUSharingPolicy) -> dict[str, Any]:
    """The device plugin configuration of a policy (the file under its ConfigMap key)."""
    spec = policy.spec
    if spec.strategy == "time-slicing" and spec.time_slicing is not None:
        ts = spec.time_slicing
        return {
            "version": "v1",
            "flags": {"migStrategy": "none"},
            "sharing": {
                "timeSlicing": {
                    "renameByDefault": ts.rename_by_default,
                    "failRequestsGreaterThanOne": ts.fail_requests_greater_than_one,
                    "resources": [{"name": GPU_RESOURCE, "replicas": ts.replicas}],
                }
            },
        }
    return {"version": "v1", "flags": {"migStrategy": spec.mig.strategy if spec.mig else "mixed"}}


def build_configmap(
    policies: Iterable[GryviaGPUSharingPolicy], name: str, namespace: str
) -> dict[str, Any]:
    """The device plugin ConfigMap: one key per distinct configuration, YAML values."""
    data = {
        config_key(p): yaml.safe_dump(plugin_config(p), sort_keys=False)
        for p in sorted(policies, key=lambda p: p.name)
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {LABEL_GPU_SHARING: "config"}},
        "data": dict(sorted(data.items())),
    }


def assign(
    policies: Sequence[GryviaGPUSharingPolicy], nodes: Iterable[Mapping[str, Any]]
) -> dict[str, GryviaGPUSharingPolicy]:
    """Node name -> the policy covering it: the first by name whose selector matches a GPU
    node (a node is never shared two ways)."""
    ordered = sorted(policies, key=lambda p: p.name)
    out: dict[str, GryviaGPUSharingPolicy] = {}
    for node in nodes:
        if not is_gpu_node(node):
            continue
        labels = _labels(node)
        chosen = next((p for p in ordered if selector_matches(p.spec.node_selector, labels)), None)
        if chosen is not None:
            out[str(_meta(node).get("name", ""))] = chosen
    return out


def desired_labels(
    policy: GryviaGPUSharingPolicy | None, *, simulate: bool
) -> dict[str, str | None]:
    """The owned labels a node should carry under `policy` (None values: remove)."""
    out: dict[str, str | None] = dict.fromkeys(OWNED_LABELS)
    if policy is None:
        return out
    out[LABEL_GPU_SHARING] = policy.name
    out[LABEL_PLUGIN_CONFIG] = config_key(policy)
    spec = policy.spec
    if spec.strategy == "mig":
        out[LABEL_MIG_CONFIG] = spec.mig.config if spec.mig else "all-1g.10gb"
    elif simulate and spec.time_slicing is not None:  # what GFD writes once the plugin runs
        out[LABEL_REPLICAS] = str(spec.time_slicing.replicas)
        out[LABEL_SHARING_STRATEGY] = "time-slicing"
    return out


def label_patch(
    node: Mapping[str, Any], policy: GryviaGPUSharingPolicy | None, *, simulate: bool
) -> dict[str, str | None] | None:
    """The merge patch of the node's labels, or None when they already match. A node no
    policy covers and that no policy ever labelled is left alone."""
    current = _labels(node)
    if policy is None and LABEL_GPU_SHARING not in current:
        return None
    wanted = desired_labels(policy, simulate=simulate)
    patch = {k: v for k, v in wanted.items() if current.get(k) != v}
    return patch or None


def advertised_gpus(node: Mapping[str, Any], policy: GryviaGPUSharingPolicy | None) -> int:
    """`nvidia.com/gpu` a device plugin would advertise: physical x replicas when
    time-sliced, physical otherwise."""
    physical = physical_gpus(node)
    if policy is not None and policy.spec.time_slicing and policy.spec.strategy == "time-slicing":
        return physical * policy.spec.time_slicing.replicas
    return physical


def simulated_status_patch(
    node: Mapping[str, Any], policy: GryviaGPUSharingPolicy | None
) -> dict[str, Any] | None:
    """The sandbox's stand-in for the device plugin: the node status patch that advertises
    `advertised_gpus`, or None when capacity and allocatable already say so (MIG nodes and
    nodes without a GPU count are left alone)."""
    if physical_gpus(node) == 0 or (policy is not None and policy.spec.strategy == "mig"):
        return None
    want = str(advertised_gpus(node, policy))
    status = node.get("status") or {}
    have = [(status.get(k) or {}).get(GPU_RESOURCE) for k in ("capacity", "allocatable")]
    if have == [want, want]:
        return None
    return {"status": {"capacity": {GPU_RESOURCE: want}, "allocatable": {GPU_RESOURCE: want}}}


def policy_status(
    policy: GryviaGPUSharingPolicy, nodes: Sequence[str], error: str | None, now: datetime
) -> dict[str, Any]:
    """A policy's status: Ready (Applied, or ConfigMapFailed with the error), key, nodes."""
    stamp = now.isoformat().replace("+00:00", "Z")
    ok = error is None
    message = f"{len(nodes)} node(s) use {config_key(policy)}" if ok else str(error)
    return {
        "conditions": [
            {
                "type": "Ready",
                "status": "True" if ok else "False",
                "reason": "Applied" if ok else "ConfigMapFailed",
                "message": message,
                "lastTransitionTime": stamp,
            }
        ],
        "configName": config_key(policy),
        "nodes": sorted(nodes),
    }
