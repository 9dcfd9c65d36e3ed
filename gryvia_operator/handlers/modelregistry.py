"""GryviaModelRegistry on the kind controller (`--enable-model-registry`): passes at once when a
registry or an inference service changes, else every PASS_SECONDS. A registry observes its
autoServe service in the index of inference services; `reconcile.modelregistry.plan_service`
says what to write so it serves the Production version (create it, or merge-patch it), and
`build_status` the registry's status. Serving itself (Deployments, rollout, servingVersion)
is the inference controller's (`--enable-inference`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gryvia_operator.api.inference import INFERENCE_SERVICE_KIND
from gryvia_operator.api.modelregistry import MODEL_REGISTRY_KIND, GryviaModelRegistry
from gryvia_operator.api.names import GROUP, VERSION
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.passes import ChildSource
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import MODEL_REGISTRIES, MODEL_SERVICES
from gryvia_operator.reconcile.modelregistry import build_status, plan_service, service_name

PASS_SECONDS = 5.0
"""Longest wait between two passes (a service made by hand carries no registry label, so its
servingVersion is seen at the next pass)."""

Observed = dict[str, Any] | None
"""The autoServe service as stored (None: absent, or no autoServe)."""


class RegistrySpec(KindSpec[GryviaModelRegistry, Observed]):
    """A registry observes its autoServe service; its reconcile is `plan_service` and
    `build_status`."""

    info = MODEL_REGISTRY_KIND
    controller = "modelregistry"
    index_id = MODEL_REGISTRIES
    children = (
        ChildSource(
            GROUP,
            VERSION,
            INFERENCE_SERVICE_KIND.plural,
            None,
            index_id=MODEL_SERVICES,
            name="service",
        ),
    )
    idle_seconds = PASS_SECONDS

    async def observe(self, rt: Runtime, obj: GryviaModelRegistry) -> Observed:
        """The autoServe service, if it exists."""
        if obj.spec.auto_serve is None:
            return None
        found = rt.indices.first(MODEL_SERVICES, (obj.namespace, service_name(obj)))
        return dict(found) if found is not None else None

    def reconcile(self, obj: GryviaModelRegistry, observed: Observed, now: datetime) -> Outcome:
        """Create or patch the service; the status from the service as observed (a write
        changes its spec only, and its status is what the status reads)."""
        plan = plan_service(obj, observed)
        outcome = Outcome(status=build_status(obj, observed, plan))
        if plan.create is not None:
            outcome.create.append(plan.create)
        elif plan.patch is not None:
            outcome.patch.append((INFERENCE_SERVICE_KIND.kind, service_name(obj), plan.patch))
        return outcome


def controller(rt: Runtime) -> KindController[GryviaModelRegistry, Observed]:
    """The model registry controller over `rt`."""
    return KindController(rt, RegistrySpec())
