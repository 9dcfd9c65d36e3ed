"""What the operator asks Stripe for when it pushes a Finalized GryviaInvoice, and what an
`invoice.paid` event does to it: pure (the invoice, what Stripe already holds and the clock
are passed in; `controller.stripeapi` sends the calls, `handlers.stripe_billing` runs them).

A push is: the tenant's customer (found by its metadata `gryvia_tenant`, else created), one
draft Stripe invoice (`send_invoice`, only its own items: `pending_invoice_items_behavior:
exclude`), one invoice item per invoice line (its amount in the currency's smallest unit),
then Stripe's finalize. Every create carries an idempotency key derived from the invoice's
name, revision and step, so a push retried after a crash gets Stripe's first answer back
instead of a second object (Stripe API reference, "Idempotent requests":
https://docs.stripe.com/api/idempotent_requests; keys are kept at least 24 hours). Beyond
those 24 hours the metadata (`gryvia_invoice`, `gryvia_line`) finds what an earlier try made.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from gryvia_operator.api.invoicing import paid_patch

META_TENANT = "gryvia_tenant"
META_INVOICE = "gryvia_invoice"
META_LINE = "gryvia_line"
PAID_EVENT = "invoice.paid"
PAYMENT_METHOD = "stripe"
DEFAULT_DAYS_UNTIL_DUE = 30

ZERO_DECIMAL = frozenset(
    [
        "bif",
        "clp",
        "djf",
        "gnf",
        "jpy",
        "kmf",
        "krw",
        "mga",
        "pyg",
        "rwf",
        "ugx",
        "vnd",
        "vuv",
        "xaf",
        "xof",
        "xpf",
    ]
)
"""Currencies Stripe takes in whole units (Stripe docs, "Zero-decimal currencies":
https://docs.stripe.com/currencies#zero-decimal)."""
THREE_DECIMAL = frozenset(["bhd", "jod", "kwd", "omr", "tnd"])
"""Currencies Stripe takes in thousandths, the last digit 0 (Stripe docs, "Three-decimal
currencies": https://docs.stripe.com/currencies#three-decimal)."""


def minor_units(amount: Decimal | str, currency: str) -> int:
    """`amount` (a Decimal or decimal text such as `39.98`) in `currency`'s smallest unit, as
    Stripe's `amount` fields take it: cents for USD (`39.98` -> 3998), whole units for a
    zero-decimal currency (`1200.00` JPY -> 1200), thousandths for a three-decimal one
    (`1.25` KWD -> 1250). Exact: raises ValueError, naming the amount and the fix, for text
    that is no number, a negative amount, or one finer than the currency's unit (`12.50`
    JPY)."""
    try:
        value = Decimal(amount)
    except InvalidOperation:
        raise ValueError(f"amount {amount!r} is not a decimal number (e.g. 39.98)") from None
    code = currency.lower()
    places = 0 if code in ZERO_DECIMAL else 3 if code in THREE_DECIMAL else 2
    scaled = value.scaleb(places)
    if not value.is_finite() or value < 0 or scaled != scaled.to_integral_value():
        raise ValueError(
            f"amount {amount} {currency.upper()} cannot be sent to Stripe: it must be >= 0 "
            f"and a whole number of {currency.upper()}'s smallest unit (10^-{places}); "
            "invoice currencies with no cents (JPY, KRW, ...) need whole amounts"
        )
    return int(scaled)


def idempotency_key(name: str, revision: int, step: str) -> str:
    """The Stripe `Idempotency-Key` of one step of pushing invoice `name` at `revision`:
    `gryvia/<name>/r<revision>/<step>` (`invoice`, `item-<sequence>`, `finalize`). The same
    invoice always gives the same keys; a voided month's next revision gets new ones. At most
    255 characters, Stripe's limit (invoice names are at most 253 less the suffix)."""
    return f"gryvia/{name}/r{revision}/{step}"[:255]


def customer_key(tenant: str) -> str:
    """The idempotency key of creating `tenant`'s Stripe customer: one customer per tenant
    even when two of its invoices are pushed at once."""
    return f"gryvia/customer/{tenant}"


@dataclass(frozen=True)
class StripeCall:
    """One create call: `step` names it in logs and metrics (`customer`, `invoice`, `item`,
    `finalize`), `params` are Stripe's form parameters, `key` the idempotency key."""

    step: str
    params: dict[str, Any]
    key: str


@dataclass(frozen=True)
class InvoiceFacts:
    """The parts of a GryviaInvoice a push reads (from the raw object, `of`)."""

    name: str
    tenant: str
    month: str
    number: str
    revision: int
    state: str
    currency: str
    total: str
    lines: tuple[Mapping[str, Any], ...]
    stripe: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> InvoiceFacts:
        """Read a raw GryviaInvoice (metadata.name, spec, status.stripe)."""
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        return cls(
            name=str((obj.get("metadata") or {}).get("name") or ""),
            tenant=str(spec.get("tenant") or ""),
            month=str(spec.get("month") or ""),
            number=str(spec.get("number") or ""),
            revision=int(spec.get("revision") or 1),
            state=str(spec.get("state") or "Draft"),
            currency=str(spec.get("currency") or "USD"),
            total=str(spec.get("total") or "0.00"),
            lines=tuple(spec.get("lines") or ()),
            stripe=dict(status.get("stripe") or {}),
        )


def needs_push(obj: Mapping[str, Any]) -> bool:
    """True for a Finalized invoice whose push has not finished (`status.stripe.pushedAt`
    unset). A pushed invoice, a Draft, a Paid and a Void one make no Stripe call."""
    facts = InvoiceFacts.of(obj)
    return facts.state == "Finalized" and not facts.stripe.get("pushedAt")


def customer_call(tenant: str) -> StripeCall:
    """Create `tenant`'s customer, named after it, with metadata `gryvia_tenant`."""
    params = {"name": tenant, "metadata": {META_TENANT: tenant}}
    return StripeCall("customer", params, customer_key(tenant))


def invoice_call(
    facts: InvoiceFacts, customer: str, days_until_due: int = DEFAULT_DAYS_UNTIL_DUE
) -> StripeCall:
    """Create the draft Stripe invoice of `facts` for `customer`: sent to the customer to pay
    (`send_invoice`, due in `days_until_due` days), not advanced by Stripe before we finalize
    it, holding only the items created for it, with metadata naming the GryviaInvoice."""
    params = {
        "customer": customer,
        "currency": facts.currency.lower(),
        "collection_method": "send_invoice",
        "days_until_due": days_until_due,
        "auto_advance": False,
        "pending_invoice_items_behavior": "exclude",
        "description": f"{facts.number}: GPU usage of {facts.tenant} in {facts.month} (UTC)",
        "metadata": {
            META_INVOICE: facts.name,
            META_TENANT: facts.tenant,
            "gryvia_number": facts.number,
            "gryvia_revision": str(facts.revision),
        },
    }
    return StripeCall("invoice", params, idempotency_key(facts.name, facts.revision, "invoice"))


def line_minor_units(facts: InvoiceFacts) -> list[int]:
    """Each line's amount in the currency's smallest unit, in line order. Raises ValueError
    when an amount cannot be sent (see `minor_units`) or the lines do not sum to the
    invoice's total: checked before a push makes its first call."""
    amounts = [minor_units(str(line.get("amount")), facts.currency) for line in facts.lines]
    if sum(amounts) != minor_units(facts.total, facts.currency):
        raise ValueError(
            f"invoice {facts.name}: its lines sum to {sum(amounts)} and its total is "
            f"{facts.total} {facts.currency}; a GryviaInvoice's lines always sum to its total, "
            "so it was not built by `gryvia invoice finalize`: void it and finalize again"
        )
    return amounts


def item_calls(
    facts: InvoiceFacts, customer: str, invoice_id: str, present: Iterable[str] = ()
) -> list[StripeCall]:
    """One invoice item per line of `facts` on Stripe invoice `invoice_id`, in line order,
    leaving out the lines whose sequence is in `present` (items an earlier try created, by
    their metadata `gryvia_line`). Raises ValueError as `line_minor_units`."""
    have = set(present)
    amounts = line_minor_units(facts)
    calls = []
    for line, amount in zip(facts.lines, amounts, strict=True):
        sequence = str(line.get("sequence"))
        if sequence in have:
            continue
        sku = line.get("sku") or "unpriced"
        params = {
            "customer": customer,
            "invoice": invoice_id,
            "currency": facts.currency.lower(),
            "amount": amount,
            "description": (
                f"{line.get('job')} ({sku}): {line.get('gpuHours')} GPU-hours at "
                f"{line.get('rate')} {facts.currency}/GPU-hour"
            )[:500],
            "metadata": {
                META_INVOICE: facts.name,
                META_LINE: sequence,
                "gryvia_entry": str(line.get("entry") or ""),
            },
        }
        key = idempotency_key(facts.name, facts.revision, f"item-{sequence}")
        calls.append(StripeCall("item", params, key))
    return calls


def finalize_call(facts: InvoiceFacts) -> StripeCall:
    """Finalize the Stripe invoice (it becomes `open` and payable); no parameters."""
    return StripeCall("finalize", {}, idempotency_key(facts.name, facts.revision, "finalize"))


def with_metadata(objs: Sequence[Mapping[str, Any]], key: str, value: str) -> str | None:
    """The id of the first Stripe object whose metadata[`key`] is `value`, else None. Search
    results are filtered here again: Stripe's search is eventually consistent and stripe-mock
    answers any search with its fixtures."""
    for obj in objs:
        if (obj.get("metadata") or {}).get(key) == value:
            return str(obj.get("id"))
    return None


def push_status(
    customer: str, invoice_id: str, pushed_at: dt.datetime | None = None
) -> dict[str, Any]:
    """The merge patch of `status.stripe` after a step: the customer and Stripe invoice ids,
    and `pushedAt` (RFC3339 UTC) once Stripe finalized it."""
    stripe: dict[str, Any] = {"customerId": customer, "invoiceId": invoice_id}
    if pushed_at is not None:
        stripe["pushedAt"] = pushed_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"status": {"stripe": stripe}}


