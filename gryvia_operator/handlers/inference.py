"""GryviaInferenceService controller (`--enable-inference`): one loop over every inference
service, at once when a service or one of its Deployments changes, else every PASS_SECONDS.
Each pass lists the services, asks `reconcile.inference.desired` for the children, creates
or merge-patches the Deployments, Service and HPA whose spec hash differs, deletes the canary
Deployment and HPA no longer wanted, and writes the status from the Deployments.

Children are owned by their service (deleting it deletes them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import kopf
from pydantic import ValidationError

from gryvia_operator.api import GROUP, VERSION
from gryvia_operator.api.controlled import invalid_status, spec_problems
from gryvia_operator.api.inference import (
    LABEL_SERVICE,
    GryviaInferenceService,
    canary_name,
    stable_name,
)
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.reconcile.inference import (
    build_status,
    desired,
    needs_write,
)

log = logging.getLogger("gryvia.operator.inference")
PLURAL = "gryviainferenceservices"
KIND = "GryviaInferenceService"
PASS_SECONDS = 5.0
"""Longest wait between two passes."""


async def _get(rt: Runtime, kind: str, name: str, ns: str) -> dict[str, Any] | None:
    try:
        return await rt.api.get(kind, name, ns)
    except NotFound:
        return None


class InferenceServices:
    """The loop: kicked by watch events, else a pass every PASS_SECONDS."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.kick = asyncio.Event()

    async def loop(self) -> None:
        """Pass over every inference service until cancelled."""
        while True:
            self.kick.clear()
            started = time.perf_counter()
            try:
                for body in await self.rt.api.list(KIND):
                    if not (body.get("metadata") or {}).get("deletionTimestamp"):
                        try:
                            await self.one(body)
                        except (KubeError, OSError) as exc:
                            meta = body.get("metadata") or {}
                            log.warning(
                                "inference %s/%s: %s", meta.get("namespace"), meta.get("name"), exc
                            )
            except (KubeError, OSError) as exc:
                log.warning("inference services: %s", exc)
            except Exception:  # a bug in one pass must not end the controller
                log.exception("inference pass failed; retrying in %.0f s", PASS_SECONDS)
            self.rt.metrics.latency.labels(controller="inference").observe(
                time.perf_counter() - started
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.kick.wait(), PASS_SECONDS)

    async def one(self, body: dict[str, Any]) -> None:
        """Reconcile one inference service: children, then status."""
        meta = body.get("metadata") or {}
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name"))
        stored = dict(body.get("status") or {})
        try:
            isvc = GryviaInferenceService.model_validate(body)
        except ValidationError as exc:
            await self.write(ns, name, stored, invalid_status(stored, spec_problems(exc)))
            return
        kids = desired(isvc)
        for want in kids.apply:
            kind, child = want["kind"], want["metadata"]["name"]
            have = await _get(self.rt, kind, child, ns)
            if not needs_write(have, want):
                continue
            if have is None:
                with contextlib.suppress(AlreadyExists):
                    await self.rt.api.create(want)
                self.rt.metrics.writes.labels(kind=kind, verb="create").inc()
            else:
                patch = {
                    "metadata": {k: want["metadata"][k] for k in ("labels", "annotations")},
                    "spec": want["spec"],
                }
                await self.rt.api.patch(kind, child, patch, ns)
                self.rt.metrics.writes.labels(kind=kind, verb="patch").inc()
        for kind, child in kids.delete:
            have = await _get(self.rt, kind, child, ns)
            owners = ((have or {}).get("metadata") or {}).get("ownerReferences") or []
            if have is not None and any(o.get("uid") == meta.get("uid") for o in owners):
                with contextlib.suppress(NotFound):
                    await self.rt.api.delete(kind, child, ns)
        stable = await _get(self.rt, "Deployment", stable_name(name), ns)
        canary = await _get(self.rt, "Deployment", canary_name(name), ns)
        await self.write(ns, name, stored, build_status(isvc, stable, canary, stored))

    async def write(
        self, ns: str, name: str, stored: dict[str, Any], status: dict[str, Any]
    ) -> None:
        """Merge-patch the status when it differs from the stored one (keys no longer set
        are removed)."""
        if {k: v for k, v in stored.items() if v is not None} == status:
            return
        patch = {k: None for k in stored if k not in status} | status
        await self.rt.api.patch(KIND, name, {"status": patch}, ns, subresource="status")
        self.rt.metrics.writes.labels(kind=KIND, verb="status").inc()


def register(registry: kopf.OperatorRegistry, rt: Runtime, loop: InferenceServices) -> None:
    """Wake the loop when an inference service or one of its Deployments changes."""

    @kopf.on.event(GROUP, VERSION, PLURAL, id="gryvia_inference_events", registry=registry)
    async def service_event(**_: Any) -> None:
        """A service appeared, changed or went: pass now."""
        loop.kick.set()

    @kopf.on.event(
        "apps",
        "v1",
        "deployments",
        id="gryvia_inference_deployment_events",
        labels={LABEL_SERVICE: kopf.PRESENT},
        registry=registry,
    )
    async def deployment_event(**_: Any) -> None:
        """A served Deployment changed (replicas became ready): pass now."""
        loop.kick.set()
