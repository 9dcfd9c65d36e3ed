"""Issue 17 acceptance, budgets: a 10 USD/month tenant budget with thresholds 50 and 90 %;
jobs spending 6 then 4 USD give exactly one 50 % and one 90 % alert, each an Event and one
signed POST to a receiver the test runs, none repeated after an operator SIGKILL and restart;
with block, the next job is Rejected naming the budget, its spend and limit.

A SKU at 3600 USD per GPU-hour (1 USD per GPU-second) lets short jobs spend those amounts.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, kubectl_json, wait_phase
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
SECRET = b"budget-test-secret"


@dataclass
class Receiver:
    """An HTTP server recording every POST (headers lower-cased, raw body)."""

    posts: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def received(self) -> list[tuple[dict[str, str], bytes]]:
        with self.lock:
            return list(self.posts)


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, str]]:
    box = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with box.lock:
                box.posts.append(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *_: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield box, f"http://127.0.0.1:{server.server_address[1]}/alerts"
    server.shutdown()
    server.server_close()


@pytest.fixture
def tenant(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    """A tenant whose only SKU bills L40 at 3600 USD per GPU-hour, with the receiver's Secret."""
    name = f"b{uuid.uuid4().hex[:6]}"
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaGpuSku",
            "metadata": {"name": f"{name}-l40"},
            "spec": {"gpuType": "L40", "hourlyRate": 3600},
        },
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaTenant",
            "metadata": {"name": name},
            "spec": {"deletionPolicy": "Delete", "allowedSkus": [f"{name}-l40"]},
        },
    )
    ns = f"tenant-{name}"
    wait_for(
        lambda: sandbox.kubectl_run("get", "ns", ns, check=False).returncode == 0,
        what="tenant namespace",
    )
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "alerts"},
        "data": {"secret": base64.b64encode(SECRET).decode()},
    }
    create(sandbox, ns, secret)
    yield name
    for kind, obj in (
        ("gryviabudget", name),
        ("gryviatenant", name),
        ("gryviagpusku", f"{name}-l40"),
    ):
        sandbox.kubectl_run("delete", kind, obj, "--wait=false", check=False)


def _budget(sandbox: SandboxHandle, name: str) -> dict[str, Any]:
    found: dict[str, Any] = kubectl_json(sandbox, "get", "gryviabudget", name)
    return found


def _alerts(sandbox: SandboxHandle, name: str) -> list[dict[str, Any]]:
    return list((_budget(sandbox, name).get("status") or {}).get("alerts") or [])


def _delivered(sandbox: SandboxHandle, name: str, *thresholds: float) -> list[dict[str, Any]]:
    alerts = _alerts(sandbox, name)
    done = {a["threshold"] for a in alerts if a.get("delivered") and a.get("event")}
    return alerts if done >= set(thresholds) else []


def _events(sandbox: SandboxHandle, name: str) -> list[dict[str, Any]]:
    items = kubectl_json(
        sandbox,
        "get",
        "events",
        "-n",
        "default",
        "--field-selector",
        f"involvedObject.name={name},involvedObject.kind=GryviaBudget",
    )["items"]
    return [e for e in items if e.get("reason") == "BudgetThreshold"]


