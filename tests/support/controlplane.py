"""A bare etcd + kube-apiserver on loopback, envtest style, for tests that need only the API.

Certificates are generated per run; admission webhooks and service-account signing are on.
The full cluster with nodes, scheduler and controller-manager is the sandbox
(`gryvia_cli.sandbox`).
"""

from __future__ import annotations

import contextlib
import shutil
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from gryvia_cli.sandbox import binaries
from gryvia_operator.webhook import certs
from tests.support.ports import free_port


@dataclass
class ControlPlane:
    """A running etcd and kube-apiserver; `kubeconfig` is a file with an admin context."""

    workdir: Path
    server: str
    kubeconfig: Path
    processes: list[subprocess.Popen[bytes]]

    def stop(self) -> None:
        """Terminate both processes (SIGTERM, then SIGKILL after 10 s)."""
        for proc in reversed(self.processes):
            proc.terminate()
        for proc in reversed(self.processes):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _write_pki(pki: Path) -> None:
    pki.mkdir(parents=True)
    ca = certs.make_ca("gryvia-test-ca")
    ca.write(pki / "ca.crt", pki / "ca.key")
    certs.make_leaf(
        ca, "kube-apiserver", hosts=("127.0.0.1", "localhost", "kubernetes.default.svc")
    ).write(pki / "apiserver.crt", pki / "apiserver.key")
    certs.make_leaf(
        ca, "admin", organizations=("system:masters",), server=False, client=True
    ).write(pki / "admin.crt", pki / "admin.key")
    (pki / "sa.key").write_bytes(certs.make_rsa_key_pem())
    (pki / "sa.key").chmod(0o600)


def _kubeconfig(pki: Path, server: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "test",
                "cluster": {"server": server, "certificate-authority": str(pki / "ca.crt")},
            }
        ],
        "users": [
            {
                "name": "admin",
                "user": {
                    "client-certificate": str(pki / "admin.crt"),
                    "client-key": str(pki / "admin.key"),
                },
            }
        ],
        "contexts": [
            {
                "name": "test",
                "context": {"cluster": "test", "user": "admin", "namespace": "default"},
            }
        ],
        "current-context": "test",
    }


def _wait_ready(
    server: str, pki: Path, procs: list[subprocess.Popen[bytes]], log: Path, timeout: float = 60.0
) -> None:
    ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in procs:
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.args[0]} exited early; see {log}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{server}/readyz", context=ctx, timeout=2) as resp,
        ):
            if resp.status == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"kube-apiserver not ready after {timeout:.0f}s; see {log}")


@contextlib.contextmanager
def control_plane(workdir: Path) -> Iterator[ControlPlane]:
    """Start etcd and kube-apiserver under `workdir`, yield them ready, stop them on exit.

    Raises BinariesMissingError when the binaries are not built, RuntimeError when a process
    exits early or the API server is not ready within 60 s (logs are in `workdir`).
    """
    pki = workdir / "pki"
    _write_pki(pki)
    etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
    etcd_url = f"http://127.0.0.1:{etcd_port}"
    log = workdir / "control-plane.log"
    out = log.open("wb")
    procs: list[subprocess.Popen[bytes]] = []
    plane: ControlPlane | None = None
    try:
        procs.append(
            subprocess.Popen(
                [
                    str(binaries.path_of("etcd")),
                    "--name=default",
                    f"--data-dir={workdir / 'etcd'}",
                    "--unsafe-no-fsync",
                    f"--listen-client-urls={etcd_url}",
                    f"--advertise-client-urls={etcd_url}",
                    f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                    f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                    f"--initial-cluster=default=http://127.0.0.1:{peer_port}",
                    "--log-level=warn",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        )
        procs.append(
            subprocess.Popen(
                [
                    str(binaries.path_of("kube-apiserver")),
                    f"--etcd-servers={etcd_url}",
                    "--bind-address=127.0.0.1",
                    "--advertise-address=127.0.0.1",
                    f"--secure-port={api_port}",
                    f"--cert-dir={pki}",
                    f"--tls-cert-file={pki / 'apiserver.crt'}",
                    f"--tls-private-key-file={pki / 'apiserver.key'}",
                    f"--client-ca-file={pki / 'ca.crt'}",
                    f"--service-account-key-file={pki / 'sa.key'}",
                    f"--service-account-signing-key-file={pki / 'sa.key'}",
                    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                    "--service-cluster-ip-range=10.96.0.0/16",
                    "--authorization-mode=RBAC",
                    "--enable-admission-plugins=NamespaceLifecycle,ServiceAccount,"
                    "MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,"
                    "ResourceQuota,LimitRanger",
                    "--allow-privileged=true",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        )
        server = f"https://127.0.0.1:{api_port}"
        _wait_ready(server, pki, procs, log)
        kubeconfig = workdir / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(_kubeconfig(pki, server)))
        plane = ControlPlane(workdir, server, kubeconfig, procs)
        yield plane
    finally:
        if plane is None:
            plane = ControlPlane(workdir, "", workdir / "kubeconfig", procs)
        plane.stop()
        out.close()
        shutil.rmtree(workdir / "etcd", ignore_errors=True)
