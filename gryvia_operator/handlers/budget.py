"""GryviaBudget controller: status every BUDGET_SECONDS (written only when it changed), and
each threshold crossing delivered once as a Kubernetes Event and a signed POST.

Exactly once across restarts: a crossing is first recorded in `status.alerts` (key
`<budget uid>/<period start>/<threshold>`, `event: false`, `delivered: false`); only after that
write succeeded is the Event created, under a name derived from the key (a second create after
a restart finds it taken: AlreadyExists, nothing posted twice), then the POST is made with the
key in `X-Gryvia-Delivery`, and the record is marked delivered. A crash before the record is
written loses nothing (the crossing is still due on the next pass); a crash after it resumes
the record's missing steps. The one window left is a crash between the receiver's 2xx answer
and the `delivered: true` write: the POST is then repeated once with the same key, which the
receiver can drop (HTTP offers no more than that).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import hashlib
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION, GryviaBudget
from gryvia_operator.api.budget import GryviaBudgetStatus
from gryvia_operator.api.budgetscope import Scope, resolve_scope
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.controller import delivery, policies
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError
from gryvia_operator.controller.passes import run_passes
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import BUDGETS, USAGE
from gryvia_operator.reconcile.budget_status import alert_record, comparable, compute
from gryvia_operator.reconcile.budgets import UsageLine
from gryvia_operator.reconcile.quotas import job_view

log = logging.getLogger("gryvia.operator.budget")
PLURAL = "gryviabudgets"
BUDGET_SECONDS = 5.0
FORECAST_REFRESH_SECONDS = 60.0
"""A status whose only change is the forecast (it moves with the clock) is rewritten at most
this often."""
MAX_ATTEMPTS = 10
EVENT_NAMESPACE = "default"
"""Events about cluster-scoped objects live in `default` (as kubectl describe looks)."""


def quota_teams(rt: Runtime) -> dict[str, list[str]]:
    """team -> namespaces of its GryviaQuotas."""
    out: dict[str, list[str]] = {}
    for quota in policies.quotas(rt):
        out.setdefault(quota.spec.team, []).extend(quota.spec.namespaces)
    return out


def event_body(budget: Mapping[str, Any], record: Mapping[str, Any], now: str) -> dict[str, Any]:
    """The Event of one crossing, named after its key (so it is created once)."""
    key = str(record["key"])
    meta = budget.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"gryvia-budget-{hashlib.sha256(key.encode()).hexdigest()[:24]}",
            "namespace": EVENT_NAMESPACE,
        },
        "involvedObject": {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "GryviaBudget",
            "name": meta.get("name"),
            "uid": meta.get("uid"),
        },
        "type": "Warning",
        "reason": "BudgetThreshold",
        "message": str(record.get("message") or ""),
        "source": {"component": "gryvia-operator"},
        "reportingComponent": "gryvia-operator",
        "reportingInstance": "gryvia-operator",
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }


def alert_payload(
    budget: GryviaBudget, status: Mapping[str, Any], record: Mapping[str, Any]
) -> dict[str, Any]:
    """The JSON body of one alert POST (format gryvia)."""
    return {
        "kind": "BudgetAlert",
        "key": record["key"],
        "budget": budget.name,
        "scope": budget.spec.scope.model_dump(mode="json"),
        "threshold": record["threshold"],
        "message": record["message"],
        "firedAt": record["timestamp"],
        "period": status.get("currentPeriod"),
        "usage": status.get("usage"),
        "utilization": status.get("utilization"),
        "state": status.get("state"),
        "forecast": status.get("forecast"),
    }


class Budgets:
    """The loop's state: what was last written per budget, and delivery back-off."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.kick = asyncio.Event()
        self.written: dict[str, tuple[dict[str, Any], Any, float]] = {}
        """name -> (status written, its comparable form, monotonic time)."""
        self.seen: dict[str, tuple[str, int, int]] = {}
        """name -> (state, concurrent jobs, GPUs) last acted on (requeue on change)."""
        self.next_try: dict[str, float] = {}
        """alert key -> monotonic time of the next POST attempt."""

    async def loop(self) -> None:
        """Recompute every budget every BUDGET_SECONDS, or at once when kicked."""
        await run_passes(self.rt, "budget", self.kick, self.update, BUDGET_SECONDS, log)

    def _current(self, body: Mapping[str, Any]) -> GryviaBudget | None:
        """The budget with the newest status known: ours if the watch has not caught up."""
        found = parse_valid(GryviaBudget, [body])
        if not found:
            return None
        budget = found[0]
        mine = self.written.get(budget.name)
        if mine is not None:
            status = GryviaBudgetStatus.model_validate(mine[0])
            budget = budget.model_copy(update={"status": status})
        return budget

    async def update(self) -> None:
        """One pass over all budgets."""
        rt = self.rt
        now = rt.clock()
        lines = [line for line in map(UsageLine.of_raw, rt.indices.all_values(USAGE)) if line]
        teams, tenants = quota_teams(rt), list(policies.tenants(rt))
        jobs = [job_view(b) for b in policies.known_jobs(rt)]
        bodies = rt.indices.all_values(BUDGETS)
        names = set()
        for body in bodies:
            budget = self._current(body)
            if budget is None:
                continue
            names.add(budget.name)
            scope = resolve_scope(budget, teams, tenants)
            status, crossings = compute(budget, scope, lines, jobs, now)
            first = period_start(status)
            status["alerts"].extend(alert_record(c, first, now) for c in crossings)
            await self.write(budget, body, status)
            self.requeue_on_change(budget.name, scope, status)
            await self.send(budget, body, status)
        for gone in set(self.written) - names:
            self.written.pop(gone, None)
            self.seen.pop(gone, None)

    def forget(self, body: Mapping[str, Any]) -> None:
        """A budget was deleted: drop what was written for it, and give the jobs it held in its
        scope another gate decision now (else they wait for an unrelated event)."""
        name = str((body.get("metadata") or {}).get("name"))
        self.written.pop(name, None)
        self.seen.pop(name, None)
        for budget in parse_valid(GryviaBudget, [body]):
            scope = resolve_scope(budget, quota_teams(self.rt), list(policies.tenants(self.rt)))
            policies.requeue_held(self.rt, scope.namespaces)

    def requeue_on_change(self, name: str, scope: Scope, status: Mapping[str, Any]) -> None:
        """Held jobs in scope get another gate decision when the state or concurrency moved."""
        usage = status.get("usage") or {}
        now = (
            str(status.get("state")),
            int(usage.get("currentConcurrentJobs") or 0),
            int(usage.get("currentConcurrentGPUs") or 0),
        )
        if self.seen.get(name) != now:
            self.seen[name] = now
            policies.requeue_held(self.rt, scope.namespaces)

    async def write(
        self,
        budget: GryviaBudget,
        body: Mapping[str, Any],
        status: dict[str, Any],
        *,
        force: bool = False,
    ) -> None:
        """Write `status` when it differs from the last write (the forecast alone: at most
        every FORECAST_REFRESH_SECONDS). Keys that were dropped are removed (merge patch)."""
        key = _key({k: v for k, v in status.items() if k != "forecast"})
        previous = self.written.get(budget.name)
        stored = dict(body.get("status") or {}) if previous is None else previous[0]
        if previous is not None and not force:
            same = previous[1] == key
            fresh = time.monotonic() - previous[2] < FORECAST_REFRESH_SECONDS
            if same and (fresh or previous[0].get("forecast") == status.get("forecast")):
                return
        elif previous is None and _key(stored) == _key(status):
            self.written[budget.name] = (status, key, time.monotonic())
            return
        stamped = {**status, "lastUpdated": status_time(self.rt)}
        patch: dict[str, Any] = {k: None for k in stored if k not in stamped}
        patch.update(stamped)
        await self.rt.api.patch(
            "GryviaBudget", budget.name, {"status": patch}, subresource="status"
        )
        self.rt.metrics.writes.labels(kind="GryviaBudget", verb="status").inc()
        self.written[budget.name] = (status, key, time.monotonic())

    async def send(
        self, budget: GryviaBudget, body: Mapping[str, Any], status: dict[str, Any]
    ) -> None:
        """Create the Event and make the POST of every recorded crossing still missing them;
        record the outcome."""
        changed = False
        for record in status["alerts"]:
            if not record.get("event"):
                with contextlib.suppress(AlreadyExists):  # AlreadyExists: posted before a restart
                    await self.rt.api.create(event_body(body, record, status_time(self.rt)))
                record["event"] = True
                changed = True
            if not record.get("delivered") and await self.post(budget, status, record):
                changed = True
        if changed:
            await self.write(budget, body, status, force=True)

    async def post(
        self, budget: GryviaBudget, status: Mapping[str, Any], record: dict[str, Any]
    ) -> bool:
        """One POST attempt for `record` when due; True when the record changed."""
        receiver = budget.spec.receiver
        if receiver is None:
            record["delivered"] = True  # nothing to deliver to: the Event is the alert
            return True
        attempts = int(record.get("attempts") or 0)
        key = str(record["key"])
        if attempts >= MAX_ATTEMPTS or time.monotonic() < self.next_try.get(key, 0.0):
            return False
        try:
            secret = await self.secret(budget)
        except (KubeError, ValueError) as exc:
            record["lastError"] = f"spec.receiver.secretRef: {exc}"[:1024]
            self.next_try[key] = time.monotonic() + delivery.MAX_BACKOFF_SECONDS
            log.warning("budget %s alert %s: %s", budget.name, key, record["lastError"])
            return True
        payload = alert_payload(budget, status, record)
        body = delivery.render(payload, receiver.format, str(record["message"]))
        outcome = await delivery.deliver(
            receiver.url, body, key=key, secret=secret, timeout=receiver.timeout_seconds, attempts=1
        )
        record["attempts"] = attempts + 1
        if outcome.delivered:
            record["delivered"] = True
            record.pop("lastError", None)
            self.next_try.pop(key, None)
        else:
            record["lastError"] = outcome.error[:1024]
            delay = min(2.0**attempts, delivery.MAX_BACKOFF_SECONDS)
            self.next_try[key] = time.monotonic() + delay
            log.warning(
                "budget %s alert %s: %s (retry in %.0f s)", budget.name, key, outcome.error, delay
            )
        return True

    async def secret(self, budget: GryviaBudget) -> bytes | None:
        """The receiver's HMAC key (None when no secretRef). Raises KubeError when the Secret
        cannot be read and ValueError when it lacks the key: the alert is then retried rather
        than sent unsigned."""
        receiver = budget.spec.receiver
        ref = receiver.secret_ref if receiver else None
        if ref is None:
            return None
        found = await self.rt.api.get("Secret", ref.name, ref.namespace)
        data = (found.get("data") or {}).get(ref.key)
        if not data:
            raise ValueError(f"Secret {ref.namespace}/{ref.name} has no key {ref.key!r}")
        return base64.b64decode(data)


