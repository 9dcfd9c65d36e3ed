"""The Stripe requests built from a GryviaInvoice, and what an invoice.paid event does
(`reconcile.stripe_invoice`; issue 44 point 4)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from gryvia_operator.api.invoice import GryviaInvoice
from gryvia_operator.api.invoicing import build_invoice, update_problems
from gryvia_operator.reconcile.stripe_invoice import (
    InvoiceFacts,
    customer_call,
    finalize_call,
    find_invoice,
    idempotency_key,
    invoice_call,
    item_calls,
    minor_units,
    needs_push,
    paid_decision,
    push_status,
    with_metadata,
)
from tests.unit.api.test_invoice import ledger
from tests.unit.api.test_ledger import record

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


def finalized(cost: float = 0.4936, lines: int = 81, **status: Any) -> dict[str, Any]:
    """`gryvia invoice finalize`'s invoice of `lines` runs costing `cost` each, as stored."""
    records = [record(n, cost=cost) for n in range(1, lines + 1)]
    inv = build_invoice("vision", "2026-11", ledger(records), invoices=[], now=NOW, by="alice")
    if status:
        inv["status"] = {"stripe": status}
    return inv


@pytest.mark.parametrize(
    ("amount", "currency", "units"),
    [
        ("39.98", "USD", 3998),
        ("0.49", "usd", 49),
        ("0.00", "EUR", 0),
        (Decimal("1234567.89"), "USD", 123456789),
        ("1200.00", "JPY", 1200),
        ("1.25", "KWD", 1250),
    ],
)
def test_amounts_to_the_cent_become_the_currencys_smallest_unit(
    amount: str, currency: str, units: int
) -> None:
    assert minor_units(amount, currency) == units


