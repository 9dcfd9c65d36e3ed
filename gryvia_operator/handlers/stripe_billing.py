"""The Stripe push (opt-in `--stripe`, chart `billing.stripe.enabled`): every Finalized
GryviaInvoice not pushed yet goes to Stripe once, by the calls `reconcile.stripe_invoice`
builds and `controller.stripeapi` sends.

An index holds every GryviaInvoice (few: one per tenant and month); a loop (every
`PASS_SECONDS`, at once when an invoice changes) pushes those `needs_push` says are due:

1. the tenant's customer: the one an earlier push of the tenant recorded, else the one
   Stripe's search finds by metadata, else a new one (idempotency key per tenant);
2. the Stripe invoice: the one recorded in `status.stripe.invoiceId`, else one found by its
   metadata, else a new draft; its id is written into status before anything else;
3. one invoice item per line, leaving out those already on it (a resumed push);
4. Stripe's finalize (skipped when a resumed push finds it finalized already), then
   `status.stripe.pushedAt`.

A pushed invoice (`pushedAt` set) is never sent again, so a second reconcile makes no Stripe
call. A failed push is retried with back-off (10 s doubling to 10 min), with the same
idempotency keys. One pusher per operator process; with leader election only the leader's
runs. The `invoice.paid` events are `controller.stripehook`'s, on the metrics server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

import kopf

from gryvia_operator.api.names import GROUP, VERSION
from gryvia_operator.controller.kubeapi import KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.stripeapi import StripeCallError, StripeGateway
from gryvia_operator.reconcile.stripe_invoice import (
    InvoiceFacts,
    customer_call,
    finalize_call,
    invoice_call,
    item_calls,
    line_minor_units,
    needs_push,
    push_status,
)

log = logging.getLogger("gryvia.operator.stripe")
INVOICES = "gryvia_stripe_invoices"
PASS_SECONDS = 10.0
MAX_BACKOFF = 600.0


class StripePusher:
    """The invoice index (attached at startup), the kick, what this process pushed already
    (until the watch shows it) and each failing invoice's back-off."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.kick = asyncio.Event()
        self.index: Mapping[Any, Any] = {}
        self.recorded: dict[str, dict[str, Any]] = {}
        """status.stripe this process wrote, by invoice name (ahead of the watch)."""
        self.backoff: dict[str, tuple[float, float]] = {}
        """Invoice name -> (next try, monotonic seconds; current delay)."""

    def invoices(self) -> list[dict[str, Any]]:
        """Every indexed invoice, with what this process recorded since merged in."""
        out = []
        for key in list(self.index):
            for obj in self.index[key]:
                name = str(obj["metadata"]["name"])
                mine = self.recorded.get(name)
                if mine is not None:
                    seen = (obj.get("status") or {}).get("stripe") or {}
                    if all(seen.get(k) == v for k, v in mine.items()):
                        self.recorded.pop(name)  # the watch caught up
                    else:
                        obj = {**obj, "status": {"stripe": {**seen, **mine}}}
                out.append(obj)
        return out

    async def loop(self) -> None:
        """Push due invoices until cancelled."""
        while True:
            self.kick.clear()
            try:
                await self.run_pass()
            except Exception:  # a bug in one pass must not end the pushes for good
                log.exception("stripe pass failed; retrying in %.0f s", PASS_SECONDS)
            self.rt.metrics.stripe_passes.inc()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.kick.wait(), PASS_SECONDS)

    async def run_pass(self) -> None:
        """One pass: push every due invoice whose back-off has passed."""
        gateway = self.rt.stripe
        if gateway is None:
            return
        invoices = self.invoices()
        customers = {
            str(i["spec"].get("tenant")): str(i["status"]["stripe"]["customerId"])
            for i in invoices
            if ((i.get("status") or {}).get("stripe") or {}).get("customerId")
        }
        now = asyncio.get_running_loop().time()
        for obj in invoices:
            name = str(obj["metadata"]["name"])
            if not needs_push(obj) or self.backoff.get(name, (0.0, 0.0))[0] > now:
                continue
            try:
                await self.push(gateway, obj, customers)
                self.backoff.pop(name, None)
            except (StripeCallError, KubeError, ValueError) as exc:
                delay = min(MAX_BACKOFF, max(PASS_SECONDS, 2 * self.backoff.get(name, (0, 0))[1]))
                self.backoff[name] = (now + delay, delay)
                log.warning("stripe: push of %s failed, retrying in %.0f s: %s", name, delay, exc)

    async def push(
        self, gateway: StripeGateway, obj: Mapping[str, Any], customers: dict[str, str]
    ) -> None:
        """Push one invoice (the numbered steps of the module's docstring)."""
        facts = InvoiceFacts.of(obj)
        line_minor_units(facts)  # every amount sendable: raises before the first call
        customer = str(facts.stripe.get("customerId") or customers.get(facts.tenant) or "")
        if not customer:
            customer = await gateway.find_customer(facts.tenant) or await gateway.create(
                customer_call(facts.tenant)
            )
            customers[facts.tenant] = customer
        invoice_id = str(facts.stripe.get("invoiceId") or "")
        resumed = bool(invoice_id)
        if not invoice_id:
            found = await gateway.find_invoice(facts.name)
            resumed = found is not None
            invoice_id = found or await gateway.create(
                invoice_call(facts, customer, gateway.days_until_due)
            )
            await self.record(facts.name, push_status(customer, invoice_id))
        present = await gateway.line_keys(invoice_id) if resumed else set()
        for call in item_calls(facts, customer, invoice_id, present):
            await gateway.create(call)
        if not resumed or await gateway.invoice_state(invoice_id) == "draft":
            await gateway.finalize(invoice_id, finalize_call(facts))
        await self.record(facts.name, push_status(customer, invoice_id, self.rt.clock()))
        log.info(
            "stripe: pushed %s (%s) as %s to customer %s: %d line(s), total %s %s",
            facts.name,
            facts.number,
            invoice_id,
            customer,
            len(facts.lines),
            facts.total,
            facts.currency,
        )

    async def record(self, name: str, patch: dict[str, Any]) -> None:
        """Write `status.stripe` of invoice `name` (and remember it until the watch shows it)."""
        try:
            await self.rt.api.patch("GryviaInvoice", name, patch, subresource="status")
        except NotFound:
            return
        self.rt.metrics.writes.labels(kind="GryviaInvoice", verb="patch-status").inc()
        self.recorded[name] = dict(patch["status"]["stripe"])


def register(registry: kopf.OperatorRegistry, rt: Runtime, pusher: StripePusher) -> None:
    """Index every GryviaInvoice; kick the pusher when one changes."""

    @kopf.index(GROUP, VERSION, "gryviainvoices", id=INVOICES, registry=registry)
    async def invoice_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each invoice's name, spec and status (the push reads nothing else)."""
        pusher.kick.set()
        return {
            name: {
                "metadata": {"name": name},
                "spec": dict(body.get("spec") or {}),
                "status": dict(body.get("status") or {}),
            }
        }

    @kopf.on.startup(registry=registry)
    async def attach(**kwargs: Any) -> None:
        if INVOICES in kwargs:
            pusher.index = kwargs[INVOICES]
