"""Stripe test mode against stripe-mock (issue 44 point 4, acceptance): a finalized invoice is
pushed once (customer, one item per line, the invoice finalized there) and its Stripe id
stored; a second reconcile and an operator restart make no Stripe call; a signed invoice.paid
event marks it Paid; a badly signed one is refused with one clear log line and changes
nothing.

stripe-mock keeps no state, so "one Stripe invoice" is counted on the operator's side: its
`gryvia_operator_stripe_requests_total` by step (and its log lines), not in Stripe."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
import re
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.stripemock import stripe_mock
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox, pytest.mark.operator("--stripe")]
SECRET = "whsec_gryvia_integration"
ENV = ("STRIPE_API_KEY", "STRIPE_WEBHOOK_SECRET", "STRIPE_API_BASE")


@pytest.fixture(scope="module")
def stripe_operator(
    operator: OperatorProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    """stripe-mock on loopback and the session's operator's Stripe environment pointing at
    it (the `--stripe` marker restarts the operator after this fixture, so it reads them)."""
    log = tmp_path_factory.mktemp("stripe") / "stripe-mock.log"
    with stripe_mock(log) as base:
        values = ("sk_test_gryvia", SECRET, base)
        operator.env |= {f"GRYVIA_OPERATOR_{k}": v for k, v in zip(ENV, values, strict=True)}
        try:
            yield operator
        finally:
            for key in ENV:  # the next configuration's restart runs without them
                operator.env.pop(f"GRYVIA_OPERATOR_{key}", None)


@pytest.fixture
def env(sandbox: SandboxHandle, tmp_path: Path) -> dict[str, str]:
    """Environment of `gryvia` subprocesses against the sandbox."""
    out = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    return out | {
        "KUBECONFIG": str(sandbox.kubeconfig),
        "GRYVIA_CONFIG_HOME": str(tmp_path / "config"),
        "NO_COLOR": "1",
    }


def _record(tenant: str, ns: str, n: int, cost: float) -> dict[str, Any]:
    """A sealed usage record of November 2026."""
    start = dt.datetime(2026, 11, 3, 8, tzinfo=dt.UTC) + dt.timedelta(hours=n)
    uid = str(uuid.uuid4())
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaUsageRecord",
        "metadata": {"name": f"usage-{uid}", "namespace": ns},
        "spec": {
            "tenant": tenant,
            "job": f"job-{n}",
            "jobUID": uid,
            "sku": "a100-80g",
            "gpuType": "A100-80G",
            "gpus": 1,
            "rate": 4.0,
            "currency": "USD",
            "start": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "end": (start + dt.timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "gpuHours": cost / 4,
            "cost": cost,
            "final": True,
        },
    }


def _metric(op: OperatorProcess, name: str, **labels: str) -> float:
    """One sample of the operator's /metrics (0 when absent)."""
    status, text = op.get("/metrics", op.metrics_port)
    assert status == 200, text
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    pattern = re.escape(name + (f"{{{want}}}" if labels else "")) + r" (\S+)"
    found = re.search(rf"^{pattern}$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def _calls(op: OperatorProcess) -> dict[str, float]:
    steps = ("customer", "invoice", "item", "finalize", "customer-search", "invoice-search")
    return {
        s: _metric(op, "gryvia_operator_stripe_requests_total", step=s, result="ok") for s in steps
    }


def _post_event(op: OperatorProcess, payload: bytes, header: str) -> tuple[int, str]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{op.metrics_port}/stripe/webhook",
        data=payload,
        headers={"Stripe-Signature": header, "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _sign(payload: bytes, secret: str) -> str:
    """Stripe's scheme: t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<payload>">."""
    t = int(time.time())
    mac = hmac.new(secret.encode(), f"{t}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def test_a_finalized_invoice_is_pushed_once_and_paid_by_a_signed_event(
    sandbox: SandboxHandle, stripe_operator: OperatorProcess, env: dict[str, str]
) -> None:
    op = stripe_operator
    tenant = f"str-{uuid.uuid4().hex[:6]}"
    ns = f"tenant-{tenant}"
    sandbox.kubectl_run("create", "namespace", ns)
    owner = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaTenant",
        "metadata": {"name": tenant},
        "spec": {"displayName": tenant},
    }
    try:
        sandbox.apply(owner, verb="create")
        sandbox.apply(*[_record(tenant, ns, n, 1.2345) for n in range(3)], verb="create")

        def entries() -> int:
            got = sandbox.kubectl_json(
                "get", "gryvialedgerentries", "-l", f"gryvia.io/tenant={tenant}"
            )
            return len(got["items"])

        wait_for(lambda: entries() == 3, timeout=120, what="3 ledger entries")
        before = _calls(op)
        done = run_gryvia("invoice", "finalize", tenant, "2026-11", "-o", "json", env=env)
        assert done.returncode == 0, done.stderr
        name = json.loads(done.stdout)["metadata"]["name"]

        def pushed() -> dict[str, Any] | None:
            inv = sandbox.kubectl_json("get", "gryviainvoice", name)
            stripe = (inv.get("status") or {}).get("stripe") or {}
            return inv if stripe.get("pushedAt") else None

        inv = wait_for(pushed, timeout=60, what=f"{name} pushed to Stripe")
        stripe = inv["status"]["stripe"]
        assert stripe["invoiceId"].startswith("in_") and stripe["customerId"].startswith("cus_")
        assert inv["spec"]["total"] == "3.70"  # 3 x 1.2345 = 3.7035, rounded once
        first = _calls(op)
        made = {step: first[step] - before[step] for step in first}
        # stripe-mock's searches answer fixtures without our metadata: both are created
        assert made == {
            "customer-search": 1,
            "customer": 1,
            "invoice-search": 1,
            "invoice": 1,
            "item": 3,
            "finalize": 1,
        }, made

        # A second reconcile in the same process: the invoice changes, the pusher passes
        # over it (two passes: one may have begun before the change), and calls nothing.
        passes = _metric(op, "gryvia_operator_stripe_passes_total")
        sandbox.kubectl_run("annotate", "gryviainvoice", name, "test.gryvia.io/poke=1")
        wait_for(
            lambda: _metric(op, "gryvia_operator_stripe_passes_total") >= passes + 2,
            timeout=60,
            what="two Stripe passes after the change",
        )
        assert _calls(op) == first
        # And after a crash: a new process passes over every invoice and calls nothing.
        op.kill()
        op.start()
        wait_for(
            lambda: _metric(op, "gryvia_operator_stripe_passes_total") >= 1,
            timeout=60,
            what="the restarted operator's first Stripe pass",
        )
        assert sum(_calls(op).values()) == 0
        creates = op.log.read_text().count(f"pushed {name} ")
        assert creates == 1, f"{name} pushed {creates} times; see {op.log}"

        event = {
            "id": f"evt_{uuid.uuid4().hex[:12]}",
            "object": "event",
            "type": "invoice.paid",
            "data": {
                "object": {
                    "id": stripe["invoiceId"],
                    "object": "invoice",
                    "metadata": {"gryvia_invoice": name},
                }
            },
        }
        payload = json.dumps(event).encode()

        # A bad signature: 400, one log line naming the reason, nothing changed.
        version = sandbox.kubectl_json("get", "gryviainvoice", name)["metadata"]["resourceVersion"]
        code, body = _post_event(op, payload, _sign(payload, "whsec_someone_else"))
        assert code == 400 and "bad signature" in body, (code, body)
        line = wait_for(
            lambda: next(
                (x for x in op.log.read_text().splitlines() if "stripe webhook refused" in x),
                None,
            ),
            timeout=10,
            what="the refusal's log line",
        )
        assert "HTTP 400" in line and "No signatures found matching" in line, line
        after = sandbox.kubectl_json("get", "gryviainvoice", name)
        assert after["metadata"]["resourceVersion"] == version
        assert after["spec"]["state"] == "Finalized" and "payment" not in after["spec"]

        # A correctly signed invoice.paid: Paid, with Stripe's invoice as the reference.
        code, body = _post_event(op, payload, _sign(payload, SECRET))
        assert code == 200 and json.loads(body)["outcome"] == "paid", (code, body)

        def paid() -> dict[str, Any] | None:
            spec = sandbox.kubectl_json("get", "gryviainvoice", name)["spec"]
            return spec if spec["state"] == "Paid" else None

        spec = wait_for(paid, timeout=30, what=f"{name} Paid")
        assert spec["payment"] == {"method": "stripe", "reference": stripe["invoiceId"]}
        assert spec["paidAt"].endswith("Z")
        # Stripe retries deliveries: the same event again changes nothing.
        code, body = _post_event(op, payload, _sign(payload, SECRET))
        assert code == 200 and json.loads(body)["outcome"] == "already-paid", body

        shown = run_gryvia("invoice", "show", name, env=env)
        assert shown.returncode == 0, shown.stderr
        assert f"Stripe:   {stripe['invoiceId']} (customer {stripe['customerId']}" in shown.stdout
    finally:
        sandbox.kubectl_run("delete", "namespace", ns, "--wait=false", check=False)
