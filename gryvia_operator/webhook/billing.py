"""Admission decisions for the billing ledger: GryviaLedgerEntries never change nor go away,
GryviaInvoices change only along their life cycle, Paid and Void ones never, and only
Drafts are deleted. The CRDs' CEL rules say the same for updates (they hold while the webhook
is down); deletion is refused only here.

Pure: AdmissionReview in, AdmissionReview out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gryvia_operator.api import messages as msg
from gryvia_operator.api.invoicing import update_problems
from gryvia_operator.api.ledger import ENTRY_IMMUTABLE
from gryvia_operator.webhook.review import Verdict, request_of, response

LEDGER_ENTRY_PATH = "/validate-gryvia-io-v1alpha1-gryvialedgerentry"
INVOICE_PATH = "/validate-gryvia-io-v1alpha1-gryviainvoice"


def _spec(obj: Any) -> Mapping[str, Any]:
    spec = obj.get("spec") if isinstance(obj, Mapping) else None
    return spec if isinstance(spec, Mapping) else {}


def _denied(kind: str, name: str, reasons: str) -> Verdict:
    return Verdict(False, msg.DENIED.format(kind=kind, reasons=f"{name}: {reasons}"))


def admit_ledger_entry(request: Mapping[str, Any]) -> Verdict:
    """Deny DELETE, and an UPDATE that changes the spec (metadata may change)."""
    name = str(request.get("name") or "")
    operation = request.get("operation")
    if operation == "DELETE":
        return _denied("GryviaLedgerEntry", name, "ledger entries are never deleted")
    if operation == "UPDATE" and _spec(request.get("object")) != _spec(request.get("oldObject")):
        return _denied("GryviaLedgerEntry", name, ENTRY_IMMUTABLE)
    return Verdict(True)


def admit_invoice(request: Mapping[str, Any]) -> Verdict:
    """Deny deleting an invoice that is not a Draft, and an update `update_problems` refuses."""
    name = str(request.get("name") or "")
    operation = request.get("operation")
    if operation == "DELETE":
        state = str(_spec(request.get("oldObject")).get("state") or "Draft")
        if state != "Draft":
            return _denied(
                "GryviaInvoice", name, f"the invoice is {state}; only Draft invoices are deleted"
            )
        return Verdict(True)
    if operation == "UPDATE":
        problems = update_problems(_spec(request.get("oldObject")), _spec(request.get("object")))
        if problems:
            return _denied("GryviaInvoice", name, "; ".join(problems))
    return Verdict(True)


def review_ledger_entry(review: Any) -> dict[str, Any]:
    """Answer an AdmissionReview for a GryviaLedgerEntry. Raises ReviewError when malformed."""
    request = request_of(review)
    return response(request, admit_ledger_entry(request))


def review_invoice(review: Any) -> dict[str, Any]:
    """Answer an AdmissionReview for a GryviaInvoice. Raises ReviewError when malformed."""
    request = request_of(review)
    return response(request, admit_invoice(request))
