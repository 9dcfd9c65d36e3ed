"""The chart's opt-in billing ledger (`billing.ledger.enabled`, issue 17)."""

from __future__ import annotations

from tests.unit.test_chart import container, one, render, render_error


def test_the_ledger_is_off_by_default() -> None:
    objs = render()
    assert "--billing-ledger" not in container(objs)["args"]
    hooks = one(objs, "ValidatingWebhookConfiguration")["webhooks"]
    resources = {r for h in hooks for r in h["rules"][0]["resources"]}
    assert not resources & {"gryvialedgerentries", "gryviainvoices"}
    assert {"gryviaaijobs", "gryviausagerecords"} <= resources


def test_the_ledger_value_turns_on_the_writer_and_its_webhooks() -> None:
    objs = render("--set", "billing.ledger.enabled=true")
    assert "--billing-ledger" in container(objs)["args"]
    hooks = {
        h["rules"][0]["resources"][0]: h
        for h in one(objs, "ValidatingWebhookConfiguration")["webhooks"]
    }
    for plural, kind in (("gryvialedgerentries", "ledgerentry"), ("gryviainvoices", "invoice")):
        hook = hooks[plural]
        assert hook["rules"][0]["operations"] == ["UPDATE", "DELETE"]
        assert hook["rules"][0]["scope"] == "Cluster"
        assert (
            hook["clientConfig"]["service"]["path"] == f"/validate-gryvia-io-v1alpha1-gryvia{kind}"
        )
        assert "namespaceSelector" not in hook
    assert hooks["gryviaaijobs"]["rules"][0]["scope"] == "Namespaced"
    assert "namespaceSelector" in hooks["gryviaaijobs"]


def test_the_ledger_needs_the_webhook() -> None:
    error = render_error("--set", "billing.ledger.enabled=true,webhook.enabled=false")
    assert "billing.ledger.enabled needs webhook.enabled" in error


def test_stripe_is_off_by_default_and_its_value_passes_the_flags_and_the_secret() -> None:
    assert not [a for a in container(render())["args"] if a.startswith("--stripe")]
    objs = render("--set", "billing.ledger.enabled=true,billing.stripe.enabled=true")
    c = container(objs)
    assert "--stripe" in c["args"]
    assert "--stripe-api-base=https://api.stripe.com" in c["args"]
    assert "--stripe-days-until-due=30" in c["args"]
    env = {e["name"]: e.get("valueFrom", {}).get("secretKeyRef") for e in c["env"]}
    assert env["GRYVIA_OPERATOR_STRIPE_API_KEY"] == {"name": "gryvia-stripe", "key": "api-key"}
    assert env["GRYVIA_OPERATOR_STRIPE_WEBHOOK_SECRET"] == {
        "name": "gryvia-stripe",
        "key": "webhook-secret",
    }
    assert not [a for a in c["args"] if "sk_test" in a or "whsec" in a]  # never on the line


def test_stripe_needs_the_ledger() -> None:
    error = render_error("--set", "billing.stripe.enabled=true")
    assert "billing.stripe.enabled needs billing.ledger.enabled" in error
