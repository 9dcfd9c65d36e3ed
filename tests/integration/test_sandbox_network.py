"""Each sandbox pod has its own network: one port per pod, EndpointSlices, nothing left after."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import signal
import socket
import subprocess
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.sandbox import binaries, cluster, netplan, podnet
from tests.conftest import SandboxHandle
from tests.integration.test_sandbox import _apply, _get, _job, _job_condition, _ns
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

PORT = 29500

SERVER_CLIENT = textwrap.dedent("""
    import os, pathlib, socket, sys, time
    rank = int(os.environ["JOB_COMPLETION_INDEX"])
    if rank == 0:
        srv = socket.create_server(("0.0.0.0", int(os.environ["PORT"])))
        print("listening", flush=True)
        srv.settimeout(90)
        conn, _ = srv.accept()
        conn.sendall(os.environ["TOKEN"].encode())
        conn.close()
        go = pathlib.Path(os.environ["GO"])
        deadline = time.monotonic() + 90
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # keep the port bound until the test has seen both servers
        sys.exit(0 if go.exists() else 2)
    for _ in range(600):
        try:
            conn = socket.create_connection((os.environ["SERVER"], int(os.environ["PORT"])), 2)
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("never reached " + os.environ["SERVER"])
    print("received", conn.recv(100).decode(), flush=True)
