"""`gryvia invoice finalize|mark-paid|void` and `gryvia ledger verify` on an in-memory cluster."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from typer.testing import CliRunner, Result

from gryvia_cli.cli.session import Session
from gryvia_cli.kube import resources as r
from tests.unit.api.test_invoice import ledger
from tests.unit.api.test_ledger import record
from tests.unit.cli.fakes import FakeAccess

DECEMBER = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)  # November 2026 has ended


def run(args: list[str], fake: FakeAccess, now: datetime = DECEMBER) -> Result:
    """Invoke the gryvia app on `fake` with the clock at `now`."""
    from gryvia_cli.main import app

    state = Session(access_factory=lambda _s: fake, clock=lambda: now)
    return CliRunner().invoke(app, args, obj=state)


def tenant(name: str) -> dict[str, Any]:
    """A GryviaTenant `name`."""
    return {"apiVersion": "gryvia.io/v1alpha1", "kind": "GryviaTenant", "metadata": {"name": name}}


def _cluster(*extra: dict[str, Any]) -> FakeAccess:
    records = [record(n) for n in range(1, 4)]
    for rec in records:
        rec.update(kind="GryviaUsageRecord", apiVersion="gryvia.io/v1alpha1")
    entries = ledger(records)
    return FakeAccess(*records, *entries, tenant("vision"), *extra)


def test_finalize_then_pay_then_refuse_to_void() -> None:
    fake = _cluster()
    done = run(["invoice", "finalize", "vision", "2026-11", "-o", "json"], fake)
    assert done.exit_code == 0, done.output
    inv = json.loads(done.output)
    # 3 x 0.4936 = 1.4808 metered: 1.48 (issue 38: no longer 3 x 0.49 = 1.47)
    assert inv["spec"]["total"] == "1.48" and len(inv["spec"]["lines"]) == 3
    assert inv["spec"]["finalizedBy"] == "admin"
    (stored,) = fake.items(r.INVOICE)
    assert stored["metadata"]["name"] == "inv-vision-202611-1"
    again = run(["invoice", "finalize", "vision", "2026-11"], fake)
    assert again.exit_code == 1 and "already Finalized" in again.output
    assert "see: gryvia invoice show inv-vision-202611-1" in again.output
    assert "the estimate meanwhile" not in again.output
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


def test_finalize_refuses_a_month_that_has_not_ended() -> None:
    fake = _cluster()
    mid = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    early = run(["invoice", "finalize", "vision", "2026-11"], fake, now=mid)
    assert early.exit_code == 1
    assert "2026-11 has not ended yet (it ends 2026-12-01T00:00:00Z)" in early.output
    assert fake.items(r.INVOICE) == []
    assert run(["invoice", "finalize", "vision", "2026-11"], fake).exit_code == 0


def test_finalize_and_verify_name_a_tenant_that_does_not_exist() -> None:
    fake = _cluster()
    missing = run(["invoice", "finalize", "nosuch", "2026-11"], fake)
    assert missing.exit_code == 1
    assert "nosuch is not a GryviaTenant" in missing.output
    assert "gryvia tenant create nosuch" in missing.output
    assert "the estimate meanwhile" not in missing.output
    empty = run(["invoice", "finalize", "vision", "2026-10"], fake)
    assert "tenant vision has no ledgered usage in 2026-10" in empty.output
    verify = run(["ledger", "verify", "nosuch"], fake)
    assert verify.exit_code == 1 and "tenant nosuch does not exist" in verify.output
    off = run(["ledger", "verify", "vision"], FakeAccess(tenant("vision")))
    assert off.exit_code == 0 and "valid: 0 entries" in off.output
    assert "only with the ledger on (chart value billing.ledger.enabled" in off.output


def test_ledger_verify_csv() -> None:
    ok = run(["ledger", "verify", "vision", "-o", "csv"], _cluster())
    assert ok.exit_code == 0, ok.output
    header, row = ok.output.strip().splitlines()
    assert header == "tenant,valid,entries,headSequence,headHash,hashVersion,problem"
    assert row.startswith("vision,true,3,3,") and row.endswith(",v1,")
    one = run(["ledger", "verify", "vision"], FakeAccess(*ledger([record(1)])))
    assert "valid: 1 entry, head sequence 1" in one.output
    entries = ledger([record(n) for n in range(1, 4)])
    entries[1]["spec"]["cost"] = "9.000000"
    bad = run(["ledger", "verify", "vision", "-o", "csv"], FakeAccess(*entries))
    assert bad.exit_code == 1 and "entry le-r2 (sequence 2)" in bad.output
