"""What the pass-loop controllers (workflows, auto-tuners) share: the loop that passes over
every object of a kind at once when kicked, else after the delay a pass asks for; the status
writer that remembers its last write until the watch shows it; and the slim index entry.

One pass loop per kind replaces a kopf handler per object where each pass needs several
objects at once (a workflow and its step jobs, a tuner and its trials).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION
from gryvia_operator.api.resources import Resource
from gryvia_operator.controller.informer import Informer
from gryvia_operator.controller.kubeapi import KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime

Key = tuple[str, str]
"""(namespace, name) of one object."""


def index_entry(body: Mapping[str, Any]) -> dict[str, Any]:
    """What a kind's index keeps of an object: apiVersion, kind, metadata without
    managedFields, spec and status (copies)."""
    meta = {k: v for k, v in (body.get("metadata") or {}).items() if k != "managedFields"}
    return {
        "apiVersion": body.get("apiVersion"),
        "kind": body.get("kind"),
        "metadata": meta,
        "spec": dict(body.get("spec") or {}),
        "status": dict(body.get("status") or {}),
    }


async def run_passes(
    rt: Runtime,
    name: str,
    kick: asyncio.Event,
    one_pass: Callable[[], Awaitable[float | None]],
    pass_seconds: float,
    log: logging.Logger,
) -> None:
    """Run `one_pass` until cancelled: again when `kick` is set, else after the seconds the
    pass returned (at least 0.05; None: `pass_seconds`). An API or network error is logged
    as a warning, any other exception with its traceback, and the next pass comes after
    `pass_seconds`. The pass time
    goes to the `latency` metric, and each failed pass to `errors`, under controller `name`."""
    while True:
        kick.clear()
        started = time.perf_counter()
        delay = pass_seconds
        try:
            wanted = await one_pass()
            delay = pass_seconds if wanted is None else wanted
        except (KubeError, OSError) as exc:
            log.warning("%s: %s", name, exc)
            rt.metrics.errors.labels(controller=name).inc()
        except Exception:  # a bug in one pass must not end the controller for good
            log.exception("%s pass failed; retrying in %.0f s", name, pass_seconds)
            rt.metrics.errors.labels(controller=name).inc()
        rt.metrics.latency.labels(controller=name).observe(time.perf_counter() - started)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(kick.wait(), max(delay, 0.05))


class StatusWriter:
    """Writes the status of objects of one kind, remembering the last status written per
    object: the index may lag behind the loop's own writes, so that one counts until the
    watch shows it."""

    def __init__(self, rt: Runtime, kind: str) -> None:
        self.rt = rt
        self.kind = kind
        self.written: dict[Key, dict[str, Any]] = {}

    def forget(self, key: Key) -> None:
        """The object is gone: drop what was written for it."""
        self.written.pop(key, None)

    def keep_only(self, live: set[Key]) -> None:
        """Drop what was written for objects no longer in `live`."""
        for gone in set(self.written) - live:
            self.written.pop(gone, None)

    def last(self, key: Key, stored: dict[str, Any]) -> dict[str, Any]:
        """The status as the loop knows it: the last written, else the stored one."""
        return self.written.get(key) or stored

    async def write(self, key: Key, stored: dict[str, Any], status: dict[str, Any]) -> None:
        """Merge-patch the status when it differs from the last written (or stored) one;
        keys no longer set are removed (null), in nested objects too (`merge_patch`). An
        object deleted meanwhile is skipped."""
        before = self.last(key, stored)
        if _same(before, status):
            if _same(stored, status):
                self.written.pop(key, None)  # the watch caught up
            return
        patch = merge_patch(before, status)
        with contextlib.suppress(NotFound):
            await self.rt.api.patch(
                self.kind, key[1], {"status": patch}, key[0], subresource="status"
            )
        self.rt.metrics.writes.labels(kind=self.kind, verb="status").inc()
        self.written[key] = {k: v for k, v in status.items() if v is not None}


def merge_patch(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """`after` as a JSON merge patch over `before` (RFC 7396): every key of `before` that
    `after` lacks is set to null, at every level of nested objects (a merge patch merges
    nested objects, so a key left out there would stay); lists and values are replaced."""
    out: dict[str, Any] = {k: None for k in before if k not in after}
    for key, value in after.items():
        old = before.get(key)
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            out[key] = merge_patch(old, value)
        else:
            out[key] = value
    return out


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal once the keys set to None are left out."""
    return {k: v for k, v in a.items() if v is not None} == {
        k: v for k, v in b.items() if v is not None
    }


