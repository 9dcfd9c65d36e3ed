"""Kueue in a sandbox: its configuration, CRDs and webhooks, and its controller manager process.

`tools/k8s/build-kueue.sh` builds the `kueue` binary and copies the release's CRDs and webhook
manifests beside it (`<bin dir>/kueue-manifests/`). `sandbox up --kueue` then installs the CRDs,
starts the manager on loopback ports with a webhook certificate minted here (Kueue's own
certificate management is off: it needs an in-cluster Service), and registers Kueue's webhooks
with `url` client configs, as the sandbox operator registers Gryvia's. The builders are pure;
`start` does the I/O.
"""

from __future__ import annotations

import base64
import copy
import datetime as dt
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from gryvia_cli.sandbox import binaries, bootstrap
from gryvia_cli.sandbox.certs import loopback_certificates
from gryvia_cli.sandbox.ports import free_port
from gryvia_cli.sandbox.sandboxes import Progress, Sandbox, SandboxError

KUEUE = "kueue"
NAMESPACE = "kueue-system"
MUTATING_NAME = "kueue-mutating-webhook-configuration"
VALIDATING_NAME = "kueue-validating-webhook-configuration"
FRAMEWORKS = ("batch/job",)
"""Kueue integrations the sandbox enables: only batch Jobs, as the original ships (behaviour.md
section 6, "Kueue config shipped")."""
_WEBHOOK_PATH_MARKERS = ("-kueue-x-k8s-io-", "-batch-v1-job")
"""Webhooks kept from Kueue's manifest: its own kinds and the enabled frameworks. Kueue serves no
handler for a disabled framework, and its manifest registers them with failurePolicy Fail, so
registering e.g. the Pod webhook would make every Pod creation fail."""
METRICS_CERT_DIR = "/etc/kueue/metrics/certs"
"""Where Kueue v0.17 reads its metrics serving certificate when its own certificate management
is off (a fixed path in cmd/kueue/main.go); `start` bind-mounts a sandbox folder over /etc in a
private mount namespace so that path holds the sandbox's certificate."""


def manifests_dir() -> Path:
    """`<bin dir>/kueue-manifests`: the CRDs and webhook manifests build-kueue.sh copied."""
    return binaries.bin_dir() / "kueue-manifests"


def missing() -> str:
    """Return why Kueue cannot start here ('' when it can): binary not built or not root."""
    if (
        not os.access(binaries.bin_dir() / KUEUE, os.X_OK)
        or not (manifests_dir() / "webhooks.yaml").is_file()
    ):
        return "kueue is not built: run 'tools/k8s/build-kueue.sh' (several minutes, once)"
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return (
            "--kueue needs root and 'unshare': Kueue v0.17 reads its metrics certificate from "
            f"{METRICS_CERT_DIR}, which the sandbox mounts in a private mount namespace"
        )
    return ""


CONCURRENCY = {
    "Job.batch": 5,
    "Pod": 5,
    "Workload.kueue.x-k8s.io": 5,
    "LocalQueue.kueue.x-k8s.io": 1,
    "Cohort.kueue.x-k8s.io": 1,
    "ClusterQueue.kueue.x-k8s.io": 1,
    "ResourceFlavor.kueue.x-k8s.io": 1,
}
"""Concurrent reconciles per controller, as Kueue's own release configuration sets them
(`config/components/manager/controller_manager_config.yaml`, v0.17.0). Without them every
controller reconciles one object at a time: the Job controller created one Workload at a time,
about 7 a second on 2 cores, and a burst of one-GPU jobs was admitted no faster (issue 42)."""


def build_configuration(
    *,
    webhook_port: int,
    health_port: int,
    metrics_port: int,
    cert_dir: str,
    block_admission: bool = False,
) -> dict[str, Any]:
    """Kueue's Configuration (config.kueue.x-k8s.io/v1beta2) for a sandbox.

    The batch/job integration only; Kueue's release concurrency (`CONCURRENCY`);
    waitForPodsReady with a 10 min timeout (a job whose pods
    are not all ready by then is evicted and requeued, back-off 60-3600 s from the eviction
    time), and `blockAdmission` only with `block_admission`: the original shipped it on
    (behaviour.md section 6), which admits one workload at a time, each once the pods of the
    one before are ready (docs/kueue.md says when to ask for it). Sandbox
    specifics: every server on 127.0.0.1 at the given ports, no leader election, Kueue's own
    certificate management off (the certificate is in `cert_dir`), and the visibility API server
    off (it would need an APIService and its own port).
    """
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": NAMESPACE,
        "manageJobsWithoutQueueName": False,
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "metrics": {"bindAddress": f"127.0.0.1:{metrics_port}"},
        "webhook": {"host": "127.0.0.1", "port": webhook_port, "certDir": cert_dir},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "featureGates": {"VisibilityOnDemand": False},
        "clientConnection": {"qps": 50, "burst": 100},
        "controller": {"groupKindConcurrency": dict(CONCURRENCY)},
        "waitForPodsReady": {
            "timeout": "10m",
            "blockAdmission": block_admission,
            "requeuingStrategy": {
                "timestamp": "Eviction",
                "backoffBaseSeconds": 60,
                "backoffMaxSeconds": 3600,
            },
        },
        "integrations": {"frameworks": list(FRAMEWORKS)},
    }


