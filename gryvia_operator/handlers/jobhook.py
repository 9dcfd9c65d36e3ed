"""GryviaJobHook controller (opt-in, `--enable-job-hooks`): each hook's Ready status, and one
signed POST per job transition it watches, at least once and never twice for one transition.

A pass (every PASS_SECONDS, or at once on a hook or job event) checks every hook (URL, SSRF
guard, Secret) and starts a delivery task for every transition `reconcile.jobhooks.due` lists
that no task handles yet; at most `workers` deliveries run at once.

Exactly once across restarts, per delivery id (`X-Gryvia-Delivery`):
1. under a per-job lock the job is read fresh; a final state recorded in its annotation
   `gryvia.io/job-hooks` (delivered, failed, refused) ends the task;
2. before every POST attempt `delivering` with the attempt number is written to the
   annotation (a merge patch guarded by the job's resourceVersion, so nothing is lost);
3. after the answer the final state is written, then the hook's counters.
A SIGKILL before step 2 leaves the transition due: the next operator sends it. A SIGKILL after
a 2xx answer but before step 3 makes the next operator repeat that attempt with the same
delivery id, which the receiver drops (HTTP offers no more than that; docs/hooks.md).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from gryvia_operator.api.jobhook import STATE_ANNOTATION, GryviaJobHook, GryviaJobHookStatus
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.api.signature import HOOK_USER_AGENT, render
from gryvia_operator.api.ssrf import first_refusal, parse_cidrs, parse_target
from gryvia_operator.controller import delivery
from gryvia_operator.controller.kubeapi import Conflict, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS
from gryvia_operator.reconcile import jobhooks as core
from gryvia_operator.reconcile.status import JobEvent, get_condition, set_condition, timestamp

log = logging.getLogger("gryvia.operator.jobhook")
PLURAL = "gryviajobhooks"
PASS_SECONDS = 5.0
CHECK_SECONDS = 30.0
"""A hook's URL and Secret are checked again this often (and at once after a spec change)."""
MAX_BACKOFF_SECONDS = 3600.0
WRITE_TRIES = 8
HookKey = tuple[str, str]


