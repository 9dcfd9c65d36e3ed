"""Issue 18 part 2 against the sandbox, operator running with `--enable-reservations`.

A reservation of 8 H100 GPUs for one namespace, made with `gryvia reservation create`, whose
window (`WINDOW`: 45 s, a minute under `make test-all`) opens a few seconds after it is
created: at the start one H100 node is tainted and labelled; an ordinary 8-GPU H100 job
lands on the other H100 node and a second one waits with the Reservation blocker; the owner's
annotated job lands on the reserved node; another namespace's annotated job gets
Reservation=False/OwnerMismatch and a Warning event; at the end of the window the taint and
labels are gone. A second (immediate) reservation is released on delete, and a hand-labelled
orphan node is swept clean.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, get_job, wait_phase
from tests.support.cli import run_gryvia
from tests.support.depth import amount
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
WINDOW = amount(45, 60)
"""Seconds the first test's reservation window is open: the owner's job must be bound onto the
reserved node before it closes (a bound job keeps its node and its Bound condition after)."""
TAINT = "gryvia.io/reserved"
FOR, BY = "gryvia.io/reserved-for", "gryvia.io/reserved-by"
H100_NODES = ("gpu-h100-0", "gpu-h100-1")


@pytest.fixture(scope="module")
def resv_operator(sandbox: SandboxHandle, operator: OperatorProcess) -> Iterator[OperatorProcess]:
    """The session's operator (it runs with --enable-reservations); every reservation is
    deleted and its nodes released after the module, while the controller still runs."""
    try:
        yield operator
    finally:
        sandbox.kubectl_run("delete", "gryviareservations", "--all", "--wait=false", check=False)
        wait_for(
            lambda: not sandbox.kubectl_json("get", "gryviareservations")["items"],
            timeout=60,
            what="every reservation released and gone",
        )


@pytest.fixture
def spaces(sandbox: SandboxHandle, resv_operator: OperatorProcess) -> Iterator[tuple[str, str]]:
    """Two fresh namespaces: the owner's and another one."""
    with sandbox.fresh_namespace("rsv-own") as mine, sandbox.fresh_namespace("rsv-other") as other:
        yield mine, other


