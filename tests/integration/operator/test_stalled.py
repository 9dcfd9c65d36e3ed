"""A running job whose GPUs sit idle and whose log is silent for the window becomes
`Stalled` (condition, Warning Event, and one signed POST of a GryviaJobHook on `Stalled`),
without any idle policy; a job that keeps logging on idle GPUs does not (docs/gpu-metrics.md).
The window is 10 s here (`--stalled-seconds`), the samples come every 5 s (the session
operator's `--gpu-sample-seconds`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, get_job, kubectl_json, wait_phase
from tests.support.hookreceiver import ALLOWED, Receiver, hook_status, serve, signed_hook
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    box = Receiver()
    server = serve(box, ALLOWED)
    yield box
    server.shutdown()
    server.server_close()


@pytest.fixture
def ns(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    with sandbox.fresh_namespace("stall") as name:
        yield name


def _stalled(sandbox: SandboxHandle, ns: str, job: str) -> dict[str, Any] | None:
    conditions = (get_job(sandbox, ns, job).get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Stalled"), None)


@pytest.mark.operator("--stalled-seconds=10")
def test_an_idle_silent_job_is_stalled_and_a_logging_one_is_not(
    sandbox: SandboxHandle, ns: str, receiver: Receiver
) -> None:
    create(
        sandbox,
        ns,
        *signed_hook("stalls", receiver.url, ["Stalled"]),
        sh_job("quiet", gpus=1, script="echo loading; sleep 600"),
        sh_job("chatty", gpus=1, script="while :; do echo tick; sleep 1; done"),
    )
    for name in ("quiet", "chatty"):
        wait_phase(sandbox, ns, name, "Running", timeout=120)

    def stalled() -> dict[str, Any] | None:
        found = _stalled(sandbox, ns, "quiet")
        return found if found and found["status"] == "True" else None

    condition = wait_for(stalled, timeout=90, interval=1, what="quiet Stalled")
    assert condition["reason"] == "IdleAndSilent", condition
    assert (
        "no log line since" in condition["message"] and "GPU activity 0.0 %" in condition["message"]
    ), condition

    def warned() -> list[tuple[str, str]] | None:
        items = kubectl_json(
            sandbox, "get", "events", "-n", ns, "--field-selector", "involvedObject.name=quiet"
        )["items"]
        found = [(e["type"], e["reason"]) for e in items if e["reason"] == "Stalled"]
        return found or None

    assert wait_for(warned, timeout=30, what="the Stalled event") == [("Warning", "Stalled")]
    # idle GPUs too, for as long, but it logs every second
    chatty = get_job(sandbox, ns, "chatty")
    assert (chatty["status"].get("metrics") or {}).get("idleSince"), chatty["status"]
    assert _stalled(sandbox, ns, "chatty") is None
    wait_for(
        lambda: hook_status(sandbox, ns, "stalls").get("deliveries") == 1,
        timeout=60,
        what="the Stalled hook delivery",
    )
    (payload,) = {p["delivery"]: p for p in receiver.accepted()}.values()  # signatures checked
    assert (payload["event"], payload["name"]) == ("Stalled", "quiet"), payload
    assert payload["time"] == condition["lastTransitionTime"], payload
    assert "no log line since" in payload["message"], payload  # the condition's message