class JobHooks:
    """The controller's state: hooks seen, deliveries in flight or done, write locks."""

    def __init__(self, rt: Runtime, allowed: tuple[str, ...] = (), workers: int = 4) -> None:
        self.rt = rt
        self.guard = delivery.Guard(parse_cidrs(allowed))
        self.slots = asyncio.Semaphore(workers)
        self.kick = asyncio.Event()
        self.hooks: dict[HookKey, dict[str, Any]] = {}
        """(namespace, name) -> the hook's body as last seen by the watch."""
        self.checked: dict[HookKey, tuple[Any, float, bool]] = {}
        """(generation, monotonic time, may deliver) of each hook's last check."""
        self.active: set[str] = set()
        """Delivery ids a task handles now."""
        self.finished: dict[str, str] = {}
        """Delivery id -> job uid, for ids this process recorded final (the index may lag
        behind); dropped when the job is deleted."""
        self.resumed: dict[HookKey, datetime] = {}
        """activeSince written per hook (used until the watch shows it)."""
        self.recheck: set[HookKey] = set()
        """Hooks to check again in the next pass."""
        self.gone: set[str] = set()
        """Uids of hooks deleted while this process ran (their retries stop)."""
        self.job_locks: dict[str, asyncio.Lock] = {}
        self.hook_locks: dict[HookKey, asyncio.Lock] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    async def loop(self) -> None:
        """Run a pass every PASS_SECONDS, or at once when kicked."""
        while True:
            self.kick.clear()
            try:
                await self.update()
            except (KubeError, OSError) as exc:
                log.warning("job hooks: %s", exc)
            except Exception:  # a bug in one pass must not end hooks for good
                log.exception("job hook pass failed; retrying in %.0f s", PASS_SECONDS)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.kick.wait(), PASS_SECONDS)

    def with_cutoff(self, hook: GryviaJobHook) -> GryviaJobHook:
        """`hook` with the activeSince this process wrote, when the watch has not shown it."""
        mine = self.resumed.get((hook.namespace, hook.name))
        seen = hook.status.active_since if hook.status else None
        if mine is None or (seen is not None and seen >= mine):
            return hook
        status = (hook.status or GryviaJobHookStatus()).model_copy(update={"active_since": mine})
        return hook.model_copy(update={"status": status})

    async def update(self) -> None:
        """Check every hook; start the deliveries now due."""
        jobs = self.rt.indices.all_values(AIJOBS)
        for found in parse_valid(GryviaJobHook, list(self.hooks.values())):
            hook = self.with_cutoff(found)
            if not await self.check(hook):
                continue
            for job in jobs:
                for item in core.due(hook, job):
                    if item.delivery in self.active or item.delivery in self.finished:
                        continue
                    self.active.add(item.delivery)
                    task = asyncio.create_task(self.run(hook, job, item))
                    self.tasks.add(task)
                    task.add_done_callback(self.tasks.discard)

    async def secret(self, hook: GryviaJobHook) -> bytes | None:
        """The HMAC key (None without secretRef); raises LookupError naming what is missing."""
        ref = hook.spec.webhook.secret_ref
        if ref is None:
            return None
        try:
            found = await self.rt.api.get("Secret", ref.name, hook.namespace)
        except NotFound as exc:
            raise LookupError(
                f"spec.webhook.secretRef: Secret {hook.namespace}/{ref.name} not found: create it "
                "with key 'secret'"
            ) from exc
        data = (found.get("data") or {}).get("secret")
        if not data:
            raise LookupError(
                f"spec.webhook.secretRef: Secret {hook.namespace}/{ref.name} has no key 'secret'"
            )
        return base64.b64decode(data)

    async def refusal(self, url: str) -> str | None:
        """Why the hook's URL is refused by the guard (None: allowed, or not resolvable now:
        deliveries then fail and retry)."""
        try:
            target = parse_target(url)
            addresses = await delivery.resolve(target.host, target.port)
        except ValueError as exc:
            return f"spec.webhook.url: {exc}"
        except OSError:
            return None
        why = first_refusal(target.host, addresses, self.guard.allowed)
        return f"spec.webhook.url: {why}" if why else None

    async def check(self, hook: GryviaJobHook) -> bool:
        """Check the hook (again after CHECK_SECONDS or a spec change); True when it may
        deliver in this pass."""
        key = (hook.namespace, hook.name)
        seen = self.checked.get(key)
        generation = hook.metadata.generation
        if (
            seen is not None
            and seen[0] == generation
            and time.monotonic() - seen[1] < CHECK_SECONDS
        ):
            return seen[2]
        ok = await self._check(hook)
        if key in self.recheck:  # resumed: check again next pass, not in CHECK_SECONDS
            self.recheck.discard(key)
        else:
            self.checked[key] = (generation, time.monotonic(), ok)
        return ok

    async def _check(self, hook: GryviaJobHook) -> bool:
        """Write the hook's Ready condition when it changed; True when it may deliver (False
        in the pass that resumed it: the next pass reads the new cutoff)."""
        invalid = await self.refusal(hook.spec.webhook.url)
        missing = None
        if invalid is None:
            try:
                await self.secret(hook)
            except LookupError as exc:
                missing = str(exc)
        ready = core.ready_condition(hook, secret_missing=missing, invalid=invalid)
        resumed = await self.write_ready(hook, ready)
        return ready[0] == "True" and not resumed

    async def write_ready(self, hook: GryviaJobHook, ready: tuple[str, str, str]) -> bool:
        """Patch the Ready condition when it changed (and activeSince when a suspended hook
        resumed); True when activeSince was written."""
        key = (hook.namespace, hook.name)
        async with self.hook_locks.setdefault(key, asyncio.Lock()):
            try:
                body = await self.rt.api.get("GryviaJobHook", hook.name, hook.namespace)
            except NotFound:
                return False
            status = dict(body.get("status") or {})
            before = get_condition(status.get("conditions") or [], "Ready") or {}
            if (before.get("status"), before.get("reason"), before.get("message")) != ready:
                now = self.rt.clock()
                patch: dict[str, Any] = {
                    "conditions": set_condition(
                        status.get("conditions") or [],
                        "Ready",
                        *ready,
                        now,
                        (body.get("metadata") or {}).get("generation"),
                    )
                }
                if before.get("reason") == "Suspended" and ready[1] != "Suspended":
                    patch["activeSince"] = timestamp(now)
                await self.rt.api.patch(
                    "GryviaJobHook",
                    hook.name,
                    {"status": patch},
                    hook.namespace,
                    subresource="status",
                )
                self.rt.metrics.writes.labels(kind="GryviaJobHook", verb="status").inc()
                if "activeSince" in patch:
                    self.resumed[key] = now.replace(microsecond=0)
                    self.recheck.add(key)
                    return True
        return False

    async def record(
        self, job: Mapping[str, Any], key: str, hook: GryviaJobHook, event: str, **kw: Any
    ) -> bool:
        """Write delivery `key`'s state into the job annotation; False when the job is gone
        or its annotation already holds a final state for `key` (nothing more to send)."""
        meta = job.get("metadata") or {}
        ns, name = str(meta.get("namespace")), str(meta.get("name"))
        for _ in range(WRITE_TRIES):
            try:
                fresh = await self.rt.api.get("GryviaAIJob", name, ns)
            except NotFound:
                return False
            if (fresh.get("metadata") or {}).get("uid") != meta.get("uid"):
                return False  # deleted and created again under the same name
            state = core.job_state(fresh)
            if (state.get(key) or {}).get("state") in core.FINAL_STATES:
                self.finished[key] = str(meta.get("uid"))
                return False
            state = core.record(state, key, hook=hook.name, event=event, now=self.rt.clock(), **kw)
            patch = {
                "metadata": {
                    "resourceVersion": fresh["metadata"].get("resourceVersion"),
                    "annotations": {STATE_ANNOTATION: core.dump_state(state)},
                }
            }
            try:
                await self.rt.api.patch("GryviaAIJob", name, patch, ns)
            except Conflict:
                continue
            self.rt.metrics.writes.labels(kind="GryviaAIJob", verb="hook-state").inc()
            return True
        raise KubeError(409, "Conflict", f"job {ns}/{name} kept changing; hook state not written")

    def stopped(self, hook: GryviaJobHook) -> bool:
        """True when the hook was deleted or suspended since the delivery started."""
        if hook.metadata.uid in self.gone:
            return True
        current = self.hooks.get((hook.namespace, hook.name)) or {}
        return bool((current.get("spec") or {}).get("suspend"))

    def forget_job(self, uid: str) -> None:
        """A job was deleted: drop what this process remembers of its deliveries."""
        self.job_locks.pop(uid, None)
        for key in [k for k, owner in self.finished.items() if owner == uid]:
            del self.finished[key]

    async def run(self, hook: GryviaJobHook, job: Mapping[str, Any], item: core.Due) -> None:
        """Deliver one transition (see the module docstring for the order of writes)."""
        try:
            async with self.slots:
                await self._run(hook, job, item)
        except (KubeError, OSError) as exc:
            log.warning("hook %s/%s delivery %s: %s", hook.namespace, hook.name, item.delivery, exc)
        except Exception:
            log.exception("hook %s/%s delivery %s failed", hook.namespace, hook.name, item.delivery)
        finally:
            self.active.discard(item.delivery)

    async def _run(self, hook: GryviaJobHook, job: Mapping[str, Any], item: core.Due) -> None:
        meta = job.get("metadata") or {}
        lock = self.job_locks.setdefault(str(meta.get("uid")), asyncio.Lock())
        event, key = item.transition.event, item.delivery
        try:
            secret = await self.secret(hook)
        except LookupError:
            return  # the hook's status says SecretMissing; the transition stays due
        webhook = hook.spec.webhook

        async def attempt(n: int) -> None:
            if self.stopped(hook):
                raise _Done  # deleted or suspended meanwhile: no more attempts
            async with lock:
                if not await self.record(job, key, hook, event, phase="delivering", attempts=n):
                    raise _Done

        def body(n: int) -> bytes:
            data = core.payload(hook.name, job, item.transition, key, n, self.rt.clock())
            return render(data, webhook.format, core.slack_text(job, item.transition))

        try:
            outcome = await delivery.deliver(
                webhook.url,
                body,
                key=key,
                secret=secret,
                timeout=float(webhook.timeout_seconds),
                attempts=core.attempts_allowed(hook),
                backoff=core.backoff_seconds(hook),
                max_backoff=MAX_BACKOFF_SECONDS,
                event=event,
                user_agent=HOOK_USER_AGENT,
                extra_headers=webhook.headers,
                guard=self.guard,
                first_attempt=max(item.attempts, 1),
                on_attempt=attempt,
            )
        except _Done:
            return
        final = "delivered" if outcome.delivered else ("refused" if outcome.refused else "failed")
        async with lock:
            await self.record(job, key, hook, event, phase=final, attempts=outcome.attempts)
        self.finished[key] = str(meta.get("uid"))
        await self.count(hook, outcome)
        where = f"{meta.get('namespace')}/{meta.get('name')}"
        if outcome.delivered:
            log.info("hook %s: %s %s delivered (%s)", hook.name, where, event, key)
        else:
            log.warning("hook %s: %s %s not delivered: %s", hook.name, where, event, outcome.error)
            self.rt.post_event(
                {**hook.model_dump(by_alias=True, mode="json", exclude_none=True)},
                JobEvent("Warning", "DeliveryFailed", f"{where} {event}: {outcome.error}"[:1024]),
            )

    async def count(self, hook: GryviaJobHook, outcome: delivery.Outcome) -> None:
        """Add the outcome to the hook's deliveries / failures, lastDelivery, lastError."""
        key = (hook.namespace, hook.name)
        async with self.hook_locks.setdefault(key, asyncio.Lock()):
            try:
                body = await self.rt.api.get("GryviaJobHook", hook.name, hook.namespace)
            except NotFound:
                return
            status = body.get("status") or {}
            if outcome.delivered:
                patch: dict[str, Any] = {
                    "deliveries": int(status.get("deliveries") or 0) + 1,
                    "lastDelivery": timestamp(self.rt.clock()),
                }
            else:
                patch = {
                    "failures": int(status.get("failures") or 0) + 1,
                    "lastError": outcome.error[:1024],
                }
            await self.rt.api.patch(
                "GryviaJobHook", hook.name, {"status": patch}, hook.namespace, subresource="status"
            )


def build(rt: Runtime) -> JobHooks | None:
    """The controller when `--enable-job-hooks` is set, else None."""
    config = rt.config
    if not config.job_hooks:
        return None
    return JobHooks(rt, config.job_hook_allowed_cidrs, config.job_hook_workers)


class _Done(Exception):
    """The transition needs no more attempts (recorded final, or the job is gone)."""