@dataclass(frozen=True)
class ChildSource:
    """Objects a pass-loop kind reads and is woken by: `plural` of `group`/`version` carrying
    label `label` (its value names the owning object), or all of them when `label` is None;
    with `index_id`, they are kept in that index under (namespace, label value), or
    (namespace, name) without a label. `name` tells its handlers apart."""

    group: str
    version: str
    plural: str
    label: str | None
    index_id: str | None = None
    name: str = "child"
    informed: bool = False
    """Read through the runtime's informer of the resource (a kind that `Runtime.informer`
    already lists and watches, such as GryviaAIJobs), not a kopf handler of its own."""


def register_pass_loop(
    registry: kopf.OperatorRegistry,
    plural: str,
    index_id: str,
    children: Sequence[ChildSource],
    controller: str,
    kick: asyncio.Event,
    status: StatusWriter,
    woken: Callable[[], None] | None = None,
    informer: Callable[[str], Informer] | None = None,
) -> None:
    """Register a pass-loop kind: its index (`index_entry` per object, keyed by (namespace,
    name)), the indexes of its `children` that have one, and a kick of the loop when an object
    of the kind or a child changes (and a call of `woken`, when given); a deleted object's
    written status is forgotten.
    `controller` makes the handler ids unique (`gryvia_<controller>_events`,
    `gryvia_<controller>_<child name>_events`)."""

    @kopf.index(GROUP, VERSION, plural, id=index_id, registry=registry)
    async def index(body: kopf.Body, namespace: str | None, name: str, **_: Any) -> Any:
        """Keep each object without managedFields."""
        return {(namespace or "", name): index_entry(body)}

    @kopf.on.event(GROUP, VERSION, plural, id=f"gryvia_{controller}_events", registry=registry)
    async def event(type: str, namespace: str | None, name: str, **_: Any) -> None:
        """An object appeared, changed or went: pass now."""
        if type == "DELETED":
            status.forget((namespace or "", name))
        kick.set()
        if woken is not None:
            woken()

    for child in children:
        if child.informed and informer is not None:
            _inform_child(informer, child, controller, kick)
        else:
            _register_child(registry, child, controller, kick)


def _inform_child(
    informer: Callable[[str], Informer], child: ChildSource, controller: str, kick: asyncio.Event
) -> None:
    source = informer(Resource("", child.group, child.version, child.plural).path())

    def labelled(body: Mapping[str, Any]) -> str | None:
        meta = body.get("metadata") or {}
        if child.label is None:
            return str(meta.get("name") or "")
        value = (meta.get("labels") or {}).get(child.label)
        return None if value is None else str(value)

    def index(body: Mapping[str, Any]) -> dict[tuple[str, str], Any]:
        owner = labelled(body)
        namespace = str((body.get("metadata") or {}).get("namespace") or "")
        return {} if owner is None else {(namespace, owner): index_entry(body)}

    def event(type: str, body: Mapping[str, Any]) -> None:
        if labelled(body) is not None:
            kick.set()

    if child.index_id is not None:
        source.add_index(child.index_id, index)
    source.add_listener(f"{controller}_{child.name}", event)


def _register_child(
    registry: kopf.OperatorRegistry, child: ChildSource, controller: str, kick: asyncio.Event
) -> None:
    selector = {child.label: kopf.PRESENT} if child.label else None
    if child.index_id is not None:

        @kopf.index(
            child.group,
            child.version,
            child.plural,
            id=child.index_id,
            labels=selector,
            registry=registry,
        )
        async def index(
            body: kopf.Body, namespace: str | None, name: str, labels: Any, **_: Any
        ) -> Any:
            """Keep each child under (namespace, the owner its label names, or its name)."""
            owner = str(labels.get(child.label)) if child.label else name
            return {(namespace or "", owner): index_entry(body)}

    @kopf.on.event(
        child.group,
        child.version,
        child.plural,
        id=f"gryvia_{controller}_{child.name}_events",
        labels=selector,
        registry=registry,
    )
    async def child_event(**_: Any) -> None:
        """One of its children changed: pass now."""
        kick.set()
