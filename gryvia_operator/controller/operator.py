"""Run the operator process until a signal stops kopf: API access, the shared runtime, the
health, readiness and metrics server, the webhook (and its self-registration), then kopf.

The kopf side (settings, registry, handlers) comes in as a `Wiring` from
`gryvia_operator.handlers.registry`, so this package never imports the handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kopf
from aiohttp import web

from gryvia_operator.api.crd.generate import build_crds
from gryvia_operator.controller import crdcheck, indexbarrier, kopftasks, permissions, standby
from gryvia_operator.controller.kubeapi import (
    AlreadyExists,
    KubeApi,
    KubeError,
    NotFound,
    load_configuration,
)
from gryvia_operator.controller.leader import LeaderElector, LeaseTimings, default_identity
from gryvia_operator.controller.loopwatch import LoopWatch
from gryvia_operator.controller.probes import serve_probes
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import NODES
from gryvia_operator.controller.stripeapi import StripeGateway
from gryvia_operator.controller.stripehook import stripe_routes
from gryvia_operator.controller.watchprobe import WatchHealth, probe_watches
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.kueue import KueueSettings
from gryvia_operator.reconcile.views import node_inventory
from gryvia_operator.settings import OperatorSettings
from gryvia_operator.webhook.configuration import (
    build_mutating_configuration,
    build_webhook_configuration,
    mutating_name,
)
from gryvia_operator.webhook.review import PolicyContext
from gryvia_operator.webhook.server import WebhookServer, from_cert_dir, self_signed

log = logging.getLogger("gryvia.operator")


@dataclass(frozen=True)
class Wiring:
    """What the kopf side provides to `run`.

    - `configure_kopf(settings, peering)`: tune kopf's settings (peering name or None);
    - `build_registry(runtime, client_configuration, peering)`: a registry with every handler;
    - `policy_context(runtime, namespace)`: the quota policy the webhook applies to a namespace.
    """

    configure_kopf: Callable[[kopf.OperatorSettings, str | None], None]
    build_registry: Callable[[Runtime, Any, str | None], kopf.OperatorRegistry]
    policy_context: Callable[[Runtime, str], PolicyContext]


async def self_register(api: KubeApi, body: dict[str, Any]) -> None:
    """Create the webhook configuration `body` (Validating or Mutating), or replace the one of
    an earlier run."""
    try:
        await api.create(body)
    except AlreadyExists:
        existing = await api.get(body["kind"], body["metadata"]["name"])
        body = {
            **body,
            "metadata": {
                **body["metadata"],
                "resourceVersion": existing["metadata"]["resourceVersion"],
            },
        }
        await api.replace(body)
    log.info("registered %s %s", body["kind"], body["metadata"]["name"])


async def _start_webhook(
    rt: Runtime, s: OperatorSettings, api: KubeApi, workdir: Path, wiring: Wiring
) -> WebhookServer:
    host = s.effective_webhook_host
    tls = from_cert_dir(s.webhook_cert_dir) if s.webhook_cert_dir else self_signed(workdir / "tls")

    def inventory() -> list[tuple[str, int]]:
        return node_inventory(rt.indices.all_values(NODES))

    def observe(path: str, allowed: bool, seconds: float) -> None:
        name = path.rsplit("-", 1)[-1] + ("-mutate" if path.startswith("/mutate") else "")
        rt.metrics.webhook.labels(webhook=name, allowed=str(allowed).lower()).inc()
        rt.metrics.webhook_latency.labels(webhook=name).observe(seconds)

    def quota_policy(namespace: str) -> PolicyContext:
        if not rt.synced.is_set():
            return PolicyContext(ready=False)
        return wiring.policy_context(rt, namespace)

    async def storage_class(name: str) -> str | None:
        try:
            found = await api.get("StorageClass", name)
        except NotFound:
            return None
        except (KubeError, OSError):  # unknown: fail open (the job gets the plain-class warning)
            return ""
        return str(found.get("provisioner") or "")

    server = WebhookServer(
        host, s.webhook_port, tls, inventory, observe, quota_policy, storage_class
    )
    port = await server.start()
    if s.webhook_self_register:
        url_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        body = build_webhook_configuration(
            f"https://{url_host}:{port}",
            tls.ca_pem,
            name=s.webhook_config_name,
            failure_policy=s.webhook_failure_policy,
        )
        await self_register(api, body)
        mutating = build_mutating_configuration(
            f"https://{url_host}:{port}",
            tls.ca_pem,
            name=mutating_name(s.webhook_config_name),
            failure_policy=s.webhook_failure_policy,
        )
        await self_register(api, mutating)
    return server


def _stripe_gateway(rt: Runtime, s: OperatorSettings) -> StripeGateway | None:
    """The Stripe seam of `--stripe` (None when off); its calls are counted in `rt.metrics`."""
    if not s.stripe or s.stripe_api_key is None or s.stripe_webhook_secret is None:
        return None

    def count(step: str, result: str) -> None:
        rt.metrics.stripe_requests.labels(step=step, result=result).inc()

    return StripeGateway(
        s.stripe_api_key.get_secret_value(),
        s.stripe_webhook_secret.get_secret_value(),
        api_base=s.stripe_api_base,
        days_until_due=s.stripe_days_until_due,
        count=count,
    )


def _elector(s: OperatorSettings, api: KubeApi) -> LeaderElector:
    """The Lease election of `--leader-election`: the Lease in the pod's namespace unless
    one is given, this replica named by its pod (or host and pid)."""
    namespace = s.leader_election_namespace or os.environ.get("POD_NAMESPACE") or "default"
    timings = LeaseTimings(s.lease_duration, s.renew_deadline, s.retry_period)
    return LeaderElector(api, s.leader_election_id, namespace, default_identity(), timings)


EXIT_MISSING_PERMISSIONS = 3
"""Exit status when the account lacks a permission (the log names each one)."""
EXIT_STALE_CRDS = 4
"""Exit status when a Gryvia CRD is missing or older than the operator (named in the log)."""


class RefusedToStartError(Exception):
    """The operator cannot run safely here; `lines` name each reason and its fix, `exit_code`
    is the process's exit status."""

    def __init__(self, lines: list[str], exit_code: int) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines
        self.exit_code = exit_code


