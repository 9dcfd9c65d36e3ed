"""Stripe's webhook events on the operator's metrics server (`POST /stripe/webhook`, with
`--stripe`): verify the signature, then apply `reconcile.stripe_invoice.paid_decision`.

Every replica serves it (a standby too): the GryviaInvoices are read from and patched on the
API server directly, not through the leader's indexes. Answers, as Stripe's docs ask
(https://docs.stripe.com/webhooks#handle-events): 200 once the event is handled or
deliberately ignored (an unknown invoice, another event type), 400 for a bad signature
(nothing changes; Stripe shows the failure on the endpoint), 500 when the API server could
not be written (Stripe retries the event later).
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web

from gryvia_operator.controller.kubeapi import KubeError
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.stripeapi import (
    WEBHOOK_PATH,
    StripeGateway,
    StripeSignatureError,
    verify_event,
)
from gryvia_operator.reconcile.stripe_invoice import paid_decision

log = logging.getLogger("gryvia.operator.stripe")
MAX_BODY = 1 << 20
"""Largest event body taken (1 MiB; Stripe's events are a few KiB)."""


def stripe_routes(rt: Runtime, gateway: StripeGateway) -> list[web.RouteDef]:
    """The webhook route for the metrics server's application."""

    async def webhook(request: web.Request) -> web.Response:
        payload = await request.content.read(MAX_BODY + 1)
        if len(payload) > MAX_BODY:
            return web.json_response({"error": "event body over 1 MiB"}, status=413)
        try:
            event = verify_event(
                payload, request.headers.get("Stripe-Signature"), gateway.webhook_secret
            )
        except StripeSignatureError as exc:
            rt.metrics.stripe_events.labels(type="unverified", outcome="bad-signature").inc()
            log.warning(
                "stripe webhook refused (HTTP 400): bad signature: %s; nothing changed "
                "(is the endpoint's signing secret GRYVIA_OPERATOR_STRIPE_WEBHOOK_SECRET?)",
                exc,
            )
            return web.json_response({"error": f"bad signature: {exc}"}, status=400)
        return await handle(rt, event)

    return [web.post(WEBHOOK_PATH, webhook)]


async def handle(rt: Runtime, event: dict[str, Any]) -> web.Response:
    """Apply one verified event; the answer for Stripe."""
    kind = str(event.get("type") or "")
    try:
        invoices = await rt.api.list("GryviaInvoice")
        decision = paid_decision(event, invoices, rt.clock())
        if decision.patch is not None and decision.name is not None:
            current = next(
                i for i in invoices if (i.get("metadata") or {}).get("name") == decision.name
            )
            version = (current.get("metadata") or {}).get("resourceVersion")
            body = {"metadata": {"resourceVersion": version}, "spec": decision.patch}
            await rt.api.patch("GryviaInvoice", decision.name, body)
            rt.metrics.writes.labels(kind="GryviaInvoice", verb="patch").inc()
    except KubeError as exc:
        rt.metrics.stripe_events.labels(type=kind, outcome="error").inc()
        log.warning(
            "stripe event %s not applied (HTTP 500, Stripe retries): %s", event.get("id"), exc
        )
        return web.json_response({"error": str(exc)}, status=500)
    rt.metrics.stripe_events.labels(type=kind, outcome=decision.outcome).inc()
    level = logging.WARNING if decision.outcome == "unknown" else logging.INFO
    log.log(level, "stripe event %s: %s", event.get("id"), decision.message)
    return web.json_response({"received": True, "outcome": decision.outcome})
