"""The operator's one seam to Stripe (opt-in `--stripe`): the few calls a push makes, sent
with the official `stripe` package, and the signature check of Stripe's webhook events.

The package's calls block, so each runs in a thread. Its errors become `StripeCallError`
(naming the step and Stripe's message); a bad webhook signature becomes
`StripeSignatureError`. Every call is counted in
`gryvia_operator_stripe_requests_total{step,result}` and every create is logged, so what the
operator asked Stripe for can be read from its log and its metrics.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from gryvia_operator.reconcile.stripe_invoice import (
    META_INVOICE,
    META_LINE,
    META_TENANT,
    StripeCall,
    with_metadata,
)

log = logging.getLogger("gryvia.operator.stripe")
WEBHOOK_PATH = "/stripe/webhook"
"""Where the operator's metrics server takes Stripe's webhook events (`--stripe`)."""
SIGNATURE_TOLERANCE = 300
"""Seconds an event's signed timestamp may lie from now: the five minutes Stripe's libraries
use by default against replayed events (Stripe docs, "Check the webhook signatures":
https://docs.stripe.com/webhooks#verify-events)."""
Count = Callable[[str, str], None]


class StripeCallError(Exception):
    """A Stripe call failed: `step` names it, the message gives Stripe's reason."""

    def __init__(self, step: str, message: str) -> None:
        super().__init__(f"Stripe {step} failed: {message}")
        self.step = step


class StripeSignatureError(Exception):
    """A webhook event whose `Stripe-Signature` does not verify (or whose body is no JSON)."""


def verify_event(
    payload: bytes, header: str | None, secret: str, tolerance: int = SIGNATURE_TOLERANCE
) -> dict[str, Any]:
    """The event of a webhook request, once its signature is verified by the official
    library (`stripe.WebhookSignature.verify_header`, the check `stripe.Webhook.
    construct_event` makes: the header's `t=<unix time>,v1=<hex
    HMAC-SHA256 of "<t>.<payload>" under the endpoint's signing secret>`, within `tolerance`
    seconds of now; Stripe docs, "Verify webhook signatures with official libraries").

    Raises StripeSignatureError naming the reason: no header, no matching signature, a
    timestamp outside the tolerance, or a body that is no JSON object.
    """
    import stripe

    try:
        # The signature first (the library's own check), then the body: construct_event
        # would parse the body before checking, and fails on a JSON list.
        stripe.WebhookSignature.verify_header(payload, header, secret, tolerance)
    except stripe.SignatureVerificationError as exc:
        reason = str(exc.user_message or exc).split(". ")[0]
        raise StripeSignatureError(reason) from None
    try:
        event = json.loads(payload)
    except ValueError as exc:
        raise StripeSignatureError(f"the body is no JSON event: {exc}") from None
    if not isinstance(event, dict):
        raise StripeSignatureError("the body is no JSON object")
    return event


class StripeGateway:
    """The Stripe calls of a push, on one `stripe.StripeClient` (`api_base`: Stripe's API,
    or stripe-mock's address in tests). `count(step, result)` is told about every call."""

    def __init__(
        self,
        api_key: str,
        webhook_secret: str,
        *,
        api_base: str = "https://api.stripe.com",
        days_until_due: int = 30,
        count: Count = lambda step, result: None,
    ) -> None:
        import stripe

        self.webhook_secret = webhook_secret
        self.days_until_due = days_until_due
        self._count = count
        # The package retries network errors and 409/429/5xx itself, with the same
        # idempotency key (https://docs.stripe.com/error-low-level#idempotency).
        self._client = stripe.StripeClient(
            api_key, base_addresses={"api": api_base.rstrip("/")}, max_network_retries=2
        )

    async def _call(self, step: str, fn: Callable[[], Any]) -> Any:
        import stripe

        try:
            result = await asyncio.to_thread(fn)
        except stripe.StripeError as exc:
            self._count(step, "error")
            raise StripeCallError(step, str(exc.user_message or exc)) from None
        self._count(step, "ok")
        return result

    async def find_customer(self, tenant: str) -> str | None:
        """The id of a customer whose metadata `gryvia_tenant` is `tenant` (Stripe's search),
        else None."""
        query = f"metadata['{META_TENANT}']:'{tenant}'"
        found = await self._call(
            "customer-search",
            lambda: self._client.v1.customers.search(params={"query": query, "limit": 10}),
        )
        return with_metadata([c.to_dict() for c in found.data], META_TENANT, tenant)

    async def find_invoice(self, name: str) -> str | None:
        """The id of a Stripe invoice whose metadata `gryvia_invoice` is `name`, else None."""
        query = f"metadata['{META_INVOICE}']:'{name}'"
        found = await self._call(
            "invoice-search",
            lambda: self._client.v1.invoices.search(params={"query": query, "limit": 10}),
        )
        return with_metadata([i.to_dict() for i in found.data], META_INVOICE, name)

    async def invoice_state(self, invoice_id: str) -> str:
        """Stripe's status of an invoice: `draft`, `open`, `paid`, `uncollectible`, `void`."""
        inv = await self._call("invoice-get", lambda: self._client.v1.invoices.retrieve(invoice_id))
        return str(inv.status)

    async def line_keys(self, invoice_id: str) -> set[str]:
        """The `gryvia_line` metadata of the items already on a Stripe invoice."""
        lines = await self._call(
            "lines-list",
            lambda: self._client.v1.invoices.line_items.list(invoice_id, params={"limit": 100}),
        )
        keys = set()
        for line in lines.auto_paging_iter():
            value = (line.to_dict().get("metadata") or {}).get(META_LINE)
            if value:
                keys.add(str(value))
        return keys

    async def create(self, call: StripeCall) -> str:
        """Send a create `call` (customer, invoice or item) with its idempotency key; the new
        (or, for a replayed key, the first) object's id."""
        service: Any = {
            "customer": self._client.v1.customers,
            "invoice": self._client.v1.invoices,
            "item": self._client.v1.invoice_items,
        }[call.step]
        options: Any = {"idempotency_key": call.key}
        created = await self._call(
            call.step, lambda: service.create(params=call.params, options=options)
        )
        log.info("stripe: %s %s created (idempotency key %s)", call.step, created.id, call.key)
        return str(created.id)

    async def finalize(self, invoice_id: str, call: StripeCall) -> str:
        """Finalize a draft Stripe invoice; its new status (`open`)."""
        options: Any = {"idempotency_key": call.key}
        done = await self._call(
            call.step,
            lambda: self._client.v1.invoices.finalize_invoice(invoice_id, options=options),
        )
        log.info("stripe: invoice %s finalized (idempotency key %s)", invoice_id, call.key)
        return str(done.status)
