"""GryviaGPUSharingPolicy on the kind controller (`--enable-gpu-sharing`): a pass writes the
NVIDIA device plugin ConfigMap (one for every policy, `before_pass`), then each policy labels
the GPU nodes it covers and unlabels those it no longer does
(`reconcile.gpusharing.reconcile_policy`) and gets its status; after the pass, nodes labelled
for a policy that is gone lose their labels, and the sandbox's simulated device plugin
advertises each node's GPUs (`reconcile.gpusharing.sweep`). Policies and nodes are read from
kopf indexes (a node kept as its name, labels and GPU capacity), never LISTed; a pass runs
when a policy changes, else every PASS_SECONDS (node label changes are seen by then).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import kopf

from gryvia_operator.api.gpusharing import GPU_SHARING_KIND, GryviaGPUSharingPolicy
from gryvia_operator.api.names import GPU_RESOURCE, LABEL_GPU_SHARING
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import SHARING_NODES, SHARING_POLICIES
from gryvia_operator.reconcile.gpusharing import (
    SharingObserved,
    build_configmap,
    reconcile_policy,
    sweep,
)

log = logging.getLogger("gryvia.operator.gpusharing")
PASS_SECONDS = 10.0
"""Pass interval without policy events (node label changes are seen by then)."""


def live_policies(rt: Runtime) -> list[GryviaGPUSharingPolicy]:
    """The valid policies of the index that are not being deleted."""
    bodies = rt.indices.all_values(SHARING_POLICIES)
    live = [b for b in bodies if not (b.get("metadata") or {}).get("deletionTimestamp")]
    return parse_valid(GryviaGPUSharingPolicy, live)


class SharingSpec(KindSpec[GryviaGPUSharingPolicy, SharingObserved]):
    """A policy observes every policy and the GPU nodes; the ConfigMap they share is written
    once per pass, before them (its error goes into every policy's status)."""

    info = GPU_SHARING_KIND
    controller = "gpusharing"
    index_id = SHARING_POLICIES
    children = ()
    idle_seconds = PASS_SECONDS

    def __init__(self) -> None:
        self.config_data: dict[str, str] | None = None
        """The ConfigMap's data as last written (None: not written by this process)."""
        self.error: str | None = None
        """Why this pass could not write the ConfigMap (None: written or unchanged)."""

    def seen(self, rt: Runtime) -> SharingObserved:
        """The policies, the nodes and this pass's ConfigMap error."""
        return SharingObserved(
            tuple(live_policies(rt)),
            tuple(rt.indices.all_values(SHARING_NODES)),
            self.error,
            rt.config.simulate_device_plugin,
        )

    async def before_pass(self, rt: Runtime) -> None:
        """Write the ConfigMap (once a policy exists, or to empty one this process wrote)."""
        policies = live_policies(rt)
        self.error = (
            await self._write_config(rt, policies) if policies or self.config_data else None
        )

    async def _write_config(
        self, rt: Runtime, policies: list[GryviaGPUSharingPolicy]
    ) -> str | None:
        """Create or update the ConfigMap; the error text (naming the fix) when it failed."""
        ns, name = rt.config.device_plugin_config
        body = build_configmap(policies, name, ns)
        if body["data"] == self.config_data:
            return None
        try:
            try:
                await rt.api.create(body)
            except AlreadyExists:
                current = await rt.api.get("ConfigMap", name, ns)
                stale = {k: None for k in current.get("data") or {} if k not in body["data"]}
                await rt.api.patch("ConfigMap", name, {"data": body["data"] | stale}, ns)
        except NotFound:
            return (
                f"namespace {ns} not found: install the GPU Operator there or set "
                "--device-plugin-config-namespace (chart gpuOperator.devicePluginConfig.namespace)"
            )
        except KubeError as exc:
            return f"could not write ConfigMap {ns}/{name}: {exc}"
        self.config_data = body["data"]
        return None

    async def observe(self, rt: Runtime, obj: GryviaGPUSharingPolicy) -> SharingObserved:
        """Every policy, the nodes and this pass's ConfigMap error."""
        return self.seen(rt)

    def reconcile(
        self, obj: GryviaGPUSharingPolicy, observed: SharingObserved, now: datetime
    ) -> Outcome:
        """Node label patches (cluster-scoped Nodes it does not own) and its status."""
        plan = reconcile_policy(obj, observed, now)
        return Outcome(
            status=plan.status,
            patch_in=[
                ("Node", "", name, {"metadata": {"labels": patch}})
                for name, patch in plan.label_patches
            ],
        )

    async def after(self, rt: Runtime, obj: GryviaGPUSharingPolicy, outcome: Outcome) -> None:
        """Log the nodes it labelled or unlabelled."""
        for _, _, name, patch in outcome.patch_in:
            added = patch["metadata"]["labels"].get(LABEL_GPU_SHARING)
            log.info("node %s: GPU sharing %s", name, added or "removed")

    async def after_pass(self, rt: Runtime) -> None:
        """Unlabel the nodes of policies that are gone; the simulated device plugin."""
        labels, statuses = sweep(self.seen(rt))
        for name, patch in labels:
            await rt.api.patch("Node", name, {"metadata": {"labels": patch}})
            log.info("node %s: GPU sharing removed", name)
        for name, status in statuses:
            await rt.api.patch("Node", name, status, subresource="status")

    def watch(self, registry: kopf.OperatorRegistry, rt: Runtime, kick: asyncio.Event) -> None:
        """The slim node index (node events do not wake the loop)."""

        @kopf.index("v1", "nodes", id=SHARING_NODES, registry=registry)
        async def node_index(body: kopf.Body, name: str, **_: Any) -> Any:
            """Keep each node's name, labels and GPU capacity."""
            return {name: slim_node(body)}


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


def controller(rt: Runtime) -> KindController[GryviaGPUSharingPolicy, SharingObserved]:
    """The GPU sharing policy controller over `rt`."""
    return KindController(rt, SharingSpec())