""")


def _net(sandbox: SandboxHandle) -> netplan.SandboxNet:
    net = podnet.load(sandbox.kubeconfig.parent)
    assert net is not None, "the sandbox has no pod network (are we root?)"
    return net


def _logs_by_index(sandbox: SandboxHandle, ns: str, job: str) -> dict[str, str]:
    pods = _get(sandbox, ns, "pods", "-l", f"job-name={job}")["items"]
    return {
        p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: (
            sandbox.kubectl_run("logs", "-n", ns, p["metadata"]["name"], check=False).stdout
        )
        for p in pods
    }


def test_two_jobs_listen_on_one_port_and_each_client_reaches_its_own_server(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    net = _net(sandbox)
    ns = _ns(sandbox)
    go = tmp_path / "go"
    tokens = {job: uuid.uuid4().hex for job in ("left", "right")}
    objs: list[dict[str, Any]] = []
    for job, token in tokens.items():
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"{job}-svc"},
                "spec": {"clusterIP": "None", "selector": {"app": job}, "ports": [{"port": PORT}]},
            }
        )
        env = [
            {"name": "SERVER", "value": f"{job}-0.{job}-svc"},
            {"name": "PORT", "value": str(PORT)},
            {"name": "TOKEN", "value": token},
            {"name": "GO", "value": str(go)},
        ]
        script = f"exec python3 -c '{SERVER_CLIENT}'"
        objs.append(_job(job, script, completions=2, subdomain=f"{job}-svc", env=env))
    _apply(sandbox, ns, *objs)

    def both_listening() -> bool:
        logs = [_logs_by_index(sandbox, ns, job).get("0", "") for job in tokens]
        return all("listening" in text for text in logs)

    wait_for(both_listening, timeout=90, what="both servers listening on one port")
    go.touch()
    for job in tokens:
        assert wait_for(lambda j=job: _job_condition(sandbox, ns, j), what=f"{job} end") == (
            "Complete"
        )
    for job, token in tokens.items():
        logs = _logs_by_index(sandbox, ns, job)
        assert logs["1"].strip() == f"received {token}", logs
    pods = _get(sandbox, ns, "pods")["items"]
    ips = [p["status"]["podIP"] for p in pods]
    assert len(set(ips)) == 4
    assert all(ipaddress.IPv4Address(ip) in net.subnet for ip in ips), ips
    events = _get(sandbox, ns, "events")["items"]
    assert [e for e in events if e["reason"] == "FailedToUpdateEndpointSlices"] == []


def test_each_pod_has_a_temporary_directory_of_its_own(
    sandbox: SandboxHandle, tmp_path: Path
) -> None:
    """Two pods write their token to the same temporary path (the one the Slurm runtime
    unpacks into), then read it back: each reads its own, as in containers with their own /tmp."""
    ns = _ns(sandbox)
    go = tmp_path / "go"
    tokens = {job: uuid.uuid4().hex for job in ("tmp-a", "tmp-b")}
    script = (
        'd="${TMPDIR:-/tmp}/gryvia-slurm-0"; mkdir -p "$d"; echo "$TOKEN" > "$d/token"; '
        'echo written; while [ ! -e "$GO" ]; do sleep 0.2; done; echo "read $(cat "$d/token")"'
    )
    _apply(
        sandbox,
        ns,
        *(
            _job(job, script, env=[{"name": "TOKEN", "value": t}, {"name": "GO", "value": str(go)}])
            for job, t in tokens.items()
        ),
    )

    def both_written() -> bool:
        return all("written" in _logs_by_index(sandbox, ns, job).get("0", "") for job in tokens)

    wait_for(both_written, timeout=90, what="both pods wrote their token")
    go.touch()
    for job, token in tokens.items():
        assert wait_for(lambda j=job: _job_condition(sandbox, ns, j), what=f"{job} end") == (
            "Complete"
        )
        assert f"read {token}" in _logs_by_index(sandbox, ns, job)["0"]


def test_services_get_endpoint_slices_with_the_pod_addresses(sandbox: SandboxHandle) -> None:
    net = _net(sandbox)
    ns = _ns(sandbox)
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"web-{i}", "labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "python:3.11",
                        "command": ["python3", "-m", "http.server", str(PORT)],
                        "ports": [{"containerPort": PORT}],
                    }
                ]
            },
        }
        for i in range(2)
    ]
    services = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": PORT}]}
            | ({"clusterIP": "None"} if name == "web-headless" else {}),
        }
        for name in ("web", "web-headless")
    ]
    _apply(sandbox, ns, *pods, *services)

    def running_ips() -> set[str] | None:
        items = _get(sandbox, ns, "pods")["items"]
        ok = len(items) == 2 and all(p["status"].get("phase") == "Running" for p in items)
        return {p["status"]["podIP"] for p in items} if ok else None

    ips = wait_for(running_ips, what="both pods Running")
    assert all(ipaddress.IPv4Address(ip) in net.subnet for ip in ips)

    def slice_addresses(service: str) -> set[str] | None:
        slices = _get(sandbox, ns, "endpointslices", "-l", f"kubernetes.io/service-name={service}")
        found = {
            address
            for s in slices["items"]
            for e in s.get("endpoints") or []
            if (e.get("conditions") or {}).get("ready")
            for address in e["addresses"]
        }
        return found if found == ips else None

    for service in ("web", "web-headless"):
        wait_for(lambda s=service: slice_addresses(s), what=f"EndpointSlice of {service}")

    # the web servers answer on their pod addresses from the host side
    def answers(ip: str) -> bytes | None:
        try:
            with socket.create_connection((ip, PORT), timeout=5) as conn:
                conn.sendall(b"GET / HTTP/1.0\r\n\r\n")
                return conn.recv(100)
        except OSError:  # the server process is Running but not listening yet
            return None

    for ip in ips:
        assert wait_for(lambda i=ip: answers(i), what=f"web server on {ip}").startswith(
            b"HTTP/1.0 200"
        )
    events = _get(sandbox, ns, "events")["items"]
    warnings = [e for e in events if e["reason"] == "FailedToUpdateEndpointSlices"]
    assert warnings == []


def _leftovers(net: netplan.SandboxNet) -> list[str]:
    def ip_json(*args: str) -> list[dict[str, Any]]:
        out = subprocess.run(["ip", "-j", *args], capture_output=True, text=True, check=True)
        return json.loads(out.stdout or "[]")

    found = [f"netns {n['name']}" for n in ip_json("netns", "list")]
    found = [f for f in found if f.startswith(f"netns gryvia-{net.net_id}-")]
    for link in ip_json("addr", "show"):
        name = link["ifname"]
        if name.startswith((f"gv{net.net_id}", f"gs{net.net_id}")):
            found.append(f"link {name}")
        for addr in link.get("addr_info") or []:
            if addr["family"] == "inet" and ipaddress.IPv4Address(addr["local"]) in net.subnet:
                found.append(f"address {addr['local']} on {name}")
    return found


@contextlib.contextmanager
def _home(tmp_path: Path) -> Iterator[None]:
    previous = os.environ.get("GRYVIA_SANDBOX_HOME")
    os.environ["GRYVIA_SANDBOX_HOME"] = str(tmp_path / "home")
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("GRYVIA_SANDBOX_HOME", None)
        else:
            os.environ["GRYVIA_SANDBOX_HOME"] = previous


def _sleeper(box: cluster.Sandbox) -> str:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "sleeper", "namespace": "default"},
        "spec": {"containers": [{"name": "main", "image": "x", "command": ["sleep", "300"]}]},
    }
    kubectl = [str(binaries.path_of("kubectl")), "--kubeconfig", str(box.kubeconfig)]
    subprocess.run([*kubectl, "create", "-f", "-"], input=json.dumps(pod), text=True, check=True)

    def ip() -> str | None:
        out = subprocess.run(
            [*kubectl, "get", "pod", "sleeper", "-o", "json"],
            text=True,
            capture_output=True,
            check=True,
        )
        status = json.loads(out.stdout)["status"]
        return status.get("podIP") if status.get("phase") == "Running" else None

    return wait_for(ip, what="sleeper Running")


def test_down_and_the_next_up_after_a_crash_leave_no_network_behind(tmp_path: Path) -> None:
    name = f"net-{uuid.uuid4().hex[:6]}"
    renewed: netplan.SandboxNet | None = None
    with _home(tmp_path):
        try:
            box = cluster.up(name, "1xcpu")
            net = podnet.load(box.state)
            assert net is not None
            ip = _sleeper(box)
            assert {f"netns {net.netns(ip)}", f"link {net.veth(ip)}"} <= set(_leftovers(net))
            procs = box.state / "procs"  # the runner reports the pod before its process starts
            pids = wait_for(
                lambda: [int(m.name) for m in procs.glob("*")] or None, what="the sleeper's process"
            )
            pod_net = Path(f"/run/netns/{net.netns(ip)}").stat().st_ino
            assert [Path(f"/proc/{pid}/ns/net").stat().st_ino for pid in pids] == [pod_net]
            assert f"address {net.gateway} on {net.bridge}" in _leftovers(net)

            # a crash: every process of the sandbox dies at once, nothing is cleaned up
            for pid in box.pids().values():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            for marker in (box.state / "procs").glob("*"):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(int(marker.name), signal.SIGKILL)
            wait_for(lambda: not any(box.alive().values()), what="sandbox processes gone")
            assert f"netns {net.netns(ip)}" in _leftovers(net)

            notes: list[str] = []
            again = cluster.up(name, "1xcpu", progress=notes.append)
            assert any("removing stale sandbox" in n for n in notes)
            assert f"netns {net.netns(ip)}" not in _leftovers(net)
            renewed = podnet.load(again.state)
            assert renewed is not None and renewed.bridge == net.bridge
            assert f"address {renewed.gateway} on {renewed.bridge}" in _leftovers(renewed)
        finally:
            cluster.down(name)
        assert _leftovers(net) == []
        assert renewed is not None and _leftovers(renewed) == []


def test_without_namespaces_pods_fall_back_to_loopback_addresses(tmp_path: Path) -> None:
    name = f"host-{uuid.uuid4().hex[:6]}"
    notes: list[str] = []
    with _home(tmp_path):
        os.environ[podnet.MODE_ENV] = "host"
        try:
            box = cluster.up(name, "1xcpu", progress=notes.append)
            assert podnet.load(box.state) is None
            ip = _sleeper(box)
            assert ipaddress.IPv4Address(ip).is_loopback
        finally:
            os.environ.pop(podnet.MODE_ENV, None)
            cluster.down(name)
    warning = next(n for n in notes if n.startswith("warning:"))
    assert "pods share the host network" in warning and podnet.MODE_ENV in warning


def test_host_network_pods_stay_in_the_host_network(sandbox: SandboxHandle) -> None:
    ns = _ns(sandbox)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "hostnet"},
        "spec": {
            "hostNetwork": True,
            "restartPolicy": "Never",
            "containers": [
                {"name": "main", "image": "x", "command": ["readlink", "/proc/self/ns/net"]}
            ],
        },
    }
    _apply(sandbox, ns, pod)

    def done() -> dict[str, Any] | None:
        status = _get(sandbox, ns, "pod", "hostnet")["status"]
        return status if status.get("phase") in ("Succeeded", "Failed") else None

    status = wait_for(done, what="hostnet pod end")
    assert status["phase"] == "Succeeded"
    assert ipaddress.IPv4Address(status["podIP"]).is_loopback
    logs = sandbox.kubectl_run("logs", "-n", ns, "hostnet").stdout.strip()
    assert logs == str(Path("/proc/self/ns/net").readlink())
