"""The health, readiness and Prometheus metrics HTTP endpoints of the operator process."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aiohttp import web

from gryvia_operator.controller.metrics import CONTENT_TYPE
from gryvia_operator.controller.runtime import Runtime


async def serve_probes(
    rt: Runtime,
    host: str,
    health_port: int,
    metrics_port: int,
    role: Callable[[], str] | None = None,
    metrics_extra: Sequence[web.RouteDef] = (),
) -> list[web.AppRunner]:
    """Serve `/healthz` and `/readyz` on `health_port` and `/metrics` on `metrics_port`
    (a port of 0 is not served); return the started runners, for `cleanup()`.

    `/healthz` is 200 while the process runs; `/readyz` is 200 once caches are synced and the
    webhook serves, and while the API server answers the watch probe (`rt.watch_health`,
    `controller/watchprobe.py`), else 503; `/metrics` is the Prometheus text exposition of
    `rt.metrics`.
    With leader election, `role()` (`leader`, `standby (leader: NAME)`) follows the word of
    both probes: `ok: leader`, `ready: standby (leader: NAME)`; a leader that lost its Lease
    is not ready (it is exiting). `metrics_extra` are more routes of the metrics port (Stripe's
    webhook, `controller.stripehook`).
    Raises OSError when a port cannot be bound.
    """

    def said(word: str) -> str:
        return f"{word}: {role()}" if role is not None else word

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text=said("ok"))

    async def readyz(_: web.Request) -> web.Response:
        lost = role is not None and role() == "lost"
        watches = rt.watch_health
        if watches is not None and watches.lost():
            return web.Response(text=said(f"not ready: {watches.describe()}"), status=503)
        if rt.ready and not lost:
            return web.Response(text=said("ready"))
        return web.Response(text=said("not ready: caches syncing"), status=503)

    async def metrics(_: web.Request) -> web.Response:
        rt.update_gauges()
        return web.Response(body=rt.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})

    runners = []
    for port, routes in (
        (health_port, [web.get("/healthz", healthz), web.get("/readyz", readyz)]),
        (metrics_port, [web.get("/metrics", metrics), *metrics_extra]),
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
