"""Wire the operator together and run it until a signal stops kopf.

kopf settings and registry, login, work-queue workers, the webhook, health and metrics.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from pathlib import Path
from typing import Any

import kopf
from aiohttp import web

from gryvia_operator.api.attribution import namespace_tenant
from gryvia_operator.api.names import FINALIZER
from gryvia_operator.handlers import (
    accounting,
    aijob,
    arrays,
    children,
    gpunode,
    node,
    pod,
    policy,
    tenant,
)
from gryvia_operator.handlers.kubeapi import (
    AlreadyExists,
    KubeApi,
    bearer_token,
    load_configuration,
)
from gryvia_operator.handlers.runtime import Runtime
from gryvia_operator.handlers.store import NODES
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.quotas import governing
from gryvia_operator.settings import OperatorSettings
from gryvia_operator.webhook.configuration import build_webhook_configuration
from gryvia_operator.webhook.review import PolicyContext, node_inventory
from gryvia_operator.webhook.server import WebhookServer, from_cert_dir, self_signed

log = logging.getLogger("gryvia.operator")


def configure_kopf(settings: kopf.OperatorSettings, peering: str | None) -> None:
    """kopf settings tuned for many small objects and event-driven reconciles.

    Only index and event handlers are used, so kopf stores no handler progress or diff-base
    on the objects (no extra patches per event); the storages are set to annotations under
    gryvia.io anyway so nothing lands in a CRD's pruned status. Children are watched with a
    server-side label selector. Events are posted in the background by kopf's poster.
    """
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix="gryvia.io")
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix="gryvia.io", key="last-handled-configuration"
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
    children.configure(settings)


def build_registry(rt: Runtime, configuration: Any, peering: str | None) -> kopf.OperatorRegistry:
    """A kopf registry with every handler of this operator."""
    registry = kopf.OperatorRegistry()
    for module in (aijob, children, pod, node, gpunode, policy, tenant, arrays):
        module.register(registry, rt)
    acc = accounting.Accounting(rt)
    accounting.register(registry, rt, acc)

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

    def start_workers() -> None:
        rt.tasks.append(asyncio.create_task(rt.jobs.run_workers(rt.job_workers, _job(rt))))
        rt.tasks.append(asyncio.create_task(rt.nodes.run_workers(rt.node_workers, _node(rt))))
        rt.tasks.append(asyncio.create_task(acc.quota_loop()))
        rt.tasks.append(asyncio.create_task(acc.metering_loop()))

    rt.on_synced = start_workers

    @kopf.on.startup(registry=registry)
    async def startup(settings: kopf.OperatorSettings, **kwargs: Any) -> None:
        configure_kopf(settings, peering)
        rt.indices.attach(kwargs)

    @kopf.on.cleanup(registry=registry)
    async def cleanup(**_: Any) -> None:
        for task in rt.tasks:
            task.cancel()

    return registry


def _job(rt: Runtime) -> Any:
    async def handle(key: tuple[str, str]) -> None:
        await aijob.reconcile_key(rt, key)

    return handle


def _node(rt: Runtime) -> Any:
    async def handle(name: str) -> None:
        await node.reconcile_node(rt, name)

    return handle


async def _serve_probes(
    rt: Runtime, host: str, health_port: int, metrics_port: int
) -> list[web.AppRunner]:
    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def readyz(_: web.Request) -> web.Response:
        if rt.ready:
            return web.Response(text="ready")
        return web.Response(text="not ready: caches syncing", status=503)

    async def metrics(_: web.Request) -> web.Response:
        rt.update_gauges()
        return web.Response(
            text=rt.metrics.exposition(),
            content_type="text/plain",
            charset="utf-8",
            headers={"X-Format": "0.0.4"},
        )

    runners = []
    for port, routes in (
        (health_port, [web.get("/healthz", healthz), web.get("/readyz", readyz)]),
        (metrics_port, [web.get("/metrics", metrics)]),
    ):
        if not port:
            continue
        app = web.Application()
        app.add_routes(routes)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        await web.TCPSite(runner, host, port).start()
        runners.append(runner)
    return runners


async def self_register(api: KubeApi, body: dict[str, Any]) -> None:
    """Create the ValidatingWebhookConfiguration, or replace the one of an earlier run."""
    try:
        await api.create(body)
    except AlreadyExists:
        existing = await api.get("ValidatingWebhookConfiguration", body["metadata"]["name"])
        body = {
            **body,
            "metadata": {
                **body["metadata"],
                "resourceVersion": existing["metadata"]["resourceVersion"],
            },
        }
        await api.replace(body)
    log.info("registered ValidatingWebhookConfiguration %s", body["metadata"]["name"])


async def _start_webhook(
    rt: Runtime, s: OperatorSettings, api: KubeApi, workdir: Path
) -> WebhookServer:
    host = s.effective_webhook_host
    tls = from_cert_dir(s.webhook_cert_dir) if s.webhook_cert_dir else self_signed(workdir / "tls")

    def inventory() -> list[tuple[str, int]]:
        return node_inventory(rt.indices.all_values(NODES))

    def observe(path: str, allowed: bool, seconds: float) -> None:
        name = path.rsplit("-", 1)[-1]
        rt.metrics.webhook.inc(webhook=name, allowed=str(allowed).lower())
        rt.metrics.webhook_latency.observe(seconds, webhook=name)

    def quota_policy(namespace: str) -> PolicyContext:
        if not rt.synced.is_set():
            return PolicyContext(ready=False)
        known = policy.tenants(rt)
        owner = namespace_tenant(namespace, known)
        return PolicyContext(
            quotas=tuple(governing(namespace, policy.quotas(rt))),
            tenant=known.get(owner) if owner else None,
            skus=tuple(policy.skus(rt)),
        )

    server = WebhookServer(host, s.webhook_port, tls, inventory, observe, quota_policy)
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
    return server


async def run(s: OperatorSettings) -> None:
    """Run the operator until SIGINT/SIGTERM."""
    configuration = load_configuration(s.kubeconfig, s.context)
    api = KubeApi(configuration, workers=max(8, s.workers))
    rt = Runtime(
        api=api,
        config=ReconcileConfig(cluster_domain=s.cluster_domain),
        job_workers=s.workers,
        webhook_ready=not s.webhook_port,
    )
    registry = build_registry(rt, configuration, s.peering)
    kopf_settings = kopf.OperatorSettings()
    configure_kopf(kopf_settings, s.peering)
    runners: list[web.AppRunner] = []
    server: WebhookServer | None = None
    with tempfile.TemporaryDirectory(prefix="gryvia-operator-") as tmp:
        try:
            runners = await _serve_probes(rt, s.probe_host, s.health_port, s.metrics_port)
            if s.webhook_port:
                server = await _start_webhook(rt, s, api, Path(tmp))
                rt.webhook_ready = True
            await kopf.operator(
                registry=registry,
                settings=kopf_settings,
                clusterwide=not s.namespaces,
                namespaces=s.namespaces,
                standalone=s.peering is None,
                peering_name=s.peering,
            )
        finally:
            for task in rt.tasks:
                task.cancel()
            if server is not None:
                await server.stop()
            for runner in runners:
                with contextlib.suppress(Exception):
                    await runner.cleanup()
            api.close()
