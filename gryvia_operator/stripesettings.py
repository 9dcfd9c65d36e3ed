"""The operator's Stripe settings (opt-in `--stripe`, docs/billing.md "Stripe test mode"):
fields of the one `OperatorSettings` object, their flags, and the check made at start.

The API key and the webhook signing secret come only from the environment
(`GRYVIA_OPERATOR_STRIPE_API_KEY`, `GRYVIA_OPERATOR_STRIPE_WEBHOOK_SECRET`; the chart fills
them from a Secret), never from flags, which any process on the node can read.
"""

from __future__ import annotations

import argparse

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

TEST_KEY_PREFIXES = ("sk_test_", "rk_test_")
"""Stripe's test-mode secret and restricted keys (Stripe docs, "API keys":
https://docs.stripe.com/keys#obtain-api-keys); live keys (`sk_live_`) are refused."""


class StripeSettings(BaseSettings):
    """The Stripe part of `OperatorSettings` (same `GRYVIA_OPERATOR_` prefix)."""

    stripe: bool = False
    """Push Finalized GryviaInvoices to Stripe and mark them Paid on its `invoice.paid`
    events (served on the metrics port at /stripe/webhook)."""
    stripe_api_key: SecretStr | None = None
    """A test-mode secret key (`sk_test_...` or `rk_test_...`); env only."""
    stripe_webhook_secret: SecretStr | None = None
    """The webhook endpoint's signing secret (`whsec_...`); env only."""
    stripe_api_base: str = Field(default="https://api.stripe.com", pattern=r"^https?://\S+$")
    """Stripe's API address (stripe-mock's, e.g. http://127.0.0.1:12111, in tests)."""
    stripe_days_until_due: int = Field(default=30, ge=1, le=365)
    """Days a pushed invoice gives the tenant to pay (Stripe's `days_until_due`)."""


def add_stripe_arguments(p: argparse.ArgumentParser) -> None:
    """The `--stripe*` flags of `gryvia-operator` (the secrets have none)."""
    p.add_argument(
        "--stripe",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="push Finalized invoices to Stripe (test mode) and mark them Paid on its "
        "invoice.paid events at /stripe/webhook on the metrics port; needs "
        "GRYVIA_OPERATOR_STRIPE_API_KEY and GRYVIA_OPERATOR_STRIPE_WEBHOOK_SECRET "
        "(env GRYVIA_OPERATOR_STRIPE); default off",
    )
    p.add_argument(
        "--stripe-api-base",
        metavar="URL",
        help="Stripe's API address (default https://api.stripe.com; stripe-mock's in tests)",
    )
    p.add_argument(
        "--stripe-days-until-due",
        type=int,
        help="days a pushed invoice gives the tenant to pay (default 30)",
    )


def stripe_problems(s: StripeSettings, metrics_port: int) -> list[str]:
    """Why `--stripe` cannot run with these settings (empty: it can, or it is off); each
    reason names the setting and the fix. Secrets are never quoted."""
    if not s.stripe:
        return []
    problems = []
    key = s.stripe_api_key.get_secret_value() if s.stripe_api_key else ""
    if not key:
        problems.append(
            "--stripe needs GRYVIA_OPERATOR_STRIPE_API_KEY: set it to a test-mode secret key "
            "(sk_test_...; the chart reads it from billing.stripe.secretName)"
        )
    elif not key.startswith(TEST_KEY_PREFIXES):
        problems.append(
            "GRYVIA_OPERATOR_STRIPE_API_KEY is no test-mode key (sk_test_... or rk_test_...): "
            "Gryvia's Stripe push is built and tested for Stripe test mode only"
        )
    secret = s.stripe_webhook_secret.get_secret_value() if s.stripe_webhook_secret else ""
    if not secret:
        problems.append(
            "--stripe needs GRYVIA_OPERATOR_STRIPE_WEBHOOK_SECRET: set it to the webhook "
            "endpoint's signing secret (whsec_..., shown by Stripe for the endpoint)"
        )
    if not metrics_port:
        problems.append(
            "--stripe serves Stripe's webhook on the metrics port (/stripe/webhook): give "
            "--metrics-port a port, not 0"
        )
    return problems
