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
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import yaml

from gryvia_operator.api.core import selector_matches
from gryvia_operator.api.gpusharing import GryviaGPUSharingPolicy
from gryvia_operator.api.names import GPU_RESOURCE, LABEL_GPU_SHARING
from gryvia_operator.api.timeslicing import LABEL_REPLICAS

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


def _stamp(now: datetime) -> str:
    return now.isoformat().replace("+00:00", "Z")


def policy_status(
    policy: GryviaGPUSharingPolicy, nodes: Sequence[str], error: str | None, now: datetime
) -> dict[str, Any]:
    """A policy's status: Ready (Applied, or ConfigMapFailed with the error), key, nodes."""
    stamp = _stamp(now)
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


@dataclass(frozen=True)
class SharingObserved:
    """What one policy's reconcile reads: the valid policies not being deleted, the nodes as
    the sharing node index holds them (`handlers.gpusharing.slim_node`), the error of this
    pass's ConfigMap write (None: written, or unchanged), and whether the sandbox simulates
    the device plugin."""

    policies: tuple[GryviaGPUSharingPolicy, ...]
    nodes: tuple[Mapping[str, Any], ...]
    error: str | None = None
    simulate: bool = False


@dataclass(frozen=True)
class PolicyPlan:
    """What one policy's reconcile writes: node label merge patches and its status."""

    status: dict[str, Any]
    label_patches: list[tuple[str, dict[str, str | None]]]


def covering(
    policies: Sequence[GryviaGPUSharingPolicy],
    nodes: Iterable[Mapping[str, Any]],
    error: str | None,
) -> dict[str, GryviaGPUSharingPolicy]:
    """`assign`, or no node at all while the ConfigMap could not be written (every node
    loses its sharing labels: the configuration they name may be missing)."""
    return assign(policies, nodes) if error is None else {}


def settled_status(policy: GryviaGPUSharingPolicy, fresh: dict[str, Any]) -> dict[str, Any]:
    """`fresh`, with the time the policy's status already carries when it says the same
    (key, nodes, message): the status is written only when one of those changes."""
    had = policy.status
    if had is None or had.phase is not None or not had.conditions:
        return fresh
    ready = had.conditions[0]
    now = fresh["conditions"][0]
    same = (had.config_name, list(had.nodes or []), ready.message) == (
        fresh["configName"],
        fresh["nodes"],
        now["message"],
    )
    if not same or ready.last_transition_time is None:
        return fresh
    return {
        **fresh,
        "conditions": [{**now, "lastTransitionTime": _stamp(ready.last_transition_time)}],
    }


def _node_name(node: Mapping[str, Any]) -> str:
    return str(_meta(node).get("name", ""))


def reconcile_policy(
    policy: GryviaGPUSharingPolicy, observed: SharingObserved, now: datetime
) -> PolicyPlan:
    """One policy's pass: label the GPU nodes it covers (the first policy by name whose
    selector matches), unlabel those labelled for it that no policy covers any more, and its
    status. `policy` stands for its own entry among the observed policies."""
    others = [p for p in observed.policies if p.name != policy.name]
    chosen = covering([*others, policy], observed.nodes, observed.error)
    mine: list[str] = []
    patches: list[tuple[str, dict[str, str | None]]] = []
    for node in observed.nodes:
        name = _node_name(node)
        owner = chosen.get(name)
        if owner is not None and owner.name == policy.name:
            mine.append(name)
        elif owner is not None or _labels(node).get(LABEL_GPU_SHARING) != policy.name:
            continue
        patch = label_patch(node, owner, simulate=observed.simulate)
        if patch is not None:
            patches.append((name, patch))
    fresh = policy_status(policy, mine, observed.error, now)
    return PolicyPlan(settled_status(policy, fresh), patches)


def sweep(
    observed: SharingObserved,
) -> tuple[list[tuple[str, dict[str, str | None]]], list[tuple[str, dict[str, Any]]]]:
    """After the policies' passes: the label patches of nodes labelled for a policy that is
    gone (or invalid) and no policy covers, and (simulating the device plugin) the node
    status patches that advertise what each node's policy, or none, makes of its GPUs."""
    chosen = covering(observed.policies, observed.nodes, observed.error)
    names = {p.name for p in observed.policies}
    labels: list[tuple[str, dict[str, str | None]]] = []
    statuses: list[tuple[str, dict[str, Any]]] = []
    for node in observed.nodes:
        name, owner = _node_name(node), chosen.get(_node_name(node))
        had = _labels(node).get(LABEL_GPU_SHARING)
        if owner is None and had is not None and had not in names:
            patch = label_patch(node, None, simulate=observed.simulate)
            if patch is not None:
                labels.append((name, patch))
        ours = owner is not None or had is not None
        status = simulated_status_patch(node, owner) if observed.simulate and ours else None
        if status is not None:
            statuses.append((name, status))
    return labels, statuses
