"""One controller for every kind whose objects are reconciled as a whole in passes: a kind
declares its model, what it observes and one pure `reconcile(obj, observed, now) -> Outcome`
(a `KindSpec`); `KindController` owns the rest, the same way for each kind:

- the source: a kopf index of the kind and of the children it reads (never a periodic full
  LIST), and a kick of the loop when an object of the kind or a child changes (`register`;
  a kind that watches more, e.g. pods it tracks itself, adds handlers in `KindSpec.watch`);
- the loop: a pass over every object when kicked, else after the shortest `requeue_after`
  any object asked for (at most the kind's `idle_seconds`), with back-off after a failed
  pass (`passes.run_passes`);
- the writes: children created (one already there is fine), merge patches, deletes, events,
  conditions put into other objects' status (`controller.conditions`, read fresh and written
  guarded), and the status, merge-patched only when it changed (`passes.StatusWriter`);
- the invalid spec: an object its model refuses gets `api.controlled.invalid_status`, and its
  children are left alone;
- the finalizer, for a kind that names one: kept on every valid object; a deleted object is
  reconciled once more (its writes, not its status) before it is removed;
- the kind as a whole, for a kind that decides for all its objects at once (one ConfigMap
  they share, nodes no live object holds any more): `before_pass` and `after_pass`;
- the metrics: pass latency per controller, failed reconciles per controller, and the objects
  a pass still has to do as `gryvia_operator_workqueue_depth{queue=<controller>}`.

The rule of the shape (level-triggered, status written only on change, children owned by
their object) is the controller pattern of Kubernetes' sample-controller and
controller-runtime, applied to kopf indexes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, Generic, TypeVar

import kopf
from pydantic import ValidationError

from gryvia_operator.api.base import GryviaResource, KindInfo
from gryvia_operator.api.controlled import MAX_MESSAGE, invalid_status, spec_problems
from gryvia_operator.controller.conditions import update_conditions
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError, NotFound
from gryvia_operator.controller.passes import (
    ChildSource,
    Key,
    StatusWriter,
    register_pass_loop,
    run_passes,
)
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.reconcile.status import JobEvent, put_conditions

M = TypeVar("M", bound=GryviaResource)
O = TypeVar("O")  # noqa: E741  (what a kind observes)


@dataclass
class Outcome:
    """What one reconcile of one object asks for: children to create (whole objects), merge
    patches and deletes of objects in its namespace as (kind, name, patch) and (kind, name),
    events about it, its whole status, and the seconds after which to look again (None: only
    when something changes or the kind's idle pass comes). A kind that acts on objects it does
    not own (an idle policy on the jobs of its tenant) adds `patch_in` as (kind, namespace,
    name, patch), `conditions_in` as (kind, namespace, name, conditions put into its status
    by type, after the patches) and `events_on` as (the object as its index holds it, event)."""

    status: dict[str, Any]
    create: list[dict[str, Any]] = field(default_factory=list)
    patch: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    delete: list[tuple[str, str]] = field(default_factory=list)
    events: list[JobEvent] = field(default_factory=list)
    requeue_after: float | None = None
    patch_in: list[tuple[str, str, str, dict[str, Any]]] = field(default_factory=list)
    events_on: list[tuple[dict[str, Any], JobEvent]] = field(default_factory=list)
    conditions_in: list[tuple[str, str, str, list[dict[str, Any]]]] = field(default_factory=list)
    delete_in: list[tuple[str, str, str]] = field(default_factory=list)


class KindSpec(ABC, Generic[M, O]):
    """A kind for `KindController`: its facts, what it reads besides the object, and its pure
    reconcile. `index_id` is the kopf index of the kind (a `controller.store` id),
    `children` what it reads and is woken by besides its own objects,
    `idle_seconds` the longest wait between two passes; `child_word` and
    `not_created_reason` name a child the API server refused in the event and status."""

    info: KindInfo
    controller: str
    index_id: str
    children: tuple[ChildSource, ...]
    idle_seconds: float
    child_word: str = "child"
    not_created_reason: str = "ChildNotCreated"
    finalizer: str | None = None
    """A finalizer kept on every valid object: once the object is deleted, `reconcile` runs
    once more (it sees `metadata.deletion_timestamp`), the outcome's writes are applied (not
    its status) and the finalizer is removed. None: no finalizer."""

    @abstractmethod
    async def observe(self, rt: Runtime, obj: M) -> O:
        """What the reconcile needs besides the object (from indexes; reads of logs)."""

    @abstractmethod
    def reconcile(self, obj: M, observed: O, now: datetime) -> Outcome:
        """The pure decision: children, patches, deletes, events, status, requeue."""

    def watch(self, registry: kopf.OperatorRegistry, rt: Runtime, kick: asyncio.Event) -> None:
        """kopf handlers besides the kind's index and its children's (e.g. a slim index of
        objects it reads but is not woken by, a watch that keeps what `before_pass` works on
        and sets `kick` when a pass is due); default none."""

    async def after(self, rt: Runtime, obj: M, outcome: Outcome) -> None:
        """Work after the writes and the status (e.g. metering a workspace's run, sending the
        alerts a budget's status records); default none. A new `outcome.status` set here (a
        new dict: the written one must not be changed in place) is written when it differs.
        An API error here counts as a failed reconcile of the object."""

    async def before_pass(self, rt: Runtime) -> None:
        """Work for the kind as a whole before a pass reconciles its objects (e.g. one
        ConfigMap all of them share, the guarded jobs of every checkpoint guard, the usage a
        budget pass reads); default none. An API error here counts as a failed pass, and the
        objects are still reconciled."""

    async def after_pass(self, rt: Runtime) -> None:
        """Work for the kind as a whole after a pass reconciled its objects (e.g. releasing
        what no live object holds any more); default none. An API error here counts as a
        failed pass."""

    def retry_after(self, exc: KubeError | OSError) -> float | None:
        """The seconds before the next pass after a reconcile failed with `exc` (e.g. soon
        after a 409 Conflict); None (default): the pass's usual delay."""
        return None

    def woken(self, rt: Runtime) -> None:
        """An object of the kind appeared, changed or went (its index shows it): work besides
        the pass this kicks (e.g. waking jobs that wait for one); default none."""

    def not_created(self, outcome: Outcome, child: dict[str, Any], text: str) -> bool:
        """A child was refused (e.g. by the admission webhook; `text` says so): adjust
        `outcome` and say whether to stop creating the rest. Default: the status message
        says it, the rest are created; the next pass tries again."""
        outcome.status["message"] = text[:MAX_MESSAGE]
        return False


