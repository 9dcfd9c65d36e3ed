"""The ledger writer's plan (exactly once across kills) and the billing webhook."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_operator.api.invoicing import void_patch
from gryvia_operator.api.ledger import ANNOTATION_LEDGER_ENTRY, verify
from gryvia_operator.reconcile.ledger import is_pending, plan
from gryvia_operator.webhook.billing import admit_invoice, admit_ledger_entry
from tests.unit.api.test_invoice import _final
from tests.unit.api.test_ledger import record

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def _apply(steps: Any, stored: list[dict[str, Any]], *, upto: int | None = None) -> None:
    """Create the steps' entries in `stored`, as the API server would (up to `upto` creates)."""
    for n, step in enumerate(steps):
        if upto is not None and n >= upto:
            return
        if step.entry is not None:
            stored.append(step.entry)


def test_records_are_appended_in_the_order_they_ended() -> None:
    late = record(1, end="2026-11-03T12:00:00Z")
    early = record(2, end="2026-11-03T11:00:00Z")
    steps = plan("vision", [late, early], [], NOW)
    assert [(s.record, s.name, s.entry is not None) for s in steps] == [
        (("tenant-vision", "usage-u2"), "le-r2", True),
        (("tenant-vision", "usage-u1"), "le-r1", True),
    ]
    first, second = (s.entry for s in steps)
    assert first is not None and second is not None
    assert (first["spec"]["sequence"], first["spec"]["prevHash"]) == (1, "")
    assert second["spec"]["prevHash"] == first["spec"]["hash"]


def test_a_pass_killed_after_creating_entries_only_marks_them_next_time() -> None:
    """Killed after the first create (before any mark): the next process, reading the chain
    fresh, marks that record and appends the rest after it; every record once."""
    records = [record(n, end=f"2026-11-03T1{n}:00:00Z") for n in range(1, 5)]
    stored: list[dict[str, Any]] = []
    _apply(plan("vision", records, stored, NOW), stored, upto=1)
    later = NOW + dt.timedelta(seconds=30)
    steps = plan("vision", records, stored, later)
    assert [(s.name, s.entry is None) for s in steps] == [
        ("le-r1", True),
        ("le-r2", False),
        ("le-r3", False),
        ("le-r4", False),
    ]
    _apply(steps, stored)
    result = verify("vision", stored)
    assert result.valid and result.entries == 4 and result.head.sequence == 4
    assert plan("vision", records, stored, later)[0].entry is None  # a third pass: marks only


def test_each_tenant_has_its_own_chain() -> None:
    stored: list[dict[str, Any]] = []
    _apply(plan("vision", [record(1), record(2)], stored, NOW), stored)
    other = [record(3, tenant="nlp")]
    (step,) = plan("nlp", other, stored, NOW)
    assert step.entry is not None and step.entry["spec"]["sequence"] == 1


def test_open_or_marked_records_are_not_pending() -> None:
    sealed = record(1)
    assert is_pending(sealed, ANNOTATION_LEDGER_ENTRY)
    assert not is_pending(record(2, final=False), ANNOTATION_LEDGER_ENTRY)
    sealed["metadata"]["annotations"] = {ANNOTATION_LEDGER_ENTRY: "le-r1"}
    assert not is_pending(sealed, ANNOTATION_LEDGER_ENTRY)
    unsealable = record(3)
    del unsealable["metadata"]["uid"]
    assert plan("vision", [unsealable], [], NOW) == []


def _request(op: str, old: Any = None, new: Any = None) -> dict[str, Any]:
    return {"uid": "1", "name": "x", "operation": op, "oldObject": old, "object": new}


def test_the_webhook_keeps_entries_as_written() -> None:
    (step,) = plan("vision", [record(1)], [], NOW)
    entry = step.entry
    assert entry is not None
    edited = {**entry, "spec": {**entry["spec"], "cost": "0.000001"}}
    relabelled = {**entry, "metadata": {**entry["metadata"], "labels": {"a": "b"}}}
    assert not admit_ledger_entry(_request("UPDATE", entry, edited)).allowed
    assert "immutable" in admit_ledger_entry(_request("UPDATE", entry, edited)).message
    assert admit_ledger_entry(_request("UPDATE", entry, relabelled)).allowed
    denied = admit_ledger_entry(_request("DELETE", entry))
    assert not denied.allowed and "never deleted" in denied.message
    assert admit_ledger_entry(_request("CREATE", None, entry)).allowed


def test_the_webhook_keeps_paid_and_void_invoices() -> None:
    final = {"spec": _final()}
    voided = {"spec": {**final["spec"], **void_patch("wrong month", now=NOW, by="b")}}
    assert admit_invoice(_request("UPDATE", final, voided)).allowed
    again = {"spec": {**voided["spec"], "voidReason": "changed my mind"}}
    verdict = admit_invoice(_request("UPDATE", voided, again))
    assert not verdict.allowed and "Paid and Void invoices are immutable" in verdict.message
    verdict = admit_invoice(_request("DELETE", final))
    assert not verdict.allowed and "only Draft invoices are deleted" in verdict.message
    draft = {"spec": {**final["spec"], "state": "Draft"}}
    assert admit_invoice(_request("DELETE", draft)).allowed
