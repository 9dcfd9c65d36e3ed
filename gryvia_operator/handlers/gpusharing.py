"""GryviaGPUSharingPolicy handlers: one loop that writes the NVIDIA device plugin ConfigMap,
labels the GPU nodes each policy covers (and unlabels the ones it no longer does), simulates
the device plugin in the sandbox, and writes each policy's status. Policies and nodes are read
from kopf indexes (a node kept as its name, labels and GPU capacity), never LISTed; a pass
runs when a policy changes, else every PASS_SECONDS (node label changes are seen by then),
with the latency metric and back-off of every pass loop (`controller.passes.run_passes`).

Served only with `--enable-gpu-sharing`; the pure rules are `reconcile.gpusharing`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

import kopf
from pydantic import ValidationError

from gryvia_operator.api import GROUP, VERSION
from gryvia_operator.api.gpusharing import GryviaGPUSharingPolicy
from gryvia_operator.api.names import GPU_RESOURCE, LABEL_GPU_SHARING
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.passes import index_entry, run_passes
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import SHARING_NODES, SHARING_POLICIES
from gryvia_operator.reconcile.gpusharing import (
    assign,
    build_configmap,
    label_patch,
    policy_status,
    simulated_status_patch,
)

log = logging.getLogger("gryvia.operator.gpusharing")
PLURAL = "gryviagpusharingpolicies"
PASS_SECONDS = 10.0
"""Pass interval without policy or node events (node label changes are seen by then)."""


class GpuSharing:
    """The sharing loop: woken by policy and node label events, else every PASS_SECONDS."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.wake = asyncio.Event()
        self.sent: dict[str, Any] = {}
        self.config_data: dict[str, str] | None = None

    async def loop(self) -> None:
        """Run passes until cancelled."""
        await run_passes(self.rt, "gpusharing", self.wake, self.run_pass, PASS_SECONDS, log)

    def _policies(self) -> list[GryviaGPUSharingPolicy]:
        out = []
        for body in self.rt.indices.all_values(SHARING_POLICIES):
            if (body.get("metadata") or {}).get("deletionTimestamp"):
                continue
            with contextlib.suppress(ValidationError):
                out.append(GryviaGPUSharingPolicy.model_validate(body))
        return out

    async def _write_config(self, policies: list[GryviaGPUSharingPolicy]) -> str | None:
        """Create or update the ConfigMap; the error text (naming the fix) when it failed."""
        ns, name = self.rt.config.device_plugin_config
        body = build_configmap(policies, name, ns)
        if body["data"] == self.config_data:
            return None
        try:
            try:
                await self.rt.api.create(body)
            except AlreadyExists:
                current = await self.rt.api.get("ConfigMap", name, ns)
                stale = {k: None for k in current.get("data") or {} if k not in body["data"]}
                await self.rt.api.patch("ConfigMap", name, {"data": body["data"] | stale}, ns)
        except NotFound:
            return (
                f"namespace {ns} not found: install the GPU Operator there or set "
                "--device-plugin-config-namespace (chart gpuOperator.devicePluginConfig.namespace)"
            )
        except KubeError as exc:
            return f"could not write ConfigMap {ns}/{name}: {exc}"
        self.config_data = body["data"]
        return None

    async def run_pass(self) -> None:
        """One pass: ConfigMap, node labels (and simulated status), policy status."""
        policies = self._policies()
        error = await self._write_config(policies) if policies or self.config_data else None
        nodes = self.rt.indices.all_values(SHARING_NODES)
        chosen = assign(policies, nodes) if error is None else {}
        simulate = self.rt.config.simulate_device_plugin
        for node in nodes:
            name = node["metadata"]["name"]
            policy = chosen.get(name)
            patch = label_patch(node, policy, simulate=simulate)
            if patch is not None:
                await self.rt.api.patch("Node", name, {"metadata": {"labels": patch}})
                log.info("node %s: GPU sharing %s", name, policy.name if policy else "removed")
            ours = policy is not None or LABEL_GPU_SHARING in (node["metadata"].get("labels") or {})
            status = simulated_status_patch(node, policy) if simulate and ours else None
            if status is not None:
                await self.rt.api.patch("Node", name, status, subresource="status")
        for policy in policies:
            mine = [n for n, p in chosen.items() if p.name == policy.name]
            status = policy_status(policy, mine, error, self.rt.clock())
            compared = (status["configName"], status["nodes"], status["conditions"][0]["message"])
            if self.sent.get(policy.name) == compared:
                continue
            with contextlib.suppress(NotFound):
                await self.rt.api.patch(
                    "GryviaGPUSharingPolicy", policy.name, {"status": status}, subresource="status"
                )
                self.sent[policy.name] = compared


def slim_node(body: Mapping[str, Any]) -> dict[str, Any]:
    """What a pass reads of a Node: its name and labels, and its GPU capacity and
    allocatable (what the device plugin, or its simulation, advertises)."""
    meta, status = body.get("metadata") or {}, body.get("status") or {}
    return {
        "metadata": {"name": meta.get("name"), "labels": dict(meta.get("labels") or {})},
        "status": {
            k: {GPU_RESOURCE: (status.get(k) or {}).get(GPU_RESOURCE)}
            for k in ("capacity", "allocatable")
        },
    }


def register(registry: kopf.OperatorRegistry, rt: Runtime, sharing: GpuSharing) -> None:
    """Register the indexes of policies and nodes and the policy event handler (feature on
    only)."""

    @kopf.index(GROUP, VERSION, PLURAL, id=SHARING_POLICIES, registry=registry)
    async def policy_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each policy without managedFields."""
        return {name: index_entry(body)}

    @kopf.index("v1", "nodes", id=SHARING_NODES, registry=registry)
    async def node_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each node's name, labels and GPU capacity."""
        return {name: slim_node(body)}

    @kopf.on.event(GROUP, VERSION, PLURAL, id="gryvia_gpu_sharing_events", registry=registry)
    async def policy_event(type: str, body: kopf.Body, **_: Any) -> None:
        """A policy changed: run a pass now."""
        rt.mark_synced()
        sharing.sent.pop(str(body.get("metadata", {}).get("name", "")), None)
        sharing.wake.set()