def _verified(posts: list[tuple[dict[str, str], bytes]]) -> list[dict[str, Any]]:
    """The POST bodies, each checked against its X-Gryvia-Signature."""
    out = []
    for headers, body in posts:
        stamp = headers["x-gryvia-timestamp"]
        digest = hmac.new(SECRET, stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(headers["x-gryvia-signature"], f"sha256={digest}"), headers
        payload = json.loads(body)
        assert headers["x-gryvia-delivery"] == payload["key"]
        out.append(payload)
    return out


def _bump(sandbox: SandboxHandle, name: str, recipient: str) -> None:
    """Change the spec harmlessly and wait for a status computed from it (a pass ran)."""
    alerts = [{"threshold": 50, "recipients": [recipient]}, {"threshold": 90}]
    patched = sandbox.kubectl_json(
        "patch",
        "gryviabudget",
        name,
        "--type=merge",
        "-p",
        json.dumps({"spec": {"alerts": alerts}}),
    )
    generation = patched["metadata"]["generation"]
    wait_for(
        lambda: (
            (_budget(sandbox, name).get("status") or {}).get("observedGeneration") == generation
        ),
        timeout=90,
        what=f"budget status of generation {generation}",
    )


def test_alerts_once_each_across_a_restart_and_block_rejects_the_next_job(
    sandbox: SandboxHandle,
    tenant: str,
    receiver: tuple[Receiver, str],
    live_operator: OperatorProcess,
) -> None:
    box, url = receiver
    ns = f"tenant-{tenant}"
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaBudget",
            "metadata": {"name": tenant},
            "spec": {
                "scope": {"type": "tenant", "name": tenant},
                "period": {"type": "monthly"},
                "limits": {"costUSD": 10},
                "alerts": [{"threshold": 50}, {"threshold": 90}],
                "enforcement": {"enabled": True, "action": "block"},
                "receiver": {"url": url, "secretRef": {"name": "alerts", "namespace": ns}},
            },
        }
    )
    wait_for(
        lambda: (_budget(sandbox, tenant).get("status") or {}).get("state") == "active",
        timeout=90,
        what="budget status",
    )
    create(sandbox, ns, sh_job("six", gpus=1, gpu_type="L40", script="sleep 6"))
    wait_phase(sandbox, ns, "six", "Succeeded", timeout=180)
    wait_for(lambda: _delivered(sandbox, tenant, 50), timeout=90, what="the 50 % alert")
    spent = _budget(sandbox, tenant)["status"]["usage"]["costUSD"]
    assert 6.0 <= spent < 9.0, spent  # 1 USD per second of a 6 s run
    assert [p["threshold"] for p in _verified(box.received())] == [50]

    create(sandbox, ns, sh_job("four", gpus=1, gpu_type="L40", script="sleep 4"))
    wait_phase(sandbox, ns, "four", "Succeeded", timeout=180)
    wait_for(lambda: _delivered(sandbox, tenant, 50, 90), timeout=90, what="the 90 % alert")
    wait_for(
        lambda: _budget(sandbox, tenant)["status"].get("state") == "blocked",
        timeout=90,
        what="budget blocked",
    )

    live_operator.kill()  # SIGKILL: nothing may be sent again after the restart
    live_operator.start()
    _bump(sandbox, tenant, "ops")
    _bump(sandbox, tenant, "finance")  # the pass after the first one has ended too

    create(sandbox, ns, sh_job("seven", gpus=1, gpu_type="L40", script="sleep 1"))
    rejected = wait_phase(sandbox, ns, "seven", "Rejected", timeout=90)
    status = _budget(sandbox, tenant)["status"]
    message = rejected["status"]["message"]
    assert f"budget {tenant} is spent" in message, message
    assert f"{status['usage']['costUSD']:.2f} of 10.00 USD" in message, message
    (condition,) = [c for c in rejected["status"]["conditions"] if c["type"] == "Rejected"]
    assert condition["reason"] == "BudgetExceeded"

    payloads = _verified(box.received())
    assert [p["threshold"] for p in payloads] == [50, 90]
    assert len({p["key"] for p in payloads}) == 2
    events = _events(sandbox, tenant)
    assert sorted(e["message"].split(" crossed ")[1][:4] for e in events) == ["50 %", "90 %"]
    assert all(e.get("count", 1) == 1 for e in events)
    assert [a["threshold"] for a in status["alerts"]] == [50, 90]


def test_throttle_runs_at_most_max_concurrent_jobs(
    sandbox: SandboxHandle, namespace: str, live_operator: OperatorProcess
) -> None:
    name = f"throttle-{namespace}"[:63]
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaBudget",
            "metadata": {"name": name},
            "spec": {
                "scope": {"type": "namespace", "name": namespace},
                "period": {"type": "daily"},
                "limits": {"maxConcurrentJobs": 1},
                "enforcement": {"enabled": True, "action": "throttle"},
            },
        }
    )
    try:
        wait_for(
            lambda: (_budget(sandbox, name).get("status") or {}).get("state"),
            timeout=90,
            what="budget status",
        )
        create(sandbox, namespace, sh_job("first", gpus=1, gpu_type="L40", script="sleep 8"))
        wait_phase(sandbox, namespace, "first", "Running", timeout=120)
        create(sandbox, namespace, sh_job("second", gpus=1, gpu_type="L40", script="sleep 1"))
        held = wait_phase(sandbox, namespace, "second", "Queued", timeout=60)
        assert f"budget {name} allows 1 job at once" in held["status"]["message"]
        done = wait_phase(sandbox, namespace, "second", "Succeeded", timeout=180)
        first = wait_phase(sandbox, namespace, "first", "Succeeded", timeout=60)
        assert done["status"]["startTime"] >= first["status"]["completionTime"]
    finally:
        sandbox.kubectl_run("delete", "gryviabudget", name, "--wait=false", check=False)
