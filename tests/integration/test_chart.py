"""The Helm chart against real API servers: a server-side dry run of the whole render on the bare
API server, and an install (from the sandbox's OCI registry, with the FAQ's line), upgrade and
uninstall round trip in the sandbox.

The CRDs these tests install are left in place afterwards, on purpose: they are the same
generated CRDs other tests install, and deleting a CRD deletes every object of its kind, which
other tests in the session may own. Namespaces the tests create are deleted.
"""

from __future__ import annotations

import base64
import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from gryvia_cli.sandbox import cluster, registry
from gryvia_operator.api.registry import ALL_KINDS
from tests.conftest import SandboxHandle
from tests.support.chartaccount import render_tenant_roles
from tests.support.controlplane import ControlPlane
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "gryvia"
KOPF_CRDS = ("clusterkopfpeerings.kopf.dev", "kopfpeerings.kopf.dev")


def _bin(name: str) -> str:
    from gryvia_cli.sandbox import binaries

    return str(binaries.path_of(name))


def _run(
    argv: list[str], *, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        argv, input=stdin, capture_output=True, text=True, check=False, timeout=300
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv[:4])} ... failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def _kubectl(kubeconfig: Path, *args: str, stdin: str | None = None, check: bool = True) -> str:
    argv = [_bin("kubectl"), "--kubeconfig", str(kubeconfig), *args]
    return _run(argv, stdin=stdin, check=check).stdout


def _helm(kubeconfig: Path, *args: str) -> str:
    return _run([_bin("helm"), "--kubeconfig", str(kubeconfig), *args]).stdout


def _render(namespace: str, *args: str) -> list[dict[str, Any]]:
    """`helm template` with the kopf CRDs from crds/ included (no cluster involved)."""
    out = _run(
        [
            _bin("helm"),
            "template",
            "gryvia",
            str(CHART),
            "-n",
            namespace,
            "--include-crds",
            "--kube-version",
            "1.36.3",
            *args,
        ]
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def _as_list(objs: list[dict[str, Any]]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objs})


def _wait_established(kubeconfig: Path, names: list[str]) -> None:
    """Wait until every CRD of `names` is Established (`kubectl wait` fails at once on a CRD
    just created, whose status has no conditions yet)."""

    def established() -> bool:
        found = json.loads(_kubectl(kubeconfig, "get", "crd", *names, "-o", "json"))["items"]
        return len(found) == len(names) and all(
            any(
                c.get("type") == "Established" and c.get("status") == "True"
                for c in (crd.get("status") or {}).get("conditions") or []
            )
            for crd in found
        )

    wait_for(established, timeout=60, what=f"{len(names)} CRDs Established")


@pytest.mark.parametrize(
    "variant",
    [
        (),
        (
            "--set",
            "webhook.selfRegister=true,metrics.service.enabled=true,replicaCount=2",
            "--set",
            "operator.watchNamespaces={NS}",
        ),
    ],
    ids=["defaults", "self-register-namespaced"],
)
def test_render_passes_a_server_side_dry_run(
    apiserver: ControlPlane, variant: tuple[str, ...]
) -> None:
    kubeconfig = apiserver.kubeconfig
    namespace = f"gryvia-{uuid.uuid4().hex[:8]}"
    objs = _render(namespace, *(arg.replace("NS", namespace) for arg in variant))
    crds = [o for o in objs if o["kind"] == "CustomResourceDefinition"]
    rest = [o for o in objs if o["kind"] != "CustomResourceDefinition"]
    assert len(crds) == len(ALL_KINDS) + len(KOPF_CRDS)

    # The CRDs for real (so that the custom objects validate), then everything else dry.
    _kubectl(kubeconfig, "apply", "--server-side", "-f", "-", stdin=_as_list(crds))
    _wait_established(kubeconfig, [c["metadata"]["name"] for c in crds])
    _kubectl(kubeconfig, "create", "namespace", namespace)
    try:
        out = _kubectl(
            kubeconfig, "apply", "--dry-run=server", "-o", "name", "-f", "-", stdin=_as_list(rest)
        )
        assert len(out.split()) == len(rest)
        assert "deployment.apps/gryvia-operator" in out
        assert "clusterrole.rbac.authorization.k8s.io/gryvia-operator" in out
    finally:
        _kubectl(kubeconfig, "delete", "namespace", namespace, "--wait=false")


def _exists(sandbox: SandboxHandle, *what: str, namespace: str | None = None) -> bool:
    args = ["get", *what, "-o", "name", "--ignore-not-found"]
    if namespace:
        args += ["-n", namespace]
    return bool(sandbox.kubectl_run(*args).stdout.strip())


def _get(sandbox: SandboxHandle, *what: str, namespace: str | None = None) -> Any:
    args = ["get", *what, "-o", "json"] + (["-n", namespace] if namespace else [])
    return json.loads(sandbox.kubectl_run(*args).stdout)


def _tls(sandbox: SandboxHandle, namespace: str) -> tuple[str, str, list[str]]:
    """The webhook Secret's certificate and CA, and the webhook configuration's caBundles."""
    data = _get(sandbox, "secret", "gryvia-webhook-tls", namespace=namespace)["data"]
    vwc = _get(sandbox, "validatingwebhookconfiguration", "gryvia-webhook")
    bundles = [h["clientConfig"]["caBundle"] for h in vwc["webhooks"]]
    return data["tls.crt"], data["ca.crt"], bundles


