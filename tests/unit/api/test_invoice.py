"""Finalized invoices from the ledger: lines, totals, refusals, life cycle (issue 17, point 5)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from gryvia_operator.api.invoice import GryviaInvoice, line_amount
from gryvia_operator.api.invoicing import (
    build_invoice,
    finalize_refusals,
    next_number,
    paid_patch,
    update_problems,
    void_patch,
)
from gryvia_operator.api.ledger import build_entry
from tests.unit.api.test_ledger import record

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


def ledger(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    prev = ""
    for n, rec in enumerate(records, start=1):
        entry = build_entry(rec, sequence=n, prev_hash=prev, recorded_at=NOW)
        prev = entry["spec"]["hash"]
        out.append(entry)
    return out


def test_81_lines_of_0_4936_total_the_metered_cost_rounded_once() -> None:
    records = [record(n, cost=0.4936) for n in range(1, 82)]
    inv = build_invoice("vision", "2026-11", ledger(records), invoices=[], now=NOW, by="alice")
    spec = inv["spec"]
    assert len(spec["lines"]) == 81
    # largest remainder (issue 38): round(81 x 0.4936) = 39.98, not 81 x 0.49 = 39.69
    amounts = [line["amount"] for line in spec["lines"]]
    assert amounts == ["0.50"] * 29 + ["0.49"] * 52  # ties: the earlier lines get the cents
    assert spec["total"] == "39.98"
    assert Decimal(spec["total"]) == sum(Decimal(line["amount"]) for line in spec["lines"])
    assert spec["ledger"] == {
        "entries": 81,
        "firstSequence": 1,
        "lastSequence": 81,
        "headHash": ledger(records)[-1]["spec"]["hash"],
    }
    assert inv["metadata"]["name"] == "inv-vision-202611-1"
    assert spec["number"] == "INV-vision-000001"
    assert spec["state"] == "Finalized"
    assert spec["finalizedAt"] == "2026-12-01T09:00:00Z"
    assert spec["finalizedBy"] == "alice"
    GryviaInvoice.model_validate(inv)


def test_line_amounts_round_half_up_to_the_cent() -> None:
    assert line_amount("0.005000") == Decimal("0.01")
    assert line_amount("0.004999") == Decimal("0.00")
    assert line_amount("12.345000") == Decimal("12.35")


def test_only_the_months_entries_are_lines() -> None:
    october = record(2, start="2026-10-31T23:59:59Z", end="2026-11-01T00:00:00Z")
    records = [record(1), october, record(3)]
    inv = build_invoice("vision", "2026-11", ledger(records), invoices=[], now=NOW, by="a")
    assert [line["entry"] for line in inv["spec"]["lines"]] == ["le-r1", "le-r3"]
    assert inv["spec"]["ledger"]["lastSequence"] == 3


def test_numbers_and_revisions_count_up_per_tenant() -> None:
    earlier = [
        {"spec": {"tenant": "vision", "month": "2026-11", "number": "INV-vision-000007",
                  "revision": 1, "state": "Void"}},
        {"spec": {"tenant": "other", "month": "2026-11", "number": "INV-other-000042"}},
    ]  # fmt: skip
    inv = build_invoice("vision", "2026-11", ledger([record(1)]), invoices=earlier, now=NOW, by="")
    assert inv["spec"]["number"] == "INV-vision-000008"
    assert inv["metadata"]["name"] == "inv-vision-202611-2"
    assert next_number("new", earlier) == "INV-new-000001"


def _refusals(records: list[dict[str, Any]], entries: list[dict[str, Any]], invoices=()) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(
        finalize_refusals(
            "vision", "2026-11", records=records, entries=entries, invoices=list(invoices)
        )
    )


def test_finalize_is_refused_while_a_record_is_open() -> None:
    sealed = record(1)
    running = record(2, final=False)
    del running["spec"]["end"]
    text = _refusals([sealed, running], ledger([sealed]))
    assert "1 usage record(s) of 2026-11 still open" in text
    assert "tenant-vision/usage-u2" in text
    assert _refusals([sealed], ledger([sealed])) == ""


def test_finalize_is_refused_for_unledgered_sealed_records() -> None:
    text = _refusals([record(1), record(2)], ledger([record(1)]))
    assert "1 sealed usage record(s) not in the ledger yet: tenant-vision/usage-u2" in text
    assert "billing.ledger.enabled" in text


def test_finalize_says_the_ledger_is_off_and_names_the_flag_and_chart_value() -> None:
    """Issue #37: with the operator run without --billing-ledger there is no entry at all;
    finalize said only "not in the ledger yet (wait, then retry)" or "no ledgered usage"."""
    text = _refusals([record(1), record(2)], [])
    assert text.startswith("the billing ledger is off: no GryviaLedgerEntry exists although 2")
    assert "--billing-ledger" in text and "billing.ledger.enabled: true" in text
    assert "not in the ledger yet" not in text
    other = _refusals([record(1, tenant="acme")], [])  # vision has nothing, the ledger is off
    assert other.startswith("tenant vision has no ledgered usage in 2026-11; the billing ledger")
    assert "the billing ledger is off" not in _refusals([record(1)], ledger([record(1)]))
    assert "ledger is off" not in _refusals([], [])  # nothing sealed: nothing to tell


def test_finalize_is_refused_for_a_broken_chain() -> None:
    entries = ledger([record(1), record(2)])
    entries[0]["spec"]["cost"] = "0.000000"
    text = _refusals([record(1), record(2)], entries)
    assert "the ledger chain of vision is invalid (entry le-r1 (sequence 1)" in text
    assert "gryvia ledger verify vision" in text


def test_finalize_is_refused_for_mixed_currencies() -> None:
    records = [record(1), record(2, currency="EUR")]
    assert "several currencies (EUR, USD)" in _refusals(records, ledger(records))


def test_finalize_is_refused_when_already_final_or_empty() -> None:
    final = {
        "metadata": {"name": "inv-vision-202611-1"},
        "spec": {"tenant": "vision", "month": "2026-11", "number": "INV-vision-000001",
                 "state": "Paid"},
    }  # fmt: skip
    text = _refusals([record(1)], ledger([record(1)]), [final])
    assert "invoice INV-vision-000001 (inv-vision-202611-1) for 2026-11 is already Paid" in text
    voided = {**final, "spec": {**final["spec"], "state": "Void"}}
    assert _refusals([record(1)], ledger([record(1)]), [voided]) == ""
    assert _refusals([], []) == "tenant vision has no ledgered usage in 2026-11"


def _final() -> dict[str, Any]:
    inv = build_invoice("vision", "2026-11", ledger([record(1)]), invoices=[], now=NOW, by="a")
    spec: dict[str, Any] = inv["spec"]
    return spec


def test_the_life_cycle() -> None:
    final = _final()
    paid = {**final, **paid_patch(now=NOW, method="manual", reference="wire 42")}
    assert update_problems(final, paid) == []
    voided = {**final, **void_patch("duplicate billing", now=NOW, by="bob")}
    assert update_problems(final, voided) == []
    assert update_problems(paid, {**paid, "state": "Void", "voidReason": "late"}) == [
        "the invoice is Paid; Paid and Void invoices are immutable"
    ]
    assert update_problems(voided, {**voided, "voidReason": "other"})[0].startswith(
        "the invoice is Void"
    )
    assert update_problems(paid, paid) == []
    back = update_problems(final, {**final, "state": "Draft"})
    assert back == [
        "Finalized -> Draft is not allowed: an invoice moves only Draft -> Finalized -> "
        "Paid or Void (a Draft may be voided)"
    ]
    edited = update_problems(final, {**final, "total": "0.01"})
    assert edited == [
        "total changed: tenant, month, number, revision, currency, total, lines and ledger "
        "never change"
    ]
    assert "voidReason" in update_problems(final, {**final, "state": "Void"})[0]


def test_a_void_reason_has_3_to_500_characters() -> None:
    with pytest.raises(ValueError, match="--reason must be 3-500 characters, got 2"):
        void_patch(" ab ", now=NOW, by="x")
    with pytest.raises(ValueError, match="got 501"):
        void_patch("x" * 501, now=NOW, by="x")
    assert void_patch("abc", now=NOW, by="x")["voidReason"] == "abc"