class KindController(Generic[M, O]):
    """Runs one `KindSpec`: `register` on the kopf registry, then `loop` as a task."""

    def __init__(self, rt: Runtime, spec: KindSpec[M, O]) -> None:
        self.rt = rt
        self.spec = spec
        self.kick = asyncio.Event()
        self.status = StatusWriter(rt, spec.info.kind)
        self.log = logging.getLogger(f"gryvia.operator.{spec.controller}")

    def register(self, registry: kopf.OperatorRegistry) -> None:
        """The kind's index, kicks from its objects and its children, and the kind's own
        further handlers (`KindSpec.watch`)."""
        spec = self.spec
        register_pass_loop(
            registry,
            spec.info.plural,
            spec.index_id,
            spec.children,
            spec.controller,
            self.kick,
            self.status,
            partial(spec.woken, self.rt),
            self.rt.informer,
        )
        spec.watch(registry, self.rt, self.kick)

    async def loop(self) -> None:
        """Pass over every object until cancelled."""
        spec = self.spec
        await run_passes(
            self.rt, spec.controller, self.kick, self.one_pass, spec.idle_seconds, self.log
        )

    async def one_pass(self) -> float:
        """Work over the kind (`before_pass`), then reconcile every object (one being
        deleted only to let its finalizer go), then `after_pass`; the seconds until the next
        pass."""
        now = self.rt.clock()
        delay = self.spec.idle_seconds
        live: set[Key] = set()
        bodies = list(self.rt.indices.all_values(self.spec.index_id))
        depth = self.rt.metrics.queue_depth.labels(queue=self.spec.controller)
        delay = min(delay, await self._guarded("before pass", self.spec.before_pass(self.rt)))
        for left, body in enumerate(bodies):
            depth.set(len(bodies) - left)
            meta = body.get("metadata") or {}
            key = (str(meta.get("namespace") or ""), str(meta.get("name")))
            live.add(key)
            work: Awaitable[float | None]
            if meta.get("deletionTimestamp"):
                if self.spec.finalizer not in (meta.get("finalizers") or []):
                    continue
                work = self.finalize(key, body, now)
            else:
                work = self.one(key, body, now)
            delay = min(delay, await self._guarded(f"{key[0]}/{key[1]}", work))
        depth.set(0)
        self.status.keep_only(live)
        return min(delay, await self._guarded("after pass", self.spec.after_pass(self.rt)))

    async def _guarded(self, what: str, work: Awaitable[float | None]) -> float:
        """Await `work`; an API or network error is logged and counted as a failed reconcile.
        The seconds it asks the next pass to come in (the idle delay when it asks none)."""
        wake: float | None
        try:
            wake = await work
        except (KubeError, OSError) as exc:
            self.rt.metrics.errors.labels(controller=self.spec.controller).inc()
            self.log.warning("%s %s: %s", self.spec.controller, what, exc)
            wake = self.spec.retry_after(exc)
        return self.spec.idle_seconds if wake is None else max(wake, 0.0)

    async def one(self, key: Key, body: dict[str, Any], now: datetime) -> float | None:
        """Reconcile one object (its last written status stands in for a lagging index);
        the seconds after which it asks to be looked at again."""
        stored = dict(body.get("status") or {})
        before = self.status.last(key, stored)
        body = {**body, "status": before}
        try:
            obj: M = self.spec.info.model.model_validate(body)  # type: ignore[assignment]
        except ValidationError as exc:
            await self.status.write(key, stored, invalid_status(before, spec_problems(exc)))
            return None
        await self._set_finalizer(key, body, keep=True)
        outcome = self.spec.reconcile(obj, await self.spec.observe(self.rt, obj), now)
        await self._apply(key[0], body, outcome)
        await self.status.write(key, stored, outcome.status)
        await self.spec.after(self.rt, obj, outcome)
        await self.status.write(key, stored, outcome.status)  # when `after` changed it
        return outcome.requeue_after

    async def finalize(self, key: Key, body: dict[str, Any], now: datetime) -> None:
        """A deleted object that holds the kind's finalizer: apply the writes of its last
        reconcile (none when its spec is invalid), then remove the finalizer."""
        try:
            obj: M = self.spec.info.model.model_validate(body)  # type: ignore[assignment]
        except ValidationError:
            pass
        else:
            outcome = self.spec.reconcile(obj, await self.spec.observe(self.rt, obj), now)
            await self._apply(key[0], body, outcome)
        await self._set_finalizer(key, body, keep=False)

    async def _set_finalizer(self, key: Key, body: dict[str, Any], *, keep: bool) -> None:
        """Add (keep) or remove the kind's finalizer; a merge patch replaces the whole list,
        so it is guarded by the resourceVersion the index shows (409 Conflict: next pass)."""
        finalizer = self.spec.finalizer
        meta = body.get("metadata") or {}
        have = list(meta.get("finalizers") or [])
        if finalizer is None or (finalizer in have) == keep:
            return
        wanted = [*have, finalizer] if keep else [f for f in have if f != finalizer]
        patch = {"metadata": {"resourceVersion": meta.get("resourceVersion"), "finalizers": wanted}}
        with contextlib.suppress(NotFound):
            await self.rt.api.patch(self.spec.info.kind, key[1], patch, key[0])

    async def _apply(self, ns: str, body: dict[str, Any], outcome: Outcome) -> None:
        api, writes = self.rt.api, self.rt.metrics.writes
        patches = [(kind, ns, name, patch) for kind, name, patch in outcome.patch]
        for kind, where, name, patch in [*patches, *outcome.patch_in]:
            with contextlib.suppress(NotFound):
                await api.patch(kind, name, patch, where)
            writes.labels(kind=kind, verb="patch").inc()
        for kind, where, name, wanted in outcome.conditions_in:
            await update_conditions(self.rt, kind, name, where, partial(put_conditions, wanted))
        for child in outcome.create:
            try:
                await api.create(child)
                writes.labels(kind=child["kind"], verb="create").inc()
            except AlreadyExists:
                pass
            except KubeError as exc:
                text = f"{self.spec.child_word} {child['metadata']['name']} not created: {exc}"
                reason = self.spec.not_created_reason
                self.rt.post_event(body, JobEvent("Warning", reason, text))
                if self.spec.not_created(outcome, child, text):
                    break
        deletes = [(kind, ns, name) for kind, name in outcome.delete]
        for kind, where, name in [*deletes, *outcome.delete_in]:
            with contextlib.suppress(NotFound):
                await api.delete(kind, name, where)
            writes.labels(kind=kind, verb="delete").inc()
        for event in outcome.events:
            self.rt.post_event(body, event)
        for other, event in outcome.events_on:
            self.rt.post_event(other, event)