def build_webhook_configurations(
    manifest: Iterable[dict[str, Any]], base_url: str, ca_pem: bytes
) -> list[dict[str, Any]]:
    """Kueue's Mutating- and ValidatingWebhookConfiguration from its release manifest, pointed
    at `base_url` (e.g. `https://127.0.0.1:9443`) with `url` client configs trusting `ca_pem`.

    Keeps only the webhooks of Kueue's kinds and the enabled frameworks (see
    `_WEBHOOK_PATH_MARKERS`); the failure policies and rules are Kueue's. Raises SandboxError
    when the manifest has no webhook configuration (a wrong or damaged file).
    """
    names = {
        "MutatingWebhookConfiguration": MUTATING_NAME,
        "ValidatingWebhookConfiguration": VALIDATING_NAME,
    }
    bundle = base64.b64encode(ca_pem).decode()
    out = []
    for doc in manifest:
        if not doc or doc.get("kind") not in names:
            continue
        config = copy.deepcopy(doc)
        config["metadata"] = {
            "name": names[doc["kind"]],
            "labels": {"app.kubernetes.io/name": KUEUE},
        }
        kept = []
        for hook in config.get("webhooks") or []:
            path = hook.get("clientConfig", {}).get("service", {}).get("path", "")
            if any(marker in path for marker in _WEBHOOK_PATH_MARKERS):
                hook["clientConfig"] = {"url": base_url.rstrip("/") + path, "caBundle": bundle}
                kept.append(hook)
        config["webhooks"] = kept
        out.append(config)
    if not out:
        raise SandboxError("Kueue's webhook manifest has no webhook configuration: rebuild kueue")
    return out


def build_crds(documents: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Kueue's CRDs without conversion webhooks: the sandbox serves and stores only each kind's
    storage version through Kueue (v1beta2), so no conversion is needed."""
    out = []
    for doc in documents:
        if doc and doc.get("kind") == "CustomResourceDefinition":
            crd = copy.deepcopy(doc)
            crd["spec"].pop("conversion", None)
            out.append(crd)
    return out


def make_certificates(now: dt.datetime) -> tuple[bytes, bytes, bytes]:
    """Return (CA certificate, serving certificate, serving key) as PEM for 127.0.0.1, valid one
    year from `now` (`certs.loopback_certificates`)."""
    return loopback_certificates("gryvia-sandbox-kueue-ca", "kueue-webhook", now, 365)


def _load_all(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]


def _apply(box: Sandbox, objects: list[dict[str, Any]], folder: Path, name: str) -> None:
    path = folder / name
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    bootstrap.kubectl(box, "apply", "--server-side", "--force-conflicts", "-f", str(path))


def start(
    box: Sandbox, progress: Progress, timeout: float = 120.0, *, block_admission: bool = False
) -> int:
    """Install Kueue's CRDs, start its controller manager and register its webhooks; return
    the manager's pid (recorded in the sandbox's pids folder, so `down` stops it).

    Files go to `<workdir>/kueue/`, the log to `<workdir>/logs/kueue.log`. Raises SandboxError
    when Kueue is not built, cannot run here (see `missing`), exits, or is not ready within
    `timeout` seconds.
    """
    why = missing()
    if why:
        raise SandboxError(why)
    folder = box.workdir / KUEUE
    etc = folder / "etc"
    certs = etc / "kueue" / "metrics" / "certs"
    certs.mkdir(parents=True, exist_ok=True)
    for name in ("hosts", "resolv.conf", "nsswitch.conf", "localtime"):
        with_source = Path("/etc") / name
        if with_source.is_file():
            shutil.copyfile(with_source, etc / name)
    ca_pem, cert_pem, key_pem = make_certificates(dt.datetime.now(dt.UTC))
    for directory in (certs, folder / "webhook-certs"):
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "tls.crt").write_bytes(cert_pem)
        (directory / "tls.key").write_bytes(key_pem)
        (directory / "tls.key").chmod(0o600)
    progress("installing Kueue's CRDs")
    crds = build_crds(
        doc for path in sorted((manifests_dir() / "crds").glob("*.yaml")) for doc in _load_all(path)
    )
    _apply(box, crds, folder, "crds.yaml")
    names = [f"crd/{crd['metadata']['name']}" for crd in crds]
    bootstrap.kubectl(box, "wait", "--for=condition=Established", "--timeout=60s", *names)
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    _apply(box, [namespace], folder, "namespace.yaml")
    webhook_port, health_port = free_port(), free_port()
    config = build_configuration(
        webhook_port=webhook_port,
        health_port=health_port,
        metrics_port=free_port(),
        cert_dir=str(folder / "webhook-certs"),
        block_admission=block_admission,
    )
    (folder / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    progress("starting Kueue's controller manager")
    shim = 'mount --bind "$0" /etc && exec "$@"'
    argv = [
        "unshare", "--mount", "--propagation", "private", "--", "sh", "-c", shim, str(etc),
        str(binaries.bin_dir() / KUEUE), "--config", str(folder / "config.yaml"),
        "--kubeconfig", str(box.kubeconfig), "--zap-log-level", "info",
    ]  # fmt: skip
    proc = box.start(KUEUE, argv)
    _wait_ready(proc, health_port, timeout, box.workdir / "logs" / f"{KUEUE}.log")
    progress("registering Kueue's webhooks")
    hooks = build_webhook_configurations(
        _load_all(manifests_dir() / "webhooks.yaml"), f"https://127.0.0.1:{webhook_port}", ca_pem
    )
    _apply(box, hooks, folder, "webhooks.yaml")
    return proc.pid


def _wait_ready(proc: subprocess.Popen[bytes], port: int, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SandboxError(
                f"Kueue's controller manager exited with {proc.returncode}: see {log}"
            )
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise SandboxError(f"Kueue's controller manager was not ready after {timeout:.0f}s: see {log}")
