"""Two operator replicas, one leader (`--leader-election`, issue 40 point 5): the replicas
elect one through a Lease; only the leader reconciles; the standby writes nothing (a
tenant's finalizer stays); /readyz says each one's role; a graceful stop hands over at the
standby's next try, a SIGKILL after the lease duration. The session operator is stopped for
the test (it does not take part in elections) and started again after it.

Timings are shortened (lease 4 s, renew deadline 3 s, retry 0.5 s) so the test waits
seconds; the hand-over times with the chart's defaults are measured by `make bench`."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gryvia_operator.controller.leader import micro_time
from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, kubectl_json, wait_phase
from tests.support.operator import FEATURES, OperatorProcess
from tests.support.relay import Relay, relayed_kubeconfig, server_address
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

LEASE = "gryvia-election-test"


def _replica(
    operator: OperatorProcess,
    folder: Path,
    name: str,
    ns: str,
    lease: str = LEASE,
    kubeconfig: Path | None = None,
    extra: tuple[str, ...] = (),
) -> OperatorProcess:
    """A replica with the session operator's account and features, in the election, its
    webhook off (the session's registration stays; the replicas would overwrite each other's)."""
    election = (
        "--leader-election",
        f"--leader-election-id={lease}",
        f"--leader-election-namespace={ns}",
        "--lease-duration=4",
        "--renew-deadline=3",
        "--retry-period=0.5",
        "--webhook-port=0",
    )
    return OperatorProcess(
        kubeconfig or operator.kubeconfig,
        folder / f"{name}.log",
        extra=(*FEATURES, *election, *extra),
        env={"POD_NAME": name},
    )


def _holder(sandbox: SandboxHandle, ns: str) -> str:
    lease = kubectl_json(sandbox, "get", "lease", LEASE, "-n", ns)
    return str(lease["spec"].get("holderIdentity") or "")


def _job_runs(sandbox: SandboxHandle, ns: str, name: str) -> None:
    job = make_job(name).image("none").gpus(0).command("sleep", "300").obj()
    for key in ("uid", "generation", "resourceVersion", "namespace"):
        job["metadata"].pop(key, None)
    create(sandbox, ns, job)
    wait_phase(sandbox, ns, name, "Running", timeout=60)


def _tenant(sandbox: SandboxHandle, name: str) -> dict[str, Any]:
    found: dict[str, Any] = kubectl_json(sandbox, "get", "gryviatenant", name)
    return found


@pytest.mark.slow
def test_two_replicas_elect_one_leader_and_hand_over(
    sandbox: SandboxHandle, live_operator: OperatorProcess, namespace: str, tmp_path: Path
) -> None:
    live_operator.stop()
    a = _replica(live_operator, tmp_path, "replica-a", namespace)
    b = _replica(live_operator, tmp_path, "replica-b", namespace)
    tenant = f"lead{uuid.uuid4().hex[:6]}"
    try:
        a.start()  # ready: it leads (nobody held the Lease) and its caches are synced
        assert a.get("/readyz") == (200, "ready: leader")
        assert _holder(sandbox, namespace) == "replica-a"
        sandbox.apply(
            {
                "apiVersion": "gryvia.io/v1alpha1",
                "kind": "GryviaTenant",
                "metadata": {"name": tenant},
                "spec": {"displayName": tenant, "deletionPolicy": "Delete"},
            }
        )
        wait_for(
            lambda: _tenant(sandbox, tenant)["metadata"].get("finalizers"),
            what="the leader's finalizer on the tenant",
        )
        finalizers = _tenant(sandbox, tenant)["metadata"]["finalizers"]

        b.start()  # ready as a standby: its indexes are listed, it reconciles nothing
        assert b.get("/readyz") == (200, "ready: standby (leader: replica-a)")
        assert b.get("/healthz") == (200, "ok: standby (leader: replica-a)")
        _job_runs(sandbox, namespace, "lead-1")
        assert _tenant(sandbox, tenant)["metadata"]["finalizers"] == finalizers

        # A graceful stop releases the Lease: the standby takes it at its next try.
        a.stop()
        stopped = time.monotonic()
        wait_for(lambda: _holder(sandbox, namespace) == "replica-b", timeout=10, interval=0.1)
        assert time.monotonic() - stopped < 3
        wait_for(lambda: b.get("/readyz") == (200, "ready: leader"), timeout=30)
        _job_runs(sandbox, namespace, "lead-2")

        # A SIGKILL leaves the Lease held: the standby takes it once it has not been renewed
        # for the lease duration (4 s here).
        a.start()
        assert a.get("/readyz") == (200, "ready: standby (leader: replica-b)")
        b.kill()
        killed = time.monotonic()
        wait_for(lambda: _holder(sandbox, namespace) == "replica-a", timeout=20, interval=0.1)
        assert 3 < time.monotonic() - killed < 10
        wait_for(lambda: a.get("/readyz") == (200, "ready: leader"), timeout=30)
        _job_runs(sandbox, namespace, "lead-3")
        assert _tenant(sandbox, tenant)["metadata"]["finalizers"] == finalizers
    finally:
        a.stop()
        b.stop()
        sandbox.kubectl_run("delete", "gryviatenant", tenant, "--wait=false", check=False)
        live_operator.start()


def test_a_standby_whose_watches_get_no_answer_is_not_ready_until_they_answer_again(
    sandbox: SandboxHandle, live_operator: OperatorProcess, namespace: str, tmp_path: Path
) -> None:
    """Issue 40 point 5: a replica that has lost its watches is not ready. The replica talks
    to the API server through a relay; a blackhole (connections open, no byte delivered)
    stops every watch without an error, as a dead middlebox does. The Lease is held by
    another identity for an hour, so the replica stays a standby and writes nothing beside
    the session operator."""
    lease = "gryvia-watch-probe-test"
    sandbox.apply(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": lease, "namespace": namespace},
            "spec": {
                "holderIdentity": "elsewhere",
                "leaseDurationSeconds": 3600,
                "renewTime": micro_time(datetime.now(UTC)),
            },
        }
    )
    with Relay(server_address(live_operator.kubeconfig)) as relay:
        relayed = relayed_kubeconfig(live_operator.kubeconfig, tmp_path / "relayed", relay)
        probe = ("--watch-probe-period=2",)
        replica = _replica(live_operator, tmp_path, "replica-w", namespace, lease, relayed, probe)
        try:
            replica.start()
            standby = "standby (leader: elsewhere)"
            assert replica.get("/readyz") == (200, f"ready: {standby}")
            relay.blackhole()
            wait_for(lambda: replica.get("/readyz")[0] == 503, timeout=30, what="not ready")
            text = replica.get("/readyz")[1]
            assert text.startswith("not ready: watches lost for "), text
            assert replica.get("/healthz") == (200, f"ok: {standby}")
            relay.forward()
            wait_for(
                lambda: replica.get("/readyz") == (200, f"ready: {standby}"),
                timeout=30,
                what="ready again once the API server answers",
            )
        finally:
            replica.stop()
