"""`gryvia invoice finalize|mark-paid|void` and `gryvia ledger verify` on an in-memory cluster."""

from __future__ import annotations

import json
from typing import Any

from gryvia_cli.kube import resources as r
from tests.unit.api.test_invoice import ledger
from tests.unit.api.test_ledger import record
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import run


def _cluster(*extra: dict[str, Any]) -> FakeAccess:
    records = [record(n) for n in range(1, 4)]
    for rec in records:
        rec.update(kind="GryviaUsageRecord", apiVersion="gryvia.io/v1alpha1")
    entries = ledger(records)
    return FakeAccess(*records, *entries, *extra)


def test_finalize_then_pay_then_refuse_to_void() -> None:
    fake = _cluster()
    done = run(["invoice", "finalize", "vision", "2026-11", "-o", "json"], fake)
    assert done.exit_code == 0, done.output
    inv = json.loads(done.output)
    assert inv["spec"]["total"] == "1.47" and len(inv["spec"]["lines"]) == 3
    assert inv["spec"]["finalizedBy"] == "admin"
    (stored,) = fake.items(r.INVOICE)
    assert stored["metadata"]["name"] == "inv-vision-202611-1"
    again = run(["invoice", "finalize", "vision", "2026-11"], fake)
    assert again.exit_code == 1 and "already Finalized" in again.output
    paid = run(["invoice", "mark-paid", "INV-vision-000001", "--reference", "w1"], fake)
    assert paid.exit_code == 0, paid.output
    assert fake.items(r.INVOICE)[0]["spec"]["state"] == "Paid"
    voided = run(["invoice", "void", "inv-vision-202611-1", "--reason", "late"], fake)
    assert voided.exit_code == 1 and "Paid and Void invoices are immutable" in voided.output


def test_finalize_refuses_with_every_reason_and_checks_its_input() -> None:
    running = record(9, final=False)
    running.update(kind="GryviaUsageRecord", apiVersion="gryvia.io/v1alpha1")
    refused = run(["invoice", "finalize", "vision", "2026-11"], _cluster(running))
    assert refused.exit_code == 1 and "still open" in refused.output
    assert run(["invoice", "finalize", "vision", "2026-1"], _cluster()).exit_code == 2
    assert run(["invoice", "void", "x", "--reason", "no"], _cluster()).exit_code == 2


def test_ledger_verify_exit_codes() -> None:
    ok = run(["ledger", "verify", "vision"], _cluster())
    assert ok.exit_code == 0 and "valid: 3 entries" in ok.output
    records = [record(n) for n in range(1, 4)]
    entries = ledger(records)
    entries[1]["spec"]["cost"] = "9.000000"
    bad = run(["ledger", "verify", "vision", "-o", "json"], FakeAccess(*entries))
    assert bad.exit_code == 1
    assert '"valid": false' in bad.output and "entry le-r2 (sequence 2)" in bad.output
