"""Two replicas, one leader: the operator's run with leader election (`--leader-election`).

Every replica serves the webhook and its probes from the start. Until it holds the Lease
(`controller/leader.py`) a replica is a standby: kopf runs with the indexes alone, so the
webhook judges jobs against the same quota, tenant, catalog and node caches the leader has,
and nothing is written (no handler that writes is registered; kopf's own finalizer is set to
a name no object carries, so kopf never adds or removes one). Once it holds the Lease, the
standby's kopf stops and the full one starts (its caches listed again: /readyz says "not
ready" for those seconds and the webhook's quota check fails open meanwhile, as at any
start). The leader renews the Lease while kopf runs; when it cannot (the renew deadline) it
exits at once with status 5, before a standby may take over, and its pod restarts as a
standby. A SIGTERM stops kopf, then the Lease is released, so a standby takes over at its
next try (`retry_period`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine
from typing import Any

import kopf

from gryvia_operator.api.names import FINALIZER_STANDBY
from gryvia_operator.controller.leader import LeaderElector
from gryvia_operator.controller.runtime import Runtime

log = logging.getLogger("gryvia.operator")

EXIT_LEADERSHIP_LOST = 5
"""Exit status of a leader that could not renew its Lease in time."""

RunKopf = Callable[
    [kopf.OperatorRegistry, kopf.OperatorSettings, asyncio.Event | None],
    Coroutine[Any, Any, None],
]
"""Runs kopf with a registry and settings until the stop flag is set or a signal arrives."""


def standby_registry(full: kopf.OperatorRegistry, rt: Runtime) -> kopf.OperatorRegistry:
    """A registry with the index handlers and the activities (login, startup, cleanup) of
    `full`, and one event handler on nodes that marks the caches synced (kopf runs it only
    after every index is listed). `rt.on_synced` is cleared: a standby starts no workers.

    kopf has no public way to copy handlers between registries, so its registries'
    `_indexing` and `_activities` are read here (kopf 1.37-1.38)."""
    registry = kopf.OperatorRegistry()
    registry._indexing = full._indexing
    for handler in full._activities.get_all_handlers():
        registry._activities.append(handler)
    rt.on_synced = None

    @kopf.on.startup(registry=registry)
    def standby_settings(settings: kopf.OperatorSettings, **_: Any) -> None:
        # With the real name, kopf would remove the finalizer of objects it has no handler for.
        settings.persistence.finalizer = FINALIZER_STANDBY

    @kopf.on.event("v1", "nodes", id="gryvia_standby_synced", registry=registry)
    async def synced(**_: Any) -> None:
        rt.mark_synced()

    return registry


async def run_elected(
    rt: Runtime,
    elector: LeaderElector,
    build_registry: Callable[[], kopf.OperatorRegistry],
    configure: Callable[[kopf.OperatorSettings], None],
    run_kopf: RunKopf,
) -> None:
    """Be a standby until `elector` holds the Lease, then the leader until a signal stops
    kopf (the Lease released) or renewal fails (the process exits with
    EXIT_LEADERSHIP_LOST). `build_registry` makes the full registry (each call a new one);
    `configure` tunes a fresh kopf settings object."""

    def settings() -> kopf.OperatorSettings:
        made = kopf.OperatorSettings()
        configure(made)
        return made

    stop = asyncio.Event()
    standby = asyncio.create_task(
        run_kopf(standby_registry(build_registry(), rt), settings(), stop)
    )
    acquiring = asyncio.create_task(elector.acquire())
    done, _ = await asyncio.wait({standby, acquiring}, return_when=asyncio.FIRST_COMPLETED)
    if standby in done:  # a signal (or a crash) while standing by
        acquiring.cancel()
        standby.result()
        return
    log.info("leading: the standby's kopf stops, the full one starts")
    stop.set()
    await standby
    rt.synced.clear()
    keeping = asyncio.create_task(elector.keep())
    leading = asyncio.create_task(run_kopf(build_registry(), settings(), None))
    done, _ = await asyncio.wait({keeping, leading}, return_when=asyncio.FIRST_COMPLETED)
    if keeping in done:
        logging.shutdown()
        os._exit(EXIT_LEADERSHIP_LOST)  # stop every write now, as client-go's OnStoppedLeading
    keeping.cancel()
    try:
        leading.result()
    finally:
        await elector.release()
