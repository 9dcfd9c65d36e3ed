"""The kopf side of the operator: kopf's settings, and one registry holding every handler of
this package plus the login, startup and cleanup handlers that start the controller's workers.

`WIRING` hands them to `gryvia_operator.controller.operator.run`. `CONTROLLERS` and
`DATA_ONLY` say, for every Gryvia kind, which handler module watches it (and which kind
controller runs it, under which flag) or why none does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import kopf

from gryvia_operator.api import resources as api
from gryvia_operator.api.names import FINALIZER, GROUP
from gryvia_operator.controller import policies
from gryvia_operator.controller.kindcontroller import KindController
from gryvia_operator.controller.kubeapi import bearer_token
from gryvia_operator.controller.operator import Wiring
from gryvia_operator.controller.runtime import JobKey, Runtime
from gryvia_operator.handlers import (
    accounting,
    aijob,
    arrays,
    autotuner,
    budget,
    chargeback,
    checkpointguard,
    children,
    dataset,
    gate,
    gpumetrics,
    gpunode,
    gpusharing,
    idlepolicy,
    inference,
    jobhook,
    jobhook_events,
    jobrecords,
    kueue,
    ledger,
    modelregistry,
    node,
    pod,
    policy,
    priority,
    reservation,
    savedlogs,
    scheduler_preemption,
    storage,
    stripe_billing,
    tenant,
    workflow,
    workspace,
)


@dataclass(frozen=True)
class ControllerRow:
    """A Gryvia kind's row: the handler module that watches it; for a kind on the kind
    controller, its factory and the `ReconcileConfig` flag that turns it on (None: always)."""

    module: ModuleType
    controller: Callable[[Runtime], KindController[Any, Any]] | None = None
    flag: str | None = None


CONTROLLERS: Mapping[api.Resource, ControllerRow] = {
    api.AIJOB: ControllerRow(aijob),
    api.GPUNODE: ControllerRow(gpunode),
    api.GPUSKU: ControllerRow(policy),
    api.TENANT: ControllerRow(tenant),
    api.QUOTA: ControllerRow(policy),
    api.USAGE_RECORD: ControllerRow(policy),
    api.RESERVATION: ControllerRow(reservation, reservation.controller, "reservations"),
    api.BUDGET: ControllerRow(budget, budget.controller),
    api.JOBHOOK: ControllerRow(jobhook_events),
    api.PRIORITY: ControllerRow(priority),
    api.CHECKPOINT_GUARD: ControllerRow(
        checkpointguard, checkpointguard.controller, "checkpoint_guards"
    ),
    api.GPU_SHARING_POLICY: ControllerRow(gpusharing, gpusharing.controller, "gpu_sharing"),
    api.WORKFLOW: ControllerRow(workflow, workflow.controller, "workflows"),
    api.AUTOTUNER: ControllerRow(autotuner, autotuner.controller, "autotuners"),
    api.WORKSPACE: ControllerRow(workspace, workspace.controller),
    api.INFERENCE_SERVICE: ControllerRow(inference, inference.controller, "inference"),
    api.MODEL_REGISTRY: ControllerRow(modelregistry, modelregistry.controller, "model_registry"),
    api.IDLE_POLICY: ControllerRow(idlepolicy, idlepolicy.controller),
    api.CHARGEBACK: ControllerRow(chargeback, chargeback.controller),
    api.INVOICE: ControllerRow(stripe_billing),
    api.STORAGE: ControllerRow(storage, storage.controller),
    api.DATASET: ControllerRow(dataset, dataset.controller),
}
"""One row per Gryvia kind (SKUs, quotas and usage records are indexes of the policy module,
read by the scheduler, the gate and metering). The rows with a controller run on the kind
controller; the other modules register their own handlers, the optional ones only when their
feature is on."""

DATA_ONLY: Mapping[api.Resource, str] = {
    api.LEDGER_ENTRY: "written once per sealed usage record by the ledger writer; only the "
    "admission webhook sees it again (never changed nor deleted)",
    api.JOB_RECORD: "written once per ended job by handlers.jobrecords (from the GryviaAIJob "
    "events) and read back only by its roll-up pass, a paged LIST: a high-cardinality kind "
    "kept out of kopf's start-up indexing",
}
"""Gryvia kinds no handler watches, and why."""


def configure_kopf(settings: kopf.OperatorSettings, peering: str | None) -> None:
    """kopf settings tuned for many small objects and event-driven reconciles.

    Jobs, their children, pods and nodes use only index and event handlers, so kopf stores no
    handler progress or diff-base on them (no extra patches per event); only GryviaTenants (few,
    rarely changed) have change handlers, with a finalizer. The storages are set to annotations
    under gryvia.io so nothing lands in a CRD's pruned status. Jobs, children, pods and usage
    records are read by list-and-watch (`Runtime.start_informers`, here at startup, before
    kopf watches).
    Events are posted in the background by kopf's poster.
    """
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=GROUP)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix=GROUP, key="last-handled-configuration"
    )
    settings.persistence.finalizer = FINALIZER
    settings.posting.reporting_component = "gryvia-operator"
    settings.posting.event_name_prefix = "gryvia-"
    settings.posting.level = logging.INFO
    settings.posting.loggers = False
    settings.queueing.idle_timeout = 10.0
    settings.watching.reconnect_backoff = 0.5
    settings.watching.connect_timeout = 10.0
    settings.watching.chunk_size = 500
    settings.networking.request_timeout = 30.0
    settings.networking.connect_timeout = 10.0
    settings.admission.server = None
    settings.peering.standalone = peering is None
    if peering is not None:
        settings.peering.name = peering
        settings.peering.mandatory = True


def build_registry(rt: Runtime, configuration: Any, peering: str | None) -> kopf.OperatorRegistry:
    """A kopf registry with every handler of this operator; `configuration` is the official
    client's Configuration that kopf logs in with."""
    registry = kopf.OperatorRegistry()
    for module in (aijob, children, node, gpunode, policy, tenant, arrays, gate, priority):
        module.register(registry, rt)
    pods = pod.register(rt, savedlogs.LogSaver(rt), scheduler_preemption.SchedulerPreemptions(rt))
    kueue.register(registry, rt)
    acc = accounting.Accounting(rt)
    accounting.register(registry, rt, acc)
    recorder = jobrecords.JobRecorder(rt)
    jobrecords.register(rt.job_informer(), recorder)
    writer = ledger.LedgerWriter(rt) if rt.config.billing_ledger else None
    if writer is not None:
        ledger.register(registry, rt, writer)
    pusher = stripe_billing.StripePusher(rt) if rt.config.stripe else None
    if pusher is not None:  # written by `gryvia invoice finalize`; pushed to Stripe (--stripe)
        stripe_billing.register(registry, rt, pusher)
    hooks = jobhook.build(rt)
    if hooks is not None:
        jobhook_events.register(registry, rt, hooks)
    kinds = [
        row.controller(rt)
        for row in CONTROLLERS.values()
        if row.controller is not None and (row.flag is None or getattr(rt.config, row.flag))
    ]
    for kind in kinds:
        kind.register(registry)
    sampler = gpumetrics.GpuSampler(rt) if rt.config.gpu_metrics else None
    if sampler is not None:
        gpumetrics.register(rt)

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        scheme, token = bearer_token(configuration)
        return kopf.ConnectionInfo(
            server=configuration.host,
            ca_path=configuration.ssl_ca_cert,
            insecure=not configuration.verify_ssl,
            scheme=scheme,
            token=token,
            certificate_path=configuration.cert_file,
            private_key_path=configuration.key_file,
        )

    async def reconcile_job(key: JobKey) -> None:
        await aijob.reconcile_key(rt, key)

    async def reconcile_node(name: str) -> None:
        await node.reconcile_node(rt, name)

    def start_workers() -> None:
        pods.flush()
        rt.spawn(rt.jobs.run_workers(rt.job_workers, reconcile_job), "aijob-workers")
        rt.spawn(rt.nodes.run_workers(rt.node_workers, reconcile_node), "node-workers")
        rt.spawn(arrays.release_all(rt), "arrays")
        rt.spawn(acc.quota_loop(), "quota")
        rt.spawn(acc.metering_loop(), "metering")
        rt.spawn(recorder.loop(), "jobrecords")
        if writer is not None:
            rt.spawn(writer.loop(), "writer")
        if pusher is not None:
            rt.spawn(pusher.loop(), "stripe")
        if hooks is not None:
            rt.spawn(hooks.loop(), "hooks")
        for kind in kinds:
            rt.spawn(kind.loop(), kind.spec.controller)
        if sampler is not None:
            rt.spawn(sampler.loop(), "gpumetrics")

    rt.on_synced = start_workers

    @kopf.on.startup(registry=registry)
    async def startup(settings: kopf.OperatorSettings, **kwargs: Any) -> None:
        configure_kopf(settings, peering)
        rt.indices.attach(kwargs)
        await rt.start_informers()  # before kopf watches: no handler sees a partial index

    @kopf.on.cleanup(registry=registry)
    async def cleanup(**_: Any) -> None:
        for task in rt.tasks:
            task.cancel()

    return registry


WIRING = Wiring(
    configure_kopf=configure_kopf,
    build_registry=build_registry,
    policy_context=policies.policy_context,
)
"""The operator's kopf side, for `controller.operator.run`."""
