"""GryviaModelRegistry controller (`--enable-model-registry`): one loop over every registry,
at once when a registry or an inference service it created changes, else every PASS_SECONDS.
Each pass reads a registry's autoServe service, asks `reconcile.modelregistry.plan_service`
what to write so it serves the Production version, creates or merge-patches it, and writes
the registry's status (`build_status`). Serving itself (Deployments, rollout, servingVersion)
is the inference controller's (`--enable-inference`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import kopf
from pydantic import ValidationError

from gryvia_operator.api import GROUP, VERSION
from gryvia_operator.api.controlled import invalid_status, spec_problems
from gryvia_operator.api.modelregistry import LABEL_REGISTRY, GryviaModelRegistry
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.handlers.passloop import StatusWriter, run_passes
from gryvia_operator.reconcile.modelregistry import (
    build_status,
    plan_service,
    service_name,
)

log = logging.getLogger("gryvia.operator.modelregistry")
PLURAL = "gryviamodelregistries"
KIND = "GryviaModelRegistry"
SERVICE_KIND = "GryviaInferenceService"
PASS_SECONDS = 5.0
"""Longest wait between two passes."""


class ModelRegistries:
    """The loop: kicked by watch events, else a pass every PASS_SECONDS."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.kick = asyncio.Event()
        self.status = StatusWriter(rt, KIND)

    async def loop(self) -> None:
        """Pass over every registry until cancelled."""
        await run_passes(self.rt, "modelregistry", self.kick, self.one_pass, PASS_SECONDS, log)

    async def one_pass(self) -> float:
        """Reconcile every registry not being deleted; returns the delay to the next pass."""
        live: set[tuple[str, str]] = set()
        for body in await self.rt.api.list(KIND):
            meta = body.get("metadata") or {}
            key = (str(meta.get("namespace") or ""), str(meta.get("name")))
            live.add(key)
            if meta.get("deletionTimestamp"):
                continue
            try:
                await self.one(key, body)
            except (KubeError, OSError) as exc:
                log.warning("model registry %s/%s: %s", key[0], key[1], exc)
        self.status.keep_only(live)
        return PASS_SECONDS

    async def one(self, key: tuple[str, str], body: dict[str, Any]) -> None:
        """Reconcile one registry: the autoServe service, then the status."""
        ns, _ = key
        stored = dict(body.get("status") or {})
        try:
            reg = GryviaModelRegistry.model_validate(body)
        except ValidationError as exc:
            await self.status.write(key, stored, invalid_status(stored, spec_problems(exc)))
            return
        service: dict[str, Any] | None = None
        if reg.spec.auto_serve is not None:
            with contextlib.suppress(NotFound):
                service = await self.rt.api.get(SERVICE_KIND, service_name(reg), ns)
        plan = plan_service(reg, service)
        if plan.create is not None:
            with contextlib.suppress(AlreadyExists):
                service = await self.rt.api.create(plan.create)
            self.rt.metrics.writes.labels(kind=SERVICE_KIND, verb="create").inc()
        elif plan.patch is not None:
            service = await self.rt.api.patch(SERVICE_KIND, service_name(reg), plan.patch, ns)
            self.rt.metrics.writes.labels(kind=SERVICE_KIND, verb="patch").inc()
        await self.status.write(key, stored, build_status(reg, service, plan))


def register(registry: kopf.OperatorRegistry, rt: Runtime, loop: ModelRegistries) -> None:
    """Wake the loop when a registry, or an inference service one created, changes."""

    @kopf.on.event(GROUP, VERSION, PLURAL, id="gryvia_modelregistry_events", registry=registry)
    async def registry_event(type: str, namespace: str | None, name: str, **_: Any) -> None:
        """A registry appeared, changed or went: pass now."""
        if type == "DELETED":
            loop.status.forget((namespace or "", name))
        loop.kick.set()

    @kopf.on.event(
        GROUP,
        VERSION,
        "gryviainferenceservices",
        id="gryvia_modelregistry_service_events",
        labels={LABEL_REGISTRY: kopf.PRESENT},
        registry=registry,
    )
    async def service_event(**_: Any) -> None:
        """A served version changed (servingVersion moved): pass now."""
        loop.kick.set()