@dataclass(frozen=True)
class PaidDecision:
    """What one verified event does: `patch` the spec of GryviaInvoice `name` (None: change
    nothing), and the log line that says why."""

    name: str | None
    patch: dict[str, Any] | None
    message: str
    outcome: str
    """`paid`, `already-paid`, `ignored` or `unknown` (the metric's label)."""


def find_invoice(
    stripe_invoice: Mapping[str, Any], invoices: Iterable[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The GryviaInvoice a Stripe invoice object belongs to: the one whose
    `status.stripe.invoiceId` is its id, else the one its metadata `gryvia_invoice` names
    while that one has no other Stripe invoice recorded. None when neither."""
    sid = str(stripe_invoice.get("id") or "")
    named = str((stripe_invoice.get("metadata") or {}).get(META_INVOICE) or "")
    by_name = None
    for obj in invoices:
        recorded = ((obj.get("status") or {}).get("stripe") or {}).get("invoiceId")
        if sid and recorded == sid:
            return obj
        if named and (obj.get("metadata") or {}).get("name") == named and not recorded:
            by_name = obj
    return by_name


def paid_decision(
    event: Mapping[str, Any], invoices: Iterable[Mapping[str, Any]], now: dt.datetime
) -> PaidDecision:
    """The effect of a verified Stripe event on the GryviaInvoices: an `invoice.paid` event
    for a Finalized invoice marks it Paid (payment `{method: stripe, reference: <Stripe
    invoice id>}`, paidAt `now`); any other event type, an unknown invoice, one already Paid
    and a Void or Draft one change nothing (each with its reason)."""
    kind = str(event.get("type") or "")
    obj = (event.get("data") or {}).get("object") or {}
    sid = str(obj.get("id") or "")
    if kind != PAID_EVENT:
        return PaidDecision(
            None, None, f"event {event.get('id')} of type {kind} ignored", "ignored"
        )
    inv = find_invoice(obj, invoices)
    if inv is None:
        return PaidDecision(
            None,
            None,
            f"invoice.paid for Stripe invoice {sid}: no GryviaInvoice has it (status.stripe."
            f"invoiceId) or is named by its metadata {META_INVOICE}; acknowledged, nothing changed",
            "unknown",
        )
    name = str((inv.get("metadata") or {}).get("name"))
    state = str((inv.get("spec") or {}).get("state") or "Draft")
    if state == "Paid":
        return PaidDecision(
            name, None, f"invoice.paid for {sid}: {name} is Paid already", "already-paid"
        )
    if state != "Finalized":
        return PaidDecision(
            name,
            None,
            f"invoice.paid for {sid}: {name} is {state}, only a Finalized invoice becomes Paid; "
            "nothing changed (refund or reconcile it in Stripe)",
            "ignored",
        )
    patch = paid_patch(now=now, method=PAYMENT_METHOD, reference=sid)
    return PaidDecision(name, patch, f"invoice.paid for {sid}: {name} marked Paid", "paid")