def gryvia(sandbox: SandboxHandle, tmp: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env |= {
        "KUBECONFIG": str(sandbox.kubeconfig),
        "GRYVIA_CONFIG_HOME": str(tmp / "config"),
        "NO_COLOR": "1",
    }
    done = run_gryvia(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def node(sandbox: SandboxHandle, name: str) -> dict[str, Any]:
    found: dict[str, Any] = sandbox.kubectl_json("get", "node", name)
    return found


def marks(sandbox: SandboxHandle, name: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """(our labels, our taints) on a node."""
    body = node(sandbox, name)
    labels = {k: v for k, v in body["metadata"].get("labels", {}).items() if k in (FOR, BY)}
    taints = [t for t in body.get("spec", {}).get("taints") or [] if t.get("key") == TAINT]
    return labels, taints


def reservation(sandbox: SandboxHandle, name: str) -> dict[str, Any] | None:
    done = sandbox.kubectl_run("get", "gryviareservation", name, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def state_of(sandbox: SandboxHandle, name: str) -> str:
    return str(((reservation(sandbox, name) or {}).get("status") or {}).get("state") or "")


def pod_node(sandbox: SandboxHandle, ns: str, job: str) -> str | None:
    pods = sandbox.kubectl_json("get", "pods", "-n", ns, "-l", f"gryvia.io/job={job}")["items"]
    bound = [p["spec"].get("nodeName") for p in pods if p["spec"].get("nodeName")]
    return bound[0] if bound else None


def condition(job: dict[str, Any], kind: str) -> dict[str, Any]:
    found = [c for c in job.get("status", {}).get("conditions") or [] if c["type"] == kind]
    return found[0] if found else {}


def annotated(job: dict[str, Any], name: str) -> dict[str, Any]:
    job["metadata"]["annotations"] = {"gryvia.io/reservation": name}
    return job


def test_a_window_claims_one_h100_node_for_its_owner_and_releases_it(
    sandbox: SandboxHandle, spaces: tuple[str, str], tmp_path: Path
) -> None:
    mine, other = spaces
    name = f"rsv-{uuid.uuid4().hex[:6]}"
    start = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(seconds=10)
    end = start + dt.timedelta(seconds=WINDOW)
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    gryvia(
        sandbox,
        tmp_path,
        "reservation",
        "create",
        name,
        "--owner",
        f"namespace:{mine}",
        "--gpu-type",
        "H100",
        "--gpus",
        "8",
        "--start",
        start.strftime(stamp),
        "--end",
        end.strftime(stamp),
    )
    try:
        wait_for(lambda: state_of(sandbox, name) == "pending", timeout=30, what="pending")
        assert all(marks(sandbox, n) == ({}, []) for n in H100_NODES)  # not before its start
        wait_for(lambda: state_of(sandbox, name) == "active", timeout=60, what="active")
        held = reservation(sandbox, name)["status"]  # type: ignore[index]
        assert held["allocatedGPUs"] == 8 and len(held["allocatedNodes"]) == 1
        reserved = held["allocatedNodes"][0]
        free = next(n for n in H100_NODES if n != reserved)
        assert marks(sandbox, reserved) == (
            {FOR: name, BY: mine},
            [{"key": TAINT, "value": mine, "effect": "NoSchedule"}],
        )
        assert name in gryvia(sandbox, tmp_path, "reservation", "list")
        assert reserved in gryvia(sandbox, tmp_path, "reservation", "get", name)
        cap = json.loads(gryvia(sandbox, tmp_path, "capacity", "--gpu-type", "H100", "-o", "json"))
        assert cap["types"][0]["reserved"] == 8

        create(sandbox, other, sh_job("plain", gpu_type="H100", script="sleep 120"))
        wait_for(lambda: pod_node(sandbox, other, "plain"), timeout=90, what="plain bound")
        assert pod_node(sandbox, other, "plain") == free
        create(sandbox, mine, annotated(sh_job("owned", gpu_type="H100", script="sleep 5"), name))
        create(sandbox, other, annotated(sh_job("theirs", gpu_type="H100", script="sleep 1"), name))

        wait_for(lambda: pod_node(sandbox, mine, "owned"), timeout=90, what="owned bound")
        assert pod_node(sandbox, mine, "owned") == reserved
        owned = wait_phase(sandbox, mine, "owned", "Succeeded", timeout=120)
        assert condition(owned, "Reservation")["reason"] == "Bound"

        def mismatch() -> dict[str, Any] | None:
            cond = condition(get_job(sandbox, other, "theirs"), "Reservation")
            return cond if cond.get("reason") == "OwnerMismatch" else None

        cond = wait_for(mismatch, timeout=60, what="OwnerMismatch")
        assert cond["status"] == "False" and mine in cond["message"]

        def warned() -> bool:
            events = sandbox.kubectl_json("get", "events", "-n", other)["items"]
            return any(
                e["reason"] == "ReservationOwnerMismatch" and e["type"] == "Warning" for e in events
            )

        wait_for(warned, timeout=30, what="a ReservationOwnerMismatch Warning event")

        left = (end - dt.datetime.now(dt.UTC)).total_seconds()
        wait_for(lambda: state_of(sandbox, name) == "expired", timeout=left + 30, what="expired")
        assert marks(sandbox, reserved) == ({}, [])
        final = reservation(sandbox, name)["status"]  # type: ignore[index]
        assert final["allocatedNodes"] == [] and final.get("actualEndTime")
    finally:
        sandbox.kubectl_run("delete", "gryviareservation", name, "--wait=false", check=False)


def test_delete_and_the_orphan_sweep_release_nodes(
    sandbox: SandboxHandle, resv_operator: OperatorProcess, tmp_path: Path
) -> None:
    name = f"rsv-{uuid.uuid4().hex[:6]}"
    gryvia(
        sandbox,
        tmp_path,
        "reservation",
        "create",
        name,
        "--owner",
        "team:ml",
        "--gpu-type",
        "H100",
        "--gpus",
        "16",
        "--duration",
        "10m",
        "--exclusive",
    )
    wait_for(lambda: state_of(sandbox, name) == "active", timeout=60, what="active")
    for n in H100_NODES:
        assert marks(sandbox, n)[0] == {FOR: name, BY: "ml"}
        assert node(sandbox, n)["metadata"]["labels"].get("gryvia.io/exclusive") == "true"
    with sandbox.fresh_namespace("rsv-blocked") as ns:  # every H100 node is held for team ml
        plain = sh_job("plain", gpu_type="H100", script="sleep 1")
        (tmp_path / "plain.yaml").write_text(json.dumps(plain))
        env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
        env |= {"KUBECONFIG": str(sandbox.kubeconfig), "GRYVIA_CONFIG_HOME": str(tmp_path)}
        explain = run_gryvia(
            "submit",
            "-f",
            str(tmp_path / "plain.yaml"),
            "-n",
            ns,
            "--explain",
            "-o",
            "json",
            env=env,
        )
        assert explain.returncode == 4, explain.stderr  # would wait
        explained = json.loads(explain.stdout)["items"][0]
        create(sandbox, ns, plain)

        def blocked() -> dict[str, Any] | None:
            pending = get_job(sandbox, ns, "plain").get("status", {}).get("pending") or {}
            return pending if pending.get("kind") == "Reservation" else None

        pending = wait_for(blocked, timeout=60, what="the Reservation blocker")
        assert pending["message"].startswith("fits only on nodes reserved for others")
        assert f"gpu-h100-0 (reservation {name} for ml)" in pending["message"]
        assert (pending["kind"], pending["resource"], pending["needed"]) == (
            "Reservation",
            f"reservation {name}",
            8,
        )
        assert explained["blocker"] == pending  # the same reason before and after submitting
        queue = gryvia(sandbox, tmp_path, "queue", "-n", ns)
        assert "plain" in queue and "fits only on nodes reserved for others" in queue
        assert "is reserved for ml" in get_job(sandbox, ns, "plain")["status"]["message"]
    gryvia(sandbox, tmp_path, "reservation", "delete", name, "--yes")
    wait_for(lambda: reservation(sandbox, name) is None, timeout=60, what="reservation gone")
    for n in H100_NODES:
        assert marks(sandbox, n) == ({}, [])
        assert "gryvia.io/exclusive" not in node(sandbox, n)["metadata"]["labels"]

    orphan = "gpu-l40-0"
    sandbox.kubectl_run("label", "node", orphan, f"{FOR}=ghost", f"{BY}=nobody")
    sandbox.kubectl_run("taint", "node", orphan, f"{TAINT}=nobody:NoSchedule")
    wait_for(lambda: marks(sandbox, orphan) == ({}, []), timeout=60, what="orphan swept")
