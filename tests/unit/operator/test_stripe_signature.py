"""Stripe webhook signatures, checked by the official library (`controller.stripeapi.
verify_event`), on payloads signed here by Stripe's documented scheme: the header
`t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<payload>" under the signing secret>`
(https://docs.stripe.com/webhooks#verify-manually); and the `--stripe` settings check."""

from __future__ import annotations

import hashlib
import hmac
import json
import time

import pytest
from pydantic import SecretStr

from gryvia_operator.controller.stripeapi import (
    SIGNATURE_TOLERANCE,
    StripeSignatureError,
    verify_event,
)
from gryvia_operator.stripesettings import StripeSettings, stripe_problems

SECRET = "whsec_test_secret"
EVENT = {
    "id": "evt_1",
    "object": "event",
    "type": "invoice.paid",
    "data": {"object": {"id": "in_1", "object": "invoice", "metadata": {}}},
}


def sign(payload: bytes, secret: str = SECRET, at: int | None = None) -> str:
    """The Stripe-Signature header Stripe sends for `payload`."""
    t = int(time.time()) if at is None else at
    mac = hmac.new(secret.encode(), f"{t}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def test_a_correctly_signed_event_is_returned() -> None:
    payload = json.dumps(EVENT).encode()
    assert verify_event(payload, sign(payload), SECRET) == EVENT


def test_one_good_signature_among_several_is_enough() -> None:
    """Stripe sends one v1 per active secret while a secret is being rolled."""
    payload = json.dumps(EVENT).encode()
    header = sign(payload, "whsec_old") + "," + sign(payload).split(",")[1]
    assert verify_event(payload, header, SECRET)["id"] == "evt_1"


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        (lambda p: sign(p, secret="whsec_other"), "No signatures found matching"),
        (lambda p: sign(p + b" "), "No signatures found matching"),  # body changed after
        (lambda p: sign(p, at=int(time.time()) - SIGNATURE_TOLERANCE - 60), "tolerance"),
        (lambda p: "", "No Stripe-Signature header"),
        (lambda p: "v1=abc", "Unable to extract timestamp"),
    ],
    ids=["other-secret", "tampered-body", "old-timestamp", "no-header", "no-timestamp"],
)
def test_a_bad_signature_is_refused_with_its_reason(header, reason) -> None:  # type: ignore[no-untyped-def]
    payload = json.dumps(EVENT).encode()
    with pytest.raises(StripeSignatureError, match=reason):
        verify_event(payload, header(payload), SECRET)


def test_a_signed_body_that_is_no_json_object_is_refused() -> None:
    for payload in (b"not json", b"[1, 2]"):
        with pytest.raises(StripeSignatureError, match="no JSON"):
            verify_event(payload, sign(payload), SECRET)


def settings(**values: object) -> StripeSettings:
    return StripeSettings.model_validate({"stripe": True, **values})


def test_stripe_needs_a_test_key_a_signing_secret_and_the_metrics_port() -> None:
    ok = settings(stripe_api_key=SecretStr("sk_test_1"), stripe_webhook_secret=SecretStr(SECRET))
    assert stripe_problems(ok, 9090) == []
    assert stripe_problems(StripeSettings(), 0) == []  # off: nothing needed
    live = settings(stripe_api_key=SecretStr("sk_live_1"), stripe_webhook_secret=SecretStr(SECRET))
    assert [p for p in stripe_problems(live, 9090) if "no test-mode key" in p]
    assert "sk_live_1" not in " ".join(stripe_problems(live, 9090))  # secrets never quoted
    missing = stripe_problems(settings(), 0)
    assert len(missing) == 3
    assert any("GRYVIA_OPERATOR_STRIPE_API_KEY" in p for p in missing)
    assert any("GRYVIA_OPERATOR_STRIPE_WEBHOOK_SECRET" in p for p in missing)
    assert any("--metrics-port" in p for p in missing)
