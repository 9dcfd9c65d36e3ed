"""The operator under the chart's own account, and the chart's webhook certificate across
upgrades.

The session's operator authenticates with a token minted for the chart's ServiceAccount
(`tests/support/chartaccount.py`), so every operator test runs through the chart's ClusterRole.
Here: the operator names a permission the role lacks and refuses to start; and an operator
serving the chart-managed webhook (Service + EndpointSlice to this host, the chart's
certificate Secret) keeps answering through five `helm upgrade`s, one of them failing, with
the caBundle unchanged and no TLS error while it is polled every second.
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.sandbox import binaries, podnet
from gryvia_cli.sandbox.sandboxes import Sandbox
from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.support.chartaccount import (
    ACCOUNT,
    CHART,
    NAMESPACE,
    remove_verb,
    render_tenant_roles,
    restore_role,
)
from tests.support.operator import OperatorProcess, apply_crds
from tests.support.ports import free_port
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

WHOAMI = ("auth", "whoami", "-o", "json")
OPERATOR = (sys.executable, "-m", "gryvia_operator")
NO_PORTS = ("--health-port", "0", "--metrics-port", "0", "--webhook-port", "0")
INSTALL = ("--create-namespace", "--take-ownership")


def _start_once(kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    """Start another operator with `kubeconfig` and no ports: it must refuse to start (a check
    failed) and exit; its stderr names why."""
    return subprocess.run(
        [*OPERATOR, "--kubeconfig", str(kubeconfig), *NO_PORTS],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _can(sandbox: SandboxHandle, verb: str, resource: str) -> bool:
    user = f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}"
    done = sandbox.kubectl_run("auth", "can-i", verb, resource, "--as", user, check=False)
    return done.stdout.strip() == "yes"


def test_the_operator_runs_as_the_charts_account_and_names_a_missing_permission(
    sandbox: SandboxHandle, live_operator: OperatorProcess
) -> None:
    seen = subprocess.run(
        [str(sandbox.kubectl), "--kubeconfig", str(live_operator.kubeconfig), *WHOAMI],
        capture_output=True,
        text=True,
        check=True,
    )
    user = json.loads(seen.stdout)["status"]["userInfo"]["username"]
    assert user == f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}"

    saved = remove_verb(sandbox.kubectl, sandbox.kubeconfig, "pods", "delete")
    try:
        wait_for(lambda: not _can(sandbox, "delete", "pods"), timeout=30, what="RBAC applied")
        assert _can(sandbox, "get", "pods")  # only the one verb went
        started = _start_once(live_operator.kubeconfig)
    finally:
        restore_role(sandbox.kubectl, sandbox.kubeconfig, saved)
    assert started.returncode == 3, started.stderr
    denied = [line for line in started.stderr.splitlines() if "missing permission" in line]
    assert len(denied) == 1, started.stderr
    assert "may not delete pods (cluster-wide)" in denied[0]
    assert "operator-clusterrole.yaml" in denied[0]
    wait_for(lambda: _can(sandbox, "delete", "pods"), timeout=30, what="RBAC restored")


# -- the chart-managed webhook across upgrades ---------------------------------------------


class Poller:
    """Opens a TLS connection to the webhook's port every second, verifying the certificate
    against the caBundle currently in the chart's configuration and the Service's DNS name
    (what the API server checks), and asks for /healthz."""

    def __init__(self, sandbox: SandboxHandle, config: str, address: tuple[str, int], name: str):
        self.sandbox, self.config, self.address, self.name = sandbox, config, address, name
        self.calls = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Poller:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
            self._stop.wait(1.0)

    def poll_once(self) -> None:
        """One verified handshake and request; raises on any TLS or HTTP failure."""
        vwc = self.sandbox.kubectl_json("get", "validatingwebhookconfiguration", self.config)
        ca = base64.b64decode(vwc["webhooks"][0]["clientConfig"]["caBundle"]).decode()
        context = ssl.create_default_context(cadata=ca)
        with (
            socket.create_connection(self.address, timeout=5) as raw,
            context.wrap_socket(raw, server_hostname=self.name) as tls,
        ):
            tls.sendall(f"GET /healthz HTTP/1.1\r\nHost: {self.name}\r\n\r\n".encode())
            status = tls.recv(64).split(b"\r\n", 1)[0]
        if b" 200 " not in status + b" ":
            raise AssertionError(f"/healthz answered {status!r}")
        self.calls += 1


@pytest.fixture
def chart_release(sandbox: SandboxHandle) -> Iterator[dict[str, Any]]:
    """The chart installed in a fresh namespace as release `gwh-<id>`, its webhook served from
    this host (webhook.externalAddress = the sandbox bridge's address); no operator pods, CRDs,
    RBAC or peering of its own (the session's cover those). Uninstalled afterwards."""
    net = podnet.load(Sandbox(sandbox.name).state)
    assert net is not None, "the sandbox has no pod network: these tests need it (run as root)"
    rid = uuid.uuid4().hex[:6]
    release = {
        "name": f"gwh-{rid}",
        "namespace": f"gwh-{rid}",
        "address": net.gateway,
        "port": free_port(),
    }
    helm = str(binaries.path_of("helm"))
    base = [helm, "--kubeconfig", str(sandbox.kubeconfig)]
    release["helm"] = base
    values = (
        f"replicaCount=0,crds.enabled=false,rbac.create=false,serviceAccount.create=false,"
        f"peering.enabled=false,webhook.externalAddress={net.gateway},"
        f"webhook.port={release['port']}"
    )
    subprocess.run(
        [
            *base,
            "install",
            release["name"],
            str(CHART),
            "-n",
            release["namespace"],
            *INSTALL,
            "--set",
            values,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    try:
        yield release
    finally:
        subprocess.run(
            [*base, "uninstall", release["name"], "-n", release["namespace"], "--wait"],
            capture_output=True,
            check=False,
            timeout=300,
        )
        # The chart's tenant ClusterRoles have fixed names: the session's tests need them back.
        sandbox.kubectl_run("apply", "-f", "-", input=render_tenant_roles(Path(helm)))
        sandbox.kubectl_run("delete", "namespace", release["namespace"], "--wait=false")


def _tls_state(sandbox: SandboxHandle, release: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(certificate, CA) of the chart's Secret and every caBundle of its two configurations."""
    name = f"{release['name']}-gryvia"
    secret = sandbox.kubectl_json(
        "get", "secret", f"{name}-webhook-tls", "-n", release["namespace"]
    )
    bundles = [
        hook["clientConfig"]["caBundle"]
        for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration")
        for hook in sandbox.kubectl_json("get", kind, f"{name}-webhook")["webhooks"]
    ]
    return secret["data"]["tls.crt"], secret["data"]["ca.crt"], bundles


def _webhook_calls(operator: OperatorProcess) -> float:
    """Admission reviews the operator's webhook has answered (its metrics)."""
    _, body = operator.get("/metrics", port=operator.metrics_port)
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in body.splitlines()
        if line.startswith("gryvia_operator_webhook_requests_total{")
    )


def _dry_run_job(sandbox: SandboxHandle, namespace: str) -> None:
    job = sh_job(f"probe-{uuid.uuid4().hex[:6]}", gpus=0, script="true")
    job["spec"].pop("gpuType")
    sandbox.apply(job, namespace=namespace, verb="create", extra=("--dry-run=server",))


def test_helm_upgrades_keep_the_webhook_certificate_and_ca_bundle(
    sandbox: SandboxHandle,
    live_operator: OperatorProcess,
    chart_release: dict[str, Any],
    tmp_path: Path,
) -> None:
    release, ns = chart_release["name"], chart_release["namespace"]
    crt, ca, bundles = _tls_state(sandbox, chart_release)
    assert bundles and set(bundles) == {ca}
    certs = tmp_path / "certs"
    certs.mkdir()
    secret = sandbox.kubectl_json("get", "secret", f"{release}-gryvia-webhook-tls", "-n", ns)
    for key in ("tls.crt", "tls.key", "ca.crt"):
        (certs / key).write_bytes(base64.b64decode(secret["data"][key]))
    served = OperatorProcess(
        live_operator.kubeconfig,
        tmp_path / "operator.log",
        webhook_port=chart_release["port"],
        extra=(
            "--no-webhook-self-register",
            "--webhook-cert-dir",
            str(certs),
            "--webhook-host",
            chart_release["address"],
            "-n",
            ns,
        ),
    )
    served.start()
    address = (chart_release["address"], chart_release["port"])
    service = f"{release}-gryvia-webhook.{ns}.svc"
    try:
        with Poller(sandbox, f"{release}-gryvia-webhook", address, service) as poller:
            upgrades = [
                ("webhook.timeoutSeconds=7", True),
                ("operator.logLevel=debug", True),
                ("webhook.timeoutSeconds=99", False),  # refused by the values schema
                ("webhook.excludeNamespaces={kube-system,kube-public}", True),
                ("", True),
            ]
            for setting, ok in upgrades:
                before = _webhook_calls(served)
                argv = [*chart_release["helm"], "upgrade", release, str(CHART), "-n", ns]
                argv += ["--reuse-values", *(["--set", setting] if setting else [])]
                done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
                assert (done.returncode == 0) == ok, (setting, done.stderr)
                assert _tls_state(sandbox, chart_release) == (crt, ca, bundles), setting
                # The API server reaches this operator through the chart's Service.
                _dry_run_job(sandbox, "default")
                wait_for(
                    lambda b=before: _webhook_calls(served) > b,
                    timeout=30,
                    what=f"a webhook call through the chart's Service after {setting!r}",
                )
            calls_before = poller.calls
            wait_for(lambda: poller.calls >= calls_before + 2, timeout=30, what="more polls")
        assert poller.errors == []
        assert poller.calls >= 5
        vwc = sandbox.kubectl_json(
            "get", "validatingwebhookconfiguration", f"{release}-gryvia-webhook"
        )
        assert {h["timeoutSeconds"] for h in vwc["webhooks"]} == {7}
    finally:
        served.stop()


def test_an_old_crd_stops_the_operator_and_a_chart_upgrade_brings_it_up_to_date(
    sandbox: SandboxHandle, live_operator: OperatorProcess, chart_release: dict[str, Any]
) -> None:
    name = "gryviacheckpointguards.gryvia.io"
    schema = sandbox.kubectl_json("get", "crd", name)["spec"]["versions"][0]["schema"]
    spec = schema["openAPIV3Schema"]["properties"]["spec"]
    field = sorted(set(spec["properties"]) - set(spec.get("required") or []))[0]
    path = f"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/{field}"
    older = json.dumps([{"op": "remove", "path": path}])
    sandbox.kubectl_run("patch", "crd", name, "--type=json", "-p", older)
    try:
        started = _start_once(live_operator.kubeconfig)
        assert started.returncode == 4, started.stderr
        stale = [line for line in started.stderr.splitlines() if "older than" in line]
        assert len(stale) == 1, started.stderr
        assert f"CRD {name} is older than this operator (it lacks spec.{field}" in stale[0]

        # The chart's CRDs (crds.enabled) bring the field back with an upgrade.
        release, ns = chart_release["name"], chart_release["namespace"]
        argv = [*chart_release["helm"], "upgrade", release, str(CHART), "-n", ns]
        argv += ["--reuse-values", "--take-ownership", "--set", "crds.enabled=true"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        again = sandbox.kubectl_json("get", "crd", name)["spec"]["versions"][0]["schema"]
        assert field in again["openAPIV3Schema"]["properties"]["spec"]["properties"]
    finally:
        apply_crds(sandbox.kubectl, sandbox.kubeconfig)