@pytest.mark.sandbox
@pytest.mark.slow
def test_install_upgrade_uninstall_in_the_sandbox(sandbox: SandboxHandle) -> None:
    kubeconfig = sandbox.kubeconfig
    namespace = f"gryvia-{uuid.uuid4().hex[:8]}"
    crd_names = [k.crd_name for k in ALL_KINDS]
    # The FAQ's install line, from an OCI registry: the sandbox's (Debian's docker-registry),
    # where `helm package` and `helm push` put this chart (`sandbox up --registry` does this).
    box = cluster.Sandbox(sandbox.name)
    where = registry.address(box) or registry.start(box, lambda _: None)
    chart = registry.push_chart(Path(_bin("helm")), CHART, where)
    assert chart == f"oci://{where}/charts/gryvia"
    # --take-ownership: another test may already have applied the same CRDs with kubectl.
    notes = _helm(
        kubeconfig,
        "install",
        "gryvia",
        chart,
        "--plain-http",
        "--namespace",
        namespace,
        "--create-namespace",
        "--take-ownership",
        "--set",
        "auth.apiKey=a-long-random-secret",
    )
    try:
        assert "gryvia status" in notes
        assert "auth.apiKey is accepted but not used: this chart runs no REST gateway" in notes
        _wait_established(sandbox.kubeconfig, [*crd_names, *KOPF_CRDS])
        assert _exists(sandbox, "deployment/gryvia-operator", namespace=namespace)
        # Two replicas with leader election: a PodDisruptionBudget, no kopf peering object.
        assert _exists(sandbox, "poddisruptionbudget/gryvia-operator", namespace=namespace)
        assert not _exists(sandbox, "clusterkopfpeering/gryvia")

        # The Deployment's pod exists and asks for `gryvia-operator` explicitly; the sandbox
        # does not start it and says why, where `kubectl get pods` shows it (no crash loop).
        def pod() -> dict[str, Any] | None:
            items = _get(
                sandbox,
                "pods",
                "-l",
                "app.kubernetes.io/component=operator",
                namespace=namespace,
            )["items"]
            return items[0] if items else None

        created = wait_for(pod, timeout=60, what="the operator pod")
        assert created["spec"]["containers"][0]["command"] == ["gryvia-operator"]

        def waiting() -> dict[str, Any] | None:
            found = pod() or {}
            statuses = (found.get("status") or {}).get("containerStatuses") or [{}]
            reason = ((statuses[0].get("state") or {}).get("waiting") or {}).get("reason")
            return statuses[0] if reason not in (None, "ContainerCreating") else None

        told = wait_for(waiting, timeout=60, what="the operator pod's waiting reason")
        assert told["state"]["waiting"]["reason"] == "SandboxCannotRun"
        assert "`gryvia sandbox up`" in told["state"]["waiting"]["message"]
        assert told["restartCount"] == 0

        # The self-signed certificate and the caBundle survive an upgrade (lookup).
        cert, ca, bundles = _tls(sandbox, namespace)
        assert bundles == [ca, ca, ca]  # the jobs, usage records and names webhooks
        assert base64.b64decode(ca).startswith(b"-----BEGIN CERTIFICATE-----")
        _helm(
            kubeconfig,
            "upgrade",
            "gryvia",
            str(CHART),
            "-n",
            namespace,
            "--reuse-values",
            "--set",
            "webhook.timeoutSeconds=7",
        )
        assert _tls(sandbox, namespace) == (cert, ca, bundles)
        vwc = _get(sandbox, "validatingwebhookconfiguration", "gryvia-webhook")
        assert [h["timeoutSeconds"] for h in vwc["webhooks"]] == [7, 7, 7]
    finally:
        _helm(kubeconfig, "uninstall", "gryvia", "-n", namespace, "--wait", "--timeout", "120s")

    try:
        # Everything but the CRDs is gone (crds.keep=true; kopf's CRDs are never deleted).
        assert not _exists(sandbox, "deployment/gryvia-operator", namespace=namespace)
        assert not _exists(sandbox, "secret/gryvia-webhook-tls", namespace=namespace)
        assert not _exists(sandbox, "service/gryvia-webhook", namespace=namespace)
        assert not _exists(sandbox, "serviceaccount/gryvia-operator", namespace=namespace)
        assert not _exists(sandbox, "poddisruptionbudget/gryvia-operator", namespace=namespace)
        for cluster_scoped in (
            "clusterrole/gryvia-operator",
            "clusterrole/gryvia-tenant-viewer",
            "clusterrole/gryvia-tenant-member",
            "clusterrole/gryvia-tenant-admin",
            "clusterrolebinding/gryvia-operator",
            "validatingwebhookconfiguration/gryvia-webhook",
            "clusterkopfpeering/gryvia",
        ):
            assert not _exists(sandbox, cluster_scoped), cluster_scoped
        for name in [*crd_names, *KOPF_CRDS]:
            assert _exists(sandbox, f"crd/{name}"), name
    finally:
        sandbox.kubectl_run("delete", "namespace", namespace, "--wait=false", check=False)
        # The tenant ClusterRoles have fixed names: later tests of the session need them.
        helm = Path(_bin("helm"))
        sandbox.kubectl_run("apply", "-f", "-", input=render_tenant_roles(helm), check=False)
