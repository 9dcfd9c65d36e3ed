"""GryviaBudget on the kind controller (always on): a budget observes the usage records, quotas,
tenants and jobs in the indexes (read once per pass, `before_pass`) and its scope;
`reconcile.budget_status.reconcile_budget` gives its status (passes every BUDGET_SECONDS, or at
once when a budget changes; written only when it changed, the forecast alone at most every
minute), and each threshold crossing is delivered once as a Kubernetes Event and a signed POST
(`after`, once the status recording it was written).

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
import copy
import hashlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION, GryviaBudget
from gryvia_operator.api.budget import BUDGET_KIND
from gryvia_operator.api.budgetscope import Scope, resolve_scope
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.controller import delivery, policies
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import BUDGETS, USAGE
from gryvia_operator.reconcile.budget import UsageLine
from gryvia_operator.reconcile.budget_status import reconcile_budget
from gryvia_operator.reconcile.quotas import JobView, job_view

log = logging.getLogger("gryvia.operator.budget")
PLURAL = "gryviabudgets"
BUDGET_SECONDS = 5.0
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


@dataclass(frozen=True)
class Inputs:
    """What every budget reads in one pass: usage lines, quota teams, tenants, jobs."""

    lines: list[UsageLine]
    teams: dict[str, list[str]]
    tenants: list[str]
    jobs: list[JobView]


@dataclass(frozen=True)
class Observed:
    """What one budget's reconcile reads: the pass's inputs and its scope."""

    inputs: Inputs
    scope: Scope


class BudgetSpec(KindSpec[GryviaBudget, Observed]):
    """A budget observes the pass's usage, quotas, tenants and jobs; its reconcile is
    `reconcile_budget`; `after` gives held jobs in scope another gate decision when its state
    or concurrency moved, and sends the crossings its written status records."""

    info = BUDGET_KIND
    controller = "budget"
    index_id = BUDGETS
    children = ()
    idle_seconds = BUDGET_SECONDS

    def __init__(self) -> None:
        self.inputs = Inputs([], {}, [], [])
        self.seen: dict[str, tuple[str, int, int]] = {}
        """name -> (state, concurrent jobs, GPUs) last acted on (requeue on change)."""
        self.next_try: dict[str, float] = {}
        """alert key -> monotonic time of the next POST attempt."""

    def watch(self, registry: kopf.OperatorRegistry, rt: Runtime, kick: asyncio.Event) -> None:
        """A deleted budget releases its holds at once."""

        @kopf.on.event(GROUP, VERSION, PLURAL, id="gryvia_budget_deletions", registry=registry)
        async def budget_deleted(type: str, body: kopf.Body, **_: Any) -> None:
            """A budget went: the jobs it held get another gate decision now."""
            if type == "DELETED":
                self.forget(rt, body)

    async def before_pass(self, rt: Runtime) -> None:
        """Read the usage lines, quota teams, tenants and jobs once for the pass."""
        lines = [line for line in map(UsageLine.of_raw, rt.indices.all_values(USAGE)) if line]
        jobs = [job_view(b) for b in policies.known_jobs(rt)]
        self.inputs = Inputs(lines, quota_teams(rt), list(policies.tenants(rt)), jobs)
        live = {str((b.get("metadata") or {}).get("name")) for b in rt.indices.all_values(BUDGETS)}
        for gone in set(self.seen) - live:
            self.seen.pop(gone, None)

    async def observe(self, rt: Runtime, obj: GryviaBudget) -> Observed:
        """The pass's inputs and the budget's scope."""
        inputs = self.inputs
        return Observed(inputs, resolve_scope(obj, inputs.teams, inputs.tenants))

    def reconcile(self, obj: GryviaBudget, observed: Observed, now: datetime) -> Outcome:
        """The status, with the due crossings recorded in it."""
        inputs = observed.inputs
        status = reconcile_budget(obj, observed.scope, inputs.lines, inputs.jobs, now)
        return Outcome(status=status)

    async def after(self, rt: Runtime, obj: GryviaBudget, outcome: Outcome) -> None:
        """Requeue held jobs on a change; then the Event and POST of every recorded crossing
        still missing them, the records' new state going into `outcome.status` (written
        again by the controller)."""
        scope = resolve_scope(obj, self.inputs.teams, self.inputs.tenants)
        self.requeue_on_change(rt, obj.name, scope, outcome.status)
        status = copy.deepcopy(outcome.status)  # the written status stays as written
        if await self.send(rt, obj, status):
            outcome.status = {**status, "lastUpdated": status_time(rt)}

    def forget(self, rt: Runtime, body: Mapping[str, Any]) -> None:
        """A budget was deleted: give the jobs it held in its scope another gate decision now
        (else they wait for an unrelated event)."""
        self.seen.pop(str((body.get("metadata") or {}).get("name")), None)
        for budget in parse_valid(GryviaBudget, [body]):
            scope = resolve_scope(budget, quota_teams(rt), list(policies.tenants(rt)))
            policies.requeue_held(rt, scope.namespaces)

    def requeue_on_change(
        self, rt: Runtime, name: str, scope: Scope, status: Mapping[str, Any]
    ) -> None:
        """Held jobs in scope get another gate decision when the state or concurrency moved."""
        usage = status.get("usage") or {}
        now = (
            str(status.get("state")),
            int(usage.get("currentConcurrentJobs") or 0),
            int(usage.get("currentConcurrentGPUs") or 0),
        )
        if self.seen.get(name) != now:
            self.seen[name] = now
            policies.requeue_held(rt, scope.namespaces)

    async def send(self, rt: Runtime, budget: GryviaBudget, status: dict[str, Any]) -> bool:
        """Create the Event and make the POST of every crossing `status` records still missing
        them, recording the outcome in `status`; True when a record changed."""
        body = {"metadata": {"name": budget.name, "uid": budget.metadata.uid}}
        changed = False
        for record in status.get("alerts") or []:
            if not record.get("event"):
                with contextlib.suppress(AlreadyExists):  # AlreadyExists: posted before a restart
                    await rt.api.create(event_body(body, record, status_time(rt)))
                record["event"] = True
                changed = True
            if not record.get("delivered") and await self.post(rt, budget, status, record):
                changed = True
        return changed

    async def post(
        self, rt: Runtime, budget: GryviaBudget, status: Mapping[str, Any], record: dict[str, Any]
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
            secret = await self.secret(rt, budget)
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

    async def secret(self, rt: Runtime, budget: GryviaBudget) -> bytes | None:
        """The receiver's HMAC key (None when no secretRef). Raises KubeError when the Secret
        cannot be read and ValueError when it lacks the key: the alert is then retried rather
        than sent unsigned."""
        receiver = budget.spec.receiver
        ref = receiver.secret_ref if receiver else None
        if ref is None:
            return None
        found = await rt.api.get("Secret", ref.name, ref.namespace)
        data = (found.get("data") or {}).get(ref.key)
        if not data:
            raise ValueError(f"Secret {ref.namespace}/{ref.name} has no key {ref.key!r}")
        return base64.b64decode(data)


def status_time(rt: Runtime) -> str:
    """Now, RFC 3339 UTC seconds."""
    return rt.clock().strftime("%Y-%m-%dT%H:%M:%SZ")


def controller(rt: Runtime) -> KindController[GryviaBudget, Observed]:
    """The budget controller over `rt`."""
    return KindController(rt, BudgetSpec())