@pytest.mark.parametrize(
    ("amount", "currency", "message"),
    [
        ("12.50", "JPY", "whole number of JPY's smallest unit"),
        ("0.001", "USD", "whole number of USD's smallest unit"),
        ("-1.00", "USD", "must be >= 0"),
        ("twelve", "USD", "not a decimal number"),
    ],
)
def test_an_amount_stripe_cannot_take_is_refused_by_name(
    amount: str, currency: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        minor_units(amount, currency)


def test_one_item_per_line_in_cents_summing_to_the_total() -> None:
    inv = finalized()
    facts = InvoiceFacts.of(inv)
    calls = item_calls(facts, "cus_1", "in_1")
    assert len(calls) == len(inv["spec"]["lines"]) == 81
    amounts = [c.params["amount"] for c in calls]
    assert sorted(set(amounts)) == [49, 50] and amounts.count(50) == 29  # largest remainder
    assert sum(amounts) == 3998 and inv["spec"]["total"] == "39.98"
    first = calls[0].params
    assert first["customer"] == "cus_1" and first["invoice"] == "in_1"
    assert first["currency"] == "usd"
    assert first["metadata"]["gryvia_invoice"] == "inv-vision-202611-1"
    assert first["metadata"]["gryvia_line"] == "1"
    assert [c.step for c in calls] == ["item"] * 81


def test_idempotency_keys_are_stable_per_invoice_revision_and_step() -> None:
    a, b = InvoiceFacts.of(finalized()), InvoiceFacts.of(finalized())
    keys = [c.key for c in item_calls(a, "cus_1", "in_1")]
    again = [c.key for c in item_calls(b, "cus_2", "in_2")]  # a retried push
    assert keys == again and len(set(keys)) == 81
    assert keys[0] == "gryvia/inv-vision-202611-1/r1/item-1"
    assert invoice_call(a, "cus_1").key == invoice_call(b, "cus_2").key
    assert invoice_call(a, "cus_1").key == idempotency_key(a.name, 1, "invoice")
    assert finalize_call(a).key == "gryvia/inv-vision-202611-1/r1/finalize"
    assert customer_call("vision").key == customer_call("vision").key == "gryvia/customer/vision"
    assert idempotency_key(a.name, 2, "invoice") != idempotency_key(a.name, 1, "invoice")


def test_a_resumed_push_creates_only_the_items_stripe_does_not_have() -> None:
    facts = InvoiceFacts.of(finalized(lines=5))
    calls = item_calls(facts, "cus_1", "in_1", present={"1", "2", "4"})
    assert [c.params["metadata"]["gryvia_line"] for c in calls] == ["3", "5"]


def test_lines_that_do_not_sum_to_the_total_are_refused_before_any_call() -> None:
    inv = finalized(lines=3)
    inv["spec"]["total"] = "9.99"
    with pytest.raises(ValueError, match="void it and finalize again"):
        item_calls(InvoiceFacts.of(inv), "cus_1", "in_1")


def test_the_stripe_invoice_is_sent_to_the_customer_with_only_its_own_items() -> None:
    params = invoice_call(InvoiceFacts.of(finalized()), "cus_1", days_until_due=14).params
    assert params["customer"] == "cus_1" and params["currency"] == "usd"
    assert params["collection_method"] == "send_invoice" and params["days_until_due"] == 14
    assert params["pending_invoice_items_behavior"] == "exclude"
    assert params["auto_advance"] is False
    assert params["metadata"] == {
        "gryvia_invoice": "inv-vision-202611-1",
        "gryvia_tenant": "vision",
        "gryvia_number": "INV-vision-000001",
        "gryvia_revision": "1",
    }
    assert customer_call("vision").params["metadata"] == {"gryvia_tenant": "vision"}


def test_only_a_finalized_invoice_not_pushed_yet_is_due() -> None:
    assert needs_push(finalized())
    assert needs_push(finalized(customerId="cus_1", invoiceId="in_1"))  # half-way: resume
    assert not needs_push(finalized(invoiceId="in_1", pushedAt="2026-12-01T09:00:05Z"))
    for state in ("Draft", "Paid", "Void"):
        inv = finalized()
        inv["spec"]["state"] = state
        assert not needs_push(inv)


def test_the_status_written_is_valid_for_the_model() -> None:
    inv = finalized()
    inv |= push_status("cus_1", "in_1", NOW + dt.timedelta(seconds=5))
    parsed = GryviaInvoice.model_validate(inv)
    assert parsed.status is not None and parsed.status.stripe is not None
    assert parsed.status.stripe.invoice_id == "in_1"
    assert inv["status"]["stripe"]["pushedAt"] == "2026-12-01T09:00:05Z"
    assert "pushedAt" not in push_status("cus_1", "in_1")["status"]["stripe"]


def test_search_results_are_matched_on_their_metadata() -> None:
    fixtures = [{"id": "cus_fixture", "metadata": {}}, {"id": "cus_v", "metadata": {"t": "v"}}]
    assert with_metadata(fixtures, "t", "v") == "cus_v"
    assert with_metadata(fixtures, "t", "other") is None


def paid_event(sid: str, name: str = "", kind: str = "invoice.paid") -> dict[str, Any]:
    metadata = {"gryvia_invoice": name} if name else {}
    return {"id": "evt_1", "type": kind, "data": {"object": {"id": sid, "metadata": metadata}}}


def test_invoice_paid_marks_the_pushed_invoice_paid_with_stripes_reference() -> None:
    inv = finalized(customerId="cus_1", invoiceId="in_1", pushedAt="2026-12-01T09:00:05Z")
    decision = paid_decision(paid_event("in_1"), [inv], NOW)
    assert decision.outcome == "paid" and decision.name == "inv-vision-202611-1"
    assert decision.patch == {
        "state": "Paid",
        "paidAt": "2026-12-01T09:00:00Z",
        "payment": {"method": "stripe", "reference": "in_1"},
    }
    assert update_problems(inv["spec"], {**inv["spec"], **decision.patch}) == []


def test_the_invoice_is_found_by_metadata_while_its_id_is_not_recorded_yet() -> None:
    inv = finalized()
    assert find_invoice(
        {"id": "in_9", "metadata": {"gryvia_invoice": inv["metadata"]["name"]}}, [inv]
    )
    other = finalized(invoiceId="in_1")  # recorded another Stripe invoice: not this one
    event = paid_event("in_9", name=other["metadata"]["name"])
    assert paid_decision(event, [other], NOW).outcome == "unknown"


@pytest.mark.parametrize(
    ("state", "event", "outcome"),
    [
        ("Finalized", paid_event("in_404"), "unknown"),
        ("Finalized", paid_event("in_1", kind="invoice.payment_failed"), "ignored"),
        ("Paid", paid_event("in_1"), "already-paid"),
        ("Void", paid_event("in_1"), "ignored"),
    ],
)
def test_other_events_change_nothing(state: str, event: dict[str, Any], outcome: str) -> None:
    inv = finalized(invoiceId="in_1")
    inv["spec"]["state"] = state
    decision = paid_decision(event, [inv], NOW)
    assert decision.patch is None and decision.outcome == outcome
    assert decision.message
