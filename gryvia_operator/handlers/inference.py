"""GryviaInferenceService on the kind controller (`--enable-inference`): passes at once when a
service or one of its Deployments or HPA changes, else every PASS_SECONDS. A service observes
its Deployments and HPA (label gryvia.io/inference-service) in their indexes and its Service
with one GET (the operator watches Services only with the server-side selector gryvia.io/job,
for job children: kopf ANDs selectors, so a second label cannot be watched);
`reconcile.inference.plan_writes` says which to create, merge-patch (spec hash differs) or
delete (a canary or HPA no longer wanted), and `build_status` the status from the
Deployments. Children are owned by their service (deleting it deletes them).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from gryvia_operator.api.inference import (
    INFERENCE_SERVICE_KIND,
    LABEL_SERVICE,
    GryviaInferenceService,
    canary_name,
    stable_name,
)
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.kubeapi import NotFound
from gryvia_operator.controller.passes import ChildSource
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import (
    INFERENCE_DEPLOYMENTS,
    INFERENCE_HPAS,
    INFERENCE_SERVICES,
)
from gryvia_operator.reconcile.inference import ChildKey, build_status, plan_writes

PASS_SECONDS = 30.0
"""Longest wait between two passes (every change of a child wakes one sooner)."""

Observed = Mapping[ChildKey, Mapping[str, Any]]
"""The service's children as the indexes hold them, by (kind, name)."""

CHILD_INDEXES = (
    ("Deployment", INFERENCE_DEPLOYMENTS),
    ("HorizontalPodAutoscaler", INFERENCE_HPAS),
)


class InferenceSpec(KindSpec[GryviaInferenceService, Observed]):
    """A service observes its Deployments, HPA and Service; its reconcile is `plan_writes`
    and `build_status`."""

    info = INFERENCE_SERVICE_KIND
    controller = "inference"
    index_id = INFERENCE_SERVICES
    children = (
        ChildSource("apps", "v1", "deployments", LABEL_SERVICE, INFERENCE_DEPLOYMENTS, "dep"),
        ChildSource(
            "autoscaling", "v2", "horizontalpodautoscalers", LABEL_SERVICE, INFERENCE_HPAS, "hpa"
        ),
    )
    idle_seconds = PASS_SECONDS

    async def observe(self, rt: Runtime, obj: GryviaInferenceService) -> Observed:
        """The children labelled with the service's name, by (kind, name)."""
        out: dict[ChildKey, Mapping[str, Any]] = {}
        for kind, index_id in CHILD_INDEXES:
            for body in rt.indices.values(index_id, (obj.namespace, obj.name)):
                out[(kind, str((body.get("metadata") or {}).get("name")))] = body
        with contextlib.suppress(NotFound):
            name = stable_name(obj.name)
            out[("Service", name)] = await rt.api.get("Service", name, obj.namespace)
        return out

    def reconcile(self, obj: GryviaInferenceService, observed: Observed, now: datetime) -> Outcome:
        """Create, patch and delete children; the status from the Deployments as observed."""
        writes = plan_writes(obj, observed)
        previous = {"servingVersion": obj.status.serving_version} if obj.status else {}
        stable = observed.get(("Deployment", stable_name(obj.name)))
        canary = observed.get(("Deployment", canary_name(obj.name)))
        return Outcome(
            status=build_status(obj, stable, canary, previous),
            create=writes.create,
            patch=writes.patch,
            delete=writes.delete,
        )


def controller(rt: Runtime) -> KindController[GryviaInferenceService, Observed]:
    """The inference service controller over `rt`."""
    return KindController(rt, InferenceSpec())