async def run(s: OperatorSettings, wiring: Wiring) -> None:
    """Run the operator until SIGINT/SIGTERM.

    Raises RefusedToStartError before starting anything when the account lacks a permission
    the settings need (`permissions.required`) or a Gryvia CRD is missing or older than this
    operator (`crdcheck`)."""
    configuration = load_configuration(s.kubeconfig, s.context)
    api = KubeApi(configuration, workers=max(8, s.workers))
    denied = await permissions.missing(api, permissions.required(s), s.namespaces)
    if denied:
        api.close()
        raise RefusedToStartError(permissions.describe(denied), EXIT_MISSING_PERMISSIONS)
    stale = await crdcheck.stale_crds(api, build_crds())
    if stale:
        api.close()
        raise RefusedToStartError(stale, EXIT_STALE_CRDS)
    rt = Runtime(
        api=api,
        config=ReconcileConfig(
            cluster_domain=s.cluster_domain,
            admission_gate=s.admission_gate,
            admission_fail_open=s.admission_fail_open,
            admission_default_hours=s.admission_default_hours,
            billing_ledger=s.billing_ledger,
            job_record_retention_days=s.job_record_retention_days,
            job_record_rollup_seconds=s.job_record_rollup_seconds,
            stripe=s.stripe,
            job_hooks=s.enable_job_hooks,
            job_hook_allowed_cidrs=tuple(s.job_hook_allowed_cidrs),
            job_hook_workers=s.job_hook_workers,
            reservations=s.enable_reservations,
            workflows=s.enable_workflows,
            inference=s.enable_inference,
            model_registry=s.enable_model_registry,
            priorities=s.enable_priorities,
            checkpoint_guards=s.enable_checkpoint_guards,
            checkpoint_poll_seconds=s.checkpoint_poll_seconds,
            autotuners=s.enable_autotuners,
            gpu_metrics=s.enable_gpu_metrics,
            gpu_sample_seconds=s.gpu_sample_seconds,
            stalled_seconds=s.stalled_seconds,
            prometheus_url=s.prometheus_url.rstrip("/"),
            gpu_sharing=s.enable_gpu_sharing,
            device_plugin_config=(s.device_plugin_config_namespace, s.device_plugin_config_name),
            simulate_device_plugin=s.simulate_device_plugin,
            kueue=KueueSettings(
                enabled=s.enable_kueue,
                default_queue=s.kueue_default_queue,
                strict=s.kueue_strict_admission,
            ),
        ),
        job_workers=s.workers,
        webhook_ready=not s.webhook_port,
    )
    rt.stripe = _stripe_gateway(rt, s)
    if s.watch_probe_period:
        rt.watch_health = WatchHealth(s.watch_probe_period)
        rt.spawn(probe_watches(api, rt.watch_health), "watch probe")
    elector = _elector(s, api) if s.leader_election else None

    async def run_kopf(
        registry: kopf.OperatorRegistry,
        settings: kopf.OperatorSettings,
        stop: asyncio.Event | None,
    ) -> None:
        with kopftasks.kopf_context():
            await kopf.operator(
                registry=registry,
                settings=settings,
                clusterwide=not s.namespaces,
                namespaces=s.namespaces,
                standalone=s.peering is None,
                peering_name=s.peering,
                stop_flag=stop,
            )

    def configure(settings: kopf.OperatorSettings) -> None:
        wiring.configure_kopf(settings, s.peering)

    runners: list[web.AppRunner] = []
    server: WebhookServer | None = None
    watch = LoopWatch()
    watch.start()
    kopftasks.install()  # a kopf stop leaves the servers' connections alone
    with tempfile.TemporaryDirectory(prefix="gryvia-operator-") as tmp:
        try:
            role = elector.describe if elector is not None else None
            extra = stripe_routes(rt, rt.stripe) if rt.stripe is not None else []
            runners = await serve_probes(
                rt, s.probe_host, s.health_port, s.metrics_port, role, extra
            )
            if s.webhook_port:
                server = await _start_webhook(rt, s, api, Path(tmp), wiring)
                rt.webhook_ready = True
            indexbarrier.install()  # start-up linear in the objects indexed, not quadratic
            if elector is None:
                kopf_settings = kopf.OperatorSettings()
                configure(kopf_settings)
                await run_kopf(
                    wiring.build_registry(rt, configuration, s.peering), kopf_settings, None
                )
            else:
                await standby.run_elected(
                    rt,
                    elector,
                    lambda: wiring.build_registry(rt, configuration, s.peering),
                    configure,
                    run_kopf,
                )
        finally:
            watch.stop()
            for task in rt.tasks:
                task.cancel()
            if server is not None:
                await server.stop()
            for runner in runners:
                with contextlib.suppress(Exception):
                    await runner.cleanup()
            api.close()
