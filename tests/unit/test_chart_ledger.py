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