def period_start(status: Mapping[str, Any]) -> dt.date:
    """The period start of a computed status."""
    return dt.date.fromisoformat(status["currentPeriod"]["startDate"])


def _key(status: Mapping[str, Any]) -> str:
    """A frozen comparable form of a status (records are mutated after a write)."""
    return json.dumps(comparable(status), sort_keys=True, default=str)


def status_time(rt: Runtime) -> str:
    """Now, RFC 3339 UTC seconds."""
    return rt.clock().strftime("%Y-%m-%dT%H:%M:%SZ")


def register(registry: kopf.OperatorRegistry, rt: Runtime, budgets: Budgets) -> None:
    """Register the budget index and recompute at once when a budget changes."""

    @kopf.index(GROUP, VERSION, PLURAL, id=BUDGETS, registry=registry)
    async def budget_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each budget's spec and status."""
        meta = body.get("metadata") or {}
        return {
            name: {
                "apiVersion": body.get("apiVersion"),
                "kind": body.get("kind"),
                "metadata": {
                    k: meta.get(k) for k in ("name", "uid", "generation", "resourceVersion")
                },
                "spec": dict(body.get("spec") or {}),
                "status": dict(body.get("status") or {}),
            }
        }

    @kopf.on.event(GROUP, VERSION, PLURAL, id="gryvia_budget_events", registry=registry)
    async def budget_event(type: str, body: kopf.Body, **_: Any) -> None:
        """A budget appeared or changed: recompute now; a deleted one releases its holds."""
        if type == "DELETED":
            budgets.forget(body)
            return
        budgets.kick.set()
