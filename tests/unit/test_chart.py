"""The Helm chart, rendered by the real helm binary (no cluster): lint, values, RBAC, security."""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from cryptography import x509

from gryvia_operator.api.registry import ALL_KINDS
from gryvia_operator.webhook.configuration import NAME_PLURALS
from gryvia_operator.webhook.names import NAMES_PATH

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "gryvia"
KUBE_VERSION = "1.36.3"  # helm's offline default is older than the chart's kubeVersion
NAMESPACE = "gryvia-system"
CERT_MANAGER = ("--set", "tls.mode=certManager", "--api-versions", "cert-manager.io/v1")
STANDARD_LABELS = (
    "helm.sh/chart",
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/part-of",
    "app.kubernetes.io/component",
)
TENANT_ROLES = ("gryvia-tenant-viewer", "gryvia-tenant-member", "gryvia-tenant-admin")
DIRECTORY = "gryvia-tenant-directory"
GROUP = ALL_KINDS[0].group


@functools.cache
def helm() -> str:
    """Return the helm binary's path (`make test` builds it first; BinariesMissingError
    says how when it is missing)."""
    from gryvia_cli.sandbox import binaries

    return str(binaries.path_of("helm"))


def run_helm(*args: str) -> subprocess.CompletedProcess[str]:
    """Run helm with `args` and return the completed process (never raises on failure)."""
    return subprocess.run([helm(), *args], capture_output=True, text=True, check=False, timeout=120)


@functools.cache
def _render(args: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    proc = run_helm(
        "template", "gryvia", str(CHART), "-n", NAMESPACE, "--kube-version", KUBE_VERSION, *args
    )
    assert proc.returncode == 0, proc.stderr
    return tuple(doc for doc in yaml.safe_load_all(proc.stdout) if doc)


def render(*args: str) -> list[dict[str, Any]]:
    """Render the chart (release `gryvia`) with extra helm args; return the objects."""
    return list(_render(tuple(args)))


def render_error(*args: str) -> str:
    """Render the chart expecting failure; return helm's error output."""
    proc = run_helm(
        "template", "gryvia", str(CHART), "-n", NAMESPACE, "--kube-version", KUBE_VERSION, *args
    )
    assert proc.returncode != 0, f"helm template {' '.join(args)} unexpectedly succeeded"
    return proc.stderr


def find(objs: list[dict[str, Any]], kind: str, name: str | None = None) -> list[dict[str, Any]]:
    """Return the objects of `kind` (and `name`, if given)."""
    return [
        o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]


def one(objs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    """Return the single object of `kind` (and `name`)."""
    found = find(objs, kind, name)
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def container(objs: list[dict[str, Any]]) -> dict[str, Any]:
    """The operator Deployment's only container."""
    pod = one(objs, "Deployment", "gryvia-operator")["spec"]["template"]["spec"]
    assert len(pod["containers"]) == 1
    return pod["containers"][0]


def rules_of(role: dict[str, Any]) -> Iterator[tuple[str, str, str, str]]:
    """Yield (apiGroup, resource, verb, resourceName or "") for every grant of a role."""
    for rule in role["rules"]:
        for group in rule.get("apiGroups", []):
            for resource in rule.get("resources", []):
                for verb in rule.get("verbs", []):
                    for name in rule.get("resourceNames") or [""]:
                        yield group, resource, verb, name


def grants(role: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    """Every (apiGroup, resource, verb, resourceName) a role grants."""
    return set(rules_of(role))


@functools.cache
def load_values_doc() -> ModuleType:
    """Import charts/gryvia/hack/values_doc.py (not a package)."""
    path = CHART / "hack" / "values_doc.py"
    spec = importlib.util.spec_from_file_location("gryvia_values_doc", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


# -- chart metadata and lint ---------------------------------------------------------------


def test_chart_metadata() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["apiVersion"] == "v2"
    assert chart["name"] == "gryvia"
    assert chart["version"] == "0.1.0"
    assert chart["appVersion"] == "0.1.0"
    assert chart["kubeVersion"] == ">=1.30.0-0"


@pytest.mark.parametrize(
    "extra",
    [(), ("--set", "webhook.enabled=false"), ("--set", "crds.enabled=false,rbac.create=false")],
    ids=["defaults", "no-webhook", "no-crds-no-rbac"],
)
def test_helm_lint_strict_passes(extra: tuple[str, ...]) -> None:
    proc = run_helm("lint", "--strict", str(CHART), *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_templates_are_grouped_by_concern() -> None:
    templates = CHART / "templates"
    folders = {p.name for p in templates.iterdir() if p.is_dir()}
    assert folders == {"crds", "operator", "rbac", "webhook"}
    loose = {p.name for p in templates.iterdir() if p.is_file()}
    assert loose == {"_helpers.tpl", "NOTES.txt"}
    helpers = (templates / "_helpers.tpl").read_text()
    for name in (
        "name",
        "fullname",
        "labels",
        "selectorLabels",
        "serviceAccountName",
        "image",
        "validateValues",
    ):
        assert f'define "gryvia.{name}"' in helpers
    notes = (templates / "NOTES.txt").read_text()
    assert "gryvia status" in notes
    assert "gryvia submit -f" in notes


# -- rendering variants --------------------------------------------------------------------


def test_default_render_has_every_part() -> None:
    objs = render()
    kinds = sorted({o["kind"] for o in objs})
    assert kinds == sorted(
        {
            "ClusterRole",
            "ClusterRoleBinding",
            "CustomResourceDefinition",
            "Deployment",
            "Job",
            "Secret",
            "Service",
            "ServiceAccount",
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
            "PodDisruptionBudget",
        }
    )
    assert {o["metadata"]["name"] for o in find(objs, "ClusterRole")} == {
        "gryvia-operator",
        *TENANT_ROLES,
        DIRECTORY,
    }
    for obj in objs:
        scoped = obj["kind"] in {
            "Deployment",
            "Job",
            "Secret",
            "Service",
            "ServiceAccount",
            "PodDisruptionBudget",
        }
        assert ("namespace" in obj["metadata"]) == scoped, obj["kind"]
        if scoped:
            assert obj["metadata"]["namespace"] == NAMESPACE


def test_crds_are_installed_and_kept_by_default() -> None:
    crds = find(render(), "CustomResourceDefinition")
    assert {c["metadata"]["name"] for c in crds} == {k.crd_name for k in ALL_KINDS}
    for crd in crds:
        assert crd["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"


def test_crds_keep_false_drops_the_keep_policy() -> None:
    for crd in find(render("--set", "crds.keep=false"), "CustomResourceDefinition"):
        assert "helm.sh/resource-policy" not in crd["metadata"]["annotations"]


def test_crds_enabled_false_renders_no_crds() -> None:
    objs = render("--set", "crds.enabled=false")
    assert not find(objs, "CustomResourceDefinition")
    assert find(objs, "Deployment")


def test_kopf_peering_crds_live_in_helms_crds_folder() -> None:
    crds = list(yaml.safe_load_all((CHART / "crds" / "kopf.dev_peerings.yaml").read_text()))
    assert {c["metadata"]["name"] for c in crds} == {
        "clusterkopfpeerings.kopf.dev",
        "kopfpeerings.kopf.dev",
    }


def test_cert_manager_mode() -> None:
    objs = render(*CERT_MANAGER)
    assert not find(objs, "Secret"), "cert-manager writes the Secret, not Helm"
    issuer = one(objs, "Issuer", "gryvia-selfsigned")
    assert issuer["spec"] == {"selfSigned": {}}
    cert = one(objs, "Certificate", "gryvia-webhook")
    assert cert["metadata"]["namespace"] == NAMESPACE
    assert cert["spec"]["secretName"] == "gryvia-webhook-tls"
    assert cert["spec"]["issuerRef"] == {
        "group": "cert-manager.io",
        "kind": "Issuer",
        "name": "gryvia-selfsigned",
    }
    assert "gryvia-webhook.gryvia-system.svc" in cert["spec"]["dnsNames"]
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        config = one(objs, kind)
        assert config["metadata"]["annotations"] == {
            "cert-manager.io/inject-ca-from": f"{NAMESPACE}/gryvia-webhook"
        }
        for hook in config["webhooks"]:
            assert "caBundle" not in hook["clientConfig"]
    volumes = one(objs, "Deployment")["spec"]["template"]["spec"]["volumes"]
    assert {"name": "webhook-certs", "secret": {"secretName": "gryvia-webhook-tls"}} in [
        {"name": v["name"], "secret": {"secretName": v["secret"]["secretName"]}}
        for v in volumes
        if "secret" in v
    ]


def test_cert_manager_with_an_existing_cluster_issuer() -> None:
    objs = render(
        *CERT_MANAGER,
        "--set",
        "tls.certManager.issuerName=corp-ca,tls.certManager.issuerKind=ClusterIssuer",
    )
    assert not find(objs, "Issuer")
    ref = one(objs, "Certificate")["spec"]["issuerRef"]
    assert ref == {"group": "cert-manager.io", "kind": "ClusterIssuer", "name": "corp-ca"}


def test_webhook_disabled_renders_no_webhook_parts() -> None:
    objs = render("--set", "webhook.enabled=false")
    assert not find(objs, "ValidatingWebhookConfiguration")
    assert not find(objs, "MutatingWebhookConfiguration")
    assert not find(objs, "Service")
    assert not find(objs, "Secret")
    main = container(objs)
    assert "--webhook-port=0" in main["args"]
    assert not any(a.startswith("--webhook-cert-dir") for a in main["args"])
    assert "webhook" not in {p["name"] for p in main["ports"]}
    assert [m["name"] for m in main["volumeMounts"]] == ["tmp"]


def test_self_register_lets_the_operator_own_the_configuration() -> None:
    objs = render("--set", "webhook.selfRegister=true")
    assert not find(objs, "ValidatingWebhookConfiguration")
    assert not find(objs, "MutatingWebhookConfiguration")
    assert not find(objs, "Secret")
    assert one(objs, "Service", "gryvia-webhook")
    args = container(objs)["args"]
    assert args[-2:] == ["--webhook-self-register", "--webhook-failure-policy=Ignore"]
    assert "--no-webhook-self-register" not in args
    assert not any(a.startswith("--webhook-cert-dir") for a in args)
    role = one(objs, "ClusterRole", "gryvia-operator")
    assert ("admissionregistration.k8s.io", "validatingwebhookconfigurations", "create", "") in (
        grants(role)
    )


def test_rbac_create_false_renders_no_operator_role() -> None:
    objs = render("--set", "rbac.create=false,rbac.tenantRoles=false,rbac.tenantDirectory=false")
    assert not find(objs, "ClusterRole")
    assert not find(objs, "ClusterRoleBinding")


def test_metrics_service() -> None:
    service = one(render("--set", "metrics.service.enabled=true"), "Service", "gryvia-metrics")
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": 9090, "targetPort": "metrics", "protocol": "TCP"}
    ]
    assert service["spec"]["selector"]["app.kubernetes.io/component"] == "operator"


def test_fullname_override_and_release_name() -> None:
    objs = render("--set", "fullnameOverride=acme")
    assert one(objs, "Deployment")["metadata"]["name"] == "acme-operator"
    assert one(objs, "Service")["metadata"]["name"] == "acme-webhook"
    # The tenant roles keep their fixed names: the operator binds them by name.
    assert {r["metadata"]["name"] for r in find(objs, "ClusterRole")} == {
        "acme-operator",
        *TENANT_ROLES,
        DIRECTORY,
    }


def test_the_tenant_directory_lets_every_user_list_tenants_and_nothing_else() -> None:
    objs = render()
    assert grants(one(objs, "ClusterRole", DIRECTORY)) == {
        (GROUP, "gryviatenants", verb, "") for verb in ("get", "list", "watch")
    }
    binding = one(objs, "ClusterRoleBinding", DIRECTORY)
    assert binding["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}
    ]
    assert not find(render("--set", "rbac.tenantDirectory=false"), "ClusterRole", DIRECTORY)


# -- schema and validateValues -------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("foo=1", "additional properties 'foo' not allowed"),
        ("webhook.failurePolicy=Maybe", "/webhook/failurePolicy"),
        ("crds.enabeld=false", "additional properties 'enabeld' not allowed"),
        ("webhook.timeoutSeconds=31", "/webhook/timeoutSeconds"),
        ("tls.mode=vault", "/tls/mode"),
        ("image.pullPolicy=Sometimes", "/image/pullPolicy"),
        ("operator.logFormat=xml", "/operator/logFormat"),
        ("operator.logLevel=critical", "/operator/logLevel"),
        ("operator.workers=0", "/operator/workers"),
        ("replicaCount=-1", "/replicaCount"),
        ("webhook.enabled=maybe", "/webhook/enabled"),
    ],
)
def test_schema_rejects_unknown_and_mistyped_values(setting: str, message: str) -> None:
    error = render_error("--set", setting)
    assert "values don't meet the specifications of the schema" in error
    assert message in error


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--set", "replicaCount=2,leaderElection.enabled=false"),
            "needs leaderElection.enabled=true",
        ),
        (("--set", "peering.enabled=true"), "exclude each other"),
        (
            ("--set", "leaderElection.renewDeadline=20"),
            "retryPeriod < renewDeadline < leaseDuration",
        ),
        (
            ("--set", "webhook.enabled=false,webhook.selfRegister=true"),
            "webhook.selfRegister=true needs webhook.enabled=true",
        ),
        (("--set", "tls.mode=certManager"), "needs cert-manager"),
    ],
    ids=[
        "replicas-without-a-leader",
        "election-and-peering",
        "renew-after-expiry",
        "self-register-without-webhook",
        "no-cert-manager",
    ],
)
def test_validate_values_fails_fast(args: tuple[str, ...], message: str) -> None:
    assert message in render_error(*args)


def test_schema_is_strict_at_every_object_level() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    problems: list[str] = []

    def walk(node: dict[str, Any], where: str) -> None:
        kinds = node.get("type")
        if kinds == "object" or (isinstance(kinds, list) and "object" in kinds):
            extra = node.get("additionalProperties")
            if "properties" in node and extra is not False:
                problems.append(f"{where}: objects with properties need additionalProperties false")
            if "properties" not in node and extra is None:
                problems.append(f"{where}: maps must declare what additionalProperties may be")
        for key, child in node.get("properties", {}).items():
            walk(child, f"{where}.{key}")
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{where}[]")
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{where}.*")

    walk(schema, "values")
    assert problems == []


# -- documentation -------------------------------------------------------------------------


def test_every_value_is_documented_and_the_docs_are_current() -> None:
    values_doc = load_values_doc()
    files, problems = values_doc.outputs()
    assert problems == []
    for path, text in files.items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path} is out of date: run python charts/gryvia/hack/values_doc.py"
        )


def test_docs_chart_md_names_every_value() -> None:
    values_doc = load_values_doc()
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    docs = (ROOT / "docs" / "chart.md").read_text()
    documented = {d.dotted for d in values_doc.parse_comments((CHART / "values.yaml").read_text())}
    for path in values_doc.leaf_paths(values):
        covering = [".".join(path[:n]) for n in range(len(path), 0, -1)]
        assert any(f"`{key}`" in docs and key in documented for key in covering), path


def test_values_doc_parser_handles_continuations_and_nesting() -> None:
    values_doc = load_values_doc()
    text = "# header\na:\n  # -- first\n  # and more\n  b: 1\n  c:\n    # -- deep\n    d: x\n"
    found = values_doc.parse_comments(text)
    assert [(d.dotted, d.text) for d in found] == [("a.b", "first and more"), ("a.c.d", "deep")]
    assert values_doc.undocumented(yaml.safe_load(text), found) == []
    assert values_doc.undocumented({"a": {"e": 1}}, found) == ["a.e"]


# -- RBAC ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra", [(), ("--set", "webhook.selfRegister=true")], ids=["defaults", "self-register"]
)
def test_cluster_roles_have_no_wildcards(extra: tuple[str, ...]) -> None:
    for role in find(render(*extra), "ClusterRole"):
        for rule in role["rules"]:
            assert "nonResourceURLs" not in rule
            for field in ("apiGroups", "resources", "verbs", "resourceNames"):
                assert all("*" not in item for item in rule.get(field, [])), (
                    role["metadata"]["name"],
                    rule,
                )


SPEC_ONLY = {"GryviaLedgerEntry", "GryviaJobRecord"}
"""Kinds without a status: the ledger's whole record is its spec (an invoice's status says
where `--stripe` pushed it)."""


def test_operator_role_covers_every_gryvia_kind_and_status() -> None:
    role = one(render(), "ClusterRole", "gryvia-operator")
    granted = grants(role)
    for info in ALL_KINDS:
        for verb in ("get", "list", "watch", "patch"):
            assert (GROUP, info.plural, verb, "") in granted, (info.plural, verb)
        for verb in ("get", "update", "patch") if info.kind not in SPEC_ONLY else ():
            assert (GROUP, f"{info.plural}/status", verb, "") in granted, (info.plural, verb)
    gryvia_resources = {r for g, r, _, _ in granted if g == GROUP}
    assert gryvia_resources == {k.plural for k in ALL_KINDS} | {
        f"{k.plural}/status" for k in ALL_KINDS if k.kind not in SPEC_ONLY
    }


def test_operator_role_grants_exactly_what_the_operator_uses() -> None:
    granted = grants(one(render(), "ClusterRole", "gryvia-operator"))
    read = {"get", "list", "watch"}
    crud = read | {"create", "update", "patch", "delete"}
    expected_outside_gryvia = (
        {("batch", "jobs", v, "") for v in crud}
        | {("apps", "statefulsets", v, "") for v in crud}
        | {
            ("", r, v, "")
            for r in ("services", "persistentvolumeclaims")
            for v in crud - {"update"}
        }
        | {("", "pods", v, "") for v in read | {"patch", "delete"}}
        | {("", "pods/log", "get", "")}
        | {("", "pods/proxy", "get", "")}  # GPU metrics: the dcgm-exporters' /metrics
        | {("", "pods/eviction", "create", "")}
        | {("", "configmaps", v, "") for v in ("get", "create", "patch")}
        | {("", "events", v, "") for v in ("create", "patch", "list")}  # list: Preempted
        | {("events.k8s.io", "events", "create", "")}
        | {("", "nodes", v, "") for v in read | {"patch"}}
        | {("", "namespaces", v, "") for v in crud - {"update"}}
        | {("", r, v, "") for r in ("resourcequotas", "limitranges") for v in crud}
        | {("networking.k8s.io", "networkpolicies", v, "") for v in crud}
        | {("rbac.authorization.k8s.io", "rolebindings", v, "") for v in crud}
        | {("rbac.authorization.k8s.io", "clusterroles", "bind", n) for n in TENANT_ROLES}
        | {("", "secrets", "get", "")}
        | {("apiextensions.k8s.io", "customresourcedefinitions", v, "") for v in read}
        | {("coordination.k8s.io", "leases", v, "") for v in ("get", "create", "update")}
        # workspaces: their pods are created by the operator, CPU read from metrics.k8s.io
        | {("", "pods", "create", "")}
        | {("metrics.k8s.io", "pods", v, "") for v in ("get", "list")}
        # storage backends make their StorageClass; datasets copy a staged volume per namespace
        | {("storage.k8s.io", "storageclasses", v, "") for v in crud - {"update"}}
        | {("", "persistentvolumes", v, "") for v in read | {"create", "delete"}}
    )
    assert {g for g in granted if g[0] != GROUP} == expected_outside_gryvia


def test_operator_binding_targets_its_service_account() -> None:
    objs = render()
    binding = one(objs, "ClusterRoleBinding", "gryvia-operator")
    assert binding["roleRef"]["name"] == "gryvia-operator"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "gryvia-operator", "namespace": NAMESPACE}
    ]
    assert one(objs, "ServiceAccount")["metadata"]["name"] == "gryvia-operator"
    pod = one(objs, "Deployment")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "gryvia-operator"


def test_tenant_roles_nest_and_stay_away_from_secrets_and_usage() -> None:
    roles = {r["metadata"]["name"]: r for r in find(render(), "ClusterRole")}
    viewer, member, admin = (grants(roles[name]) for name in TENANT_ROLES)
    assert viewer < member < admin
    assert (GROUP, "gryviaaijobs", "list", "") in viewer
    assert ("", "pods/log", "get", "") in viewer
    assert ("", "configmaps", "get", "") in viewer  # saved logs
    assert {v for g, r, v, _ in member - viewer if r == "gryviaaijobs"} == {"create", "patch"}
    assert ("rbac.authorization.k8s.io", "rolebindings", "create", "") in admin
    assert ("", "pods/portforward", "create", "") in member - viewer  # the original's rule
    assert {n for g, r, v, n in admin if v == "bind"} == set(TENANT_ROLES)
    for granted in (viewer, member, admin):
        assert not {g for g in granted if g[1] in ("secrets", "pods/exec", "pods/attach")}
        usage = {v for g, r, v, _ in granted if r.startswith("gryviausagerecords")}
        assert usage <= {"get", "list", "watch"}


def test_tenant_roles_aggregate_into_the_builtin_roles() -> None:
    labels = {r["metadata"]["name"]: r["metadata"]["labels"] for r in find(render(), "ClusterRole")}
    assert labels["gryvia-tenant-viewer"]["rbac.authorization.k8s.io/aggregate-to-view"] == "true"
    assert labels["gryvia-tenant-member"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    assert labels["gryvia-tenant-admin"]["rbac.authorization.k8s.io/aggregate-to-admin"] == "true"
    off = render("--set", "rbac.aggregateToDefaultRoles=false")
    for role in find(off, "ClusterRole"):
        assert not any(k.startswith("rbac.authorization") for k in role["metadata"]["labels"])


# -- the operator Deployment ---------------------------------------------------------------


def test_deployment_security_context() -> None:
    objs = render()
    pod = one(objs, "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 65532
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    sc = container(objs)["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert sc["runAsUser"] == 65532
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    tmp = next(v for v in pod["volumes"] if v["name"] == "tmp")
    assert "emptyDir" in tmp
    assert {"name": "tmp", "mountPath": "/tmp"} in container(objs)["volumeMounts"]


def test_deployment_runs_the_operator_with_the_planned_cli() -> None:
    main = container(render())
    assert main["command"] == ["gryvia-operator"]
    assert main["image"] == "ghcr.io/gryvia/gryvia-operator:0.1.0"
    assert main["args"] == [
        "--all-namespaces",
        "--leader-election",
        "--leader-election-id=gryvia-operator",
        "--lease-duration=15",
        "--renew-deadline=10",
        "--retry-period=2",
        "--log-format=json",
        "--log-level=info",
        "--health-port=8080",
        "--metrics-port=9090",
        "--workers=16",
        "--cluster-domain=cluster.local",
        "--job-record-retention-days=90",
        "--job-record-rollup-seconds=3600",
        "--webhook-port=9443",
        "--webhook-cert-dir=/etc/gryvia/webhook-certs",
        "--no-webhook-self-register",
    ]
    ports = {p["name"]: p["containerPort"] for p in main["ports"]}
    assert ports == {"health": 8080, "metrics": 9090, "webhook": 9443}
    assert main["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert main["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert main["resources"]["requests"] == {"cpu": "100m", "memory": "128Mi"}
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in main["env"]}
    assert env["POD_ID"] == env["POD_NAME"] == "metadata.name"
    assert env["POD_NAMESPACE"] == "metadata.namespace"


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (
            "",
            {
                "namespaces": [],
                "peering": None,
                "leader_election": True,
                "lease_duration": 15.0,
                "webhook_port": 9443,
                "webhook_self_register": False,
                "webhook_cert_dir": Path("/etc/gryvia/webhook-certs"),
                "admission_gate": False,
            },
        ),
        (
            "webhook.enabled=false,leaderElection.enabled=false,replicaCount=1,peering.enabled=true",
            {"peering": "gryvia", "leader_election": False, "webhook_port": 0},
        ),
        (
            "webhook.selfRegister=true,webhook.failurePolicy=Fail",
            {
                "webhook_self_register": True,
                "webhook_failure_policy": "Fail",
                "webhook_cert_dir": None,
            },
        ),
        (
            "operator.watchNamespaces={a,b},operator.logFormat=text,operator.workers=4",
            {"namespaces": ["a", "b"], "log_format": "text", "workers": 4},
        ),
        (
            "aiOperator.admissionGate=true",
            {"admission_gate": True, "admission_fail_open": True, "admission_default_hours": 1.0},
        ),
        (
            "aiOperator.admissionGate=true,aiOperator.admissionGateFailOpen=false,"
            "aiOperator.admissionDefaultHours=3",
            {
                "admission_gate": True,
                "admission_fail_open": False,
                "admission_default_hours": 3.0,
            },
        ),
    ],
    ids=["defaults", "peering-no-webhook", "self-register", "namespaced", "gate", "gate-closed"],
)
def test_the_operator_cli_accepts_the_rendered_args(setting: str, expected: dict[str, Any]) -> None:
    from gryvia_operator.settings import parse_settings

    main = container(render("--set", setting) if setting else render())
    settings = parse_settings(main["args"])
    assert (settings.health_port, settings.metrics_port) == (8080, 9090)
    assert {key: getattr(settings, key) for key in expected} == expected


def test_deployment_scheduling_and_namespace_values() -> None:
    objs = render(
        "--set",
        "replicaCount=2,priorityClassName=system-cluster-critical,nodeSelector.role=infra",
        "--set",
        "operator.watchNamespaces={team-a,team-b},operator.extraArgs={--log-level=debug}",
        "--set",
        "podAnnotations.a=b,podLabels.c=d,image.tag=9.9.9",
        "--set-json",
        'tolerations=[{"key":"infra","operator":"Exists","effect":"NoSchedule"}]',
        "--set-json",
        'affinity.nodeAffinity={"requiredDuringSchedulingIgnoredDuringExecution":'
        '{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Exists"}]}]}}',
    )
    deployment = one(objs, "Deployment")
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    template = deployment["spec"]["template"]
    pod = template["spec"]
    assert pod["priorityClassName"] == "system-cluster-critical"
    assert pod["nodeSelector"] == {"role": "infra"}
    # the user's toleration, then the system nodes' (systemNodes, on by default); the user's
    # node affinity replaces the preference for system nodes
    assert pod["tolerations"] == [
        {"key": "infra", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "gryvia.io/system-node", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert sorted(pod["affinity"]) == ["nodeAffinity", "podAntiAffinity"]
    assert "preferredDuringSchedulingIgnoredDuringExecution" not in pod["affinity"]["nodeAffinity"]
    [spread] = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert spread["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert template["metadata"]["annotations"] == {"a": "b"}
    assert template["metadata"]["labels"]["c"] == "d"
    main = container(objs)
    assert main["image"] == "ghcr.io/gryvia/gryvia-operator:9.9.9"
    assert main["args"][:3] == ["--namespace=team-a", "--namespace=team-b", "--leader-election"]
    assert main["args"][-1] == "--log-level=debug"
    pdb = one(objs, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"] == deployment["spec"]["selector"]


def test_operator_pods_prefer_system_nodes_unless_told_not_to() -> None:
    pod = one(render(), "Deployment")["spec"]["template"]["spec"]
    [term] = pod["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["preference"]["matchExpressions"] == [
        {"key": "gryvia.io/system-node", "operator": "In", "values": ["true"]}
    ]
    assert {"key": "gryvia.io/system-node", "operator": "Exists", "effect": "NoSchedule"} in pod[
        "tolerations"
    ]
    off = one(render("--set", "systemNodes=false"), "Deployment")["spec"]["template"]["spec"]
    assert "tolerations" not in off
    assert "nodeAffinity" not in off.get("affinity", {})


def test_peering_for_a_single_replica_per_watched_namespace() -> None:
    objs = render(
        "--set",
        "replicaCount=1,leaderElection.enabled=false,peering.enabled=true",
        "--set",
        "operator.watchNamespaces={team-a,team-b}",
    )
    deployment = one(objs, "Deployment")
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert not find(objs, "PodDisruptionBudget")
    assert "podAntiAffinity" not in (deployment["spec"]["template"]["spec"].get("affinity") or {})
    args = container(objs)["args"]
    assert args[:3] == ["--namespace=team-a", "--namespace=team-b", "--peering=gryvia"]
    assert not [a for a in args if a.startswith("--leader-election")]
    peerings = find(objs, "KopfPeering")
    assert {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in peerings} == {
        ("team-a", "gryvia"),
        ("team-b", "gryvia"),
    }
    assert not find(objs, "ClusterKopfPeering")


def test_image_digest_pins_the_image() -> None:
    digest = "sha256:" + "a" * 64
    assert container(render("--set", f"image.digest={digest}"))["image"] == (
        f"ghcr.io/gryvia/gryvia-operator@{digest}"
    )


def test_peering_is_off_by_default() -> None:
    objs = render()
    assert not find(objs, "ClusterKopfPeering")
    assert not any(a.startswith("--peering") for a in container(objs)["args"])
    role = one(objs, "ClusterRole", "gryvia-operator")
    assert not [g for g in grants(role) if g[0] == "kopf.dev"]


def test_openshift_style_security_context_leaves_ids_unset() -> None:
    objs = render(
        "--set",
        "podSecurityContext.runAsUser=null,podSecurityContext.fsGroup=null,"
        "securityContext.runAsUser=null",
    )
    pod = one(objs, "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"].get("runAsUser") is None
    assert pod["securityContext"]["runAsNonRoot"] is True


# -- labels --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [
        (),
        CERT_MANAGER,
        (
            "--set",
            "webhook.selfRegister=true,metrics.service.enabled=true",
            "--set",
            "operator.watchNamespaces={team-a}",
        ),
    ],
    ids=["defaults", "cert-manager", "self-register"],
)
def test_every_object_has_the_standard_labels(extra: tuple[str, ...]) -> None:
    for obj in render(*extra):
        labels = obj["metadata"].get("labels", {})
        if obj["kind"] == "CustomResourceDefinition":
            # Generated by gryvia_operator.api.crd.generate, which writes their metadata.
            assert labels.get("app.kubernetes.io/part-of") == "gryvia"
            continue
        missing = [key for key in STANDARD_LABELS if key not in labels]
        assert not missing, (obj["kind"], obj["metadata"]["name"], missing)
        assert labels["app.kubernetes.io/instance"] == "gryvia"
        assert labels["helm.sh/chart"] == "gryvia-0.1.0"


def test_selectors_match_the_pod_labels() -> None:
    objs = render("--set", "metrics.service.enabled=true")
    deployment = one(objs, "Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    for service in find(objs, "Service"):
        assert service["spec"]["selector"].items() <= pod_labels.items()


# -- webhook -------------------------------------------------------------------------------


def test_webhook_configuration() -> None:
    objs = render()
    vwc = one(objs, "ValidatingWebhookConfiguration", "gryvia-webhook")
    hooks = {h["clientConfig"]["service"]["path"]: h for h in vwc["webhooks"]}
    assert set(hooks) == {
        "/validate-gryvia-io-v1alpha1-gryviaaijob",
        "/validate-gryvia-io-v1alpha1-gryviausagerecord",
        NAMES_PATH,
    }
    # the names webhook covers the kinds the operator's own configuration names, on CREATE
    names = hooks[NAMES_PATH]
    assert names["rules"][0]["resources"] == list(NAME_PLURALS)
    assert names["rules"][0]["operations"] == ["CREATE"]
    jobs = hooks["/validate-gryvia-io-v1alpha1-gryviaaijob"]
    records = hooks["/validate-gryvia-io-v1alpha1-gryviausagerecord"]
    assert jobs["rules"][0]["resources"] == ["gryviaaijobs"]
    assert jobs["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert records["rules"][0]["resources"] == ["gryviausagerecords"]
    assert records["rules"][0]["operations"] == ["UPDATE"]
    for hook in vwc["webhooks"]:
        assert hook["failurePolicy"] == "Ignore"
        assert hook["timeoutSeconds"] == 5
        assert hook["sideEffects"] == "None"
        assert hook["admissionReviewVersions"] == ["v1"]
        assert hook["rules"][0]["apiGroups"] == [GROUP]
        assert hook["clientConfig"]["service"]["name"] == "gryvia-webhook"
        assert hook["clientConfig"]["service"]["namespace"] == NAMESPACE
        assert hook["clientConfig"]["service"]["port"] == 443
        assert hook["namespaceSelector"] == {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": ["kube-system"],
                }
            ]
        }
    (stamp,) = one(objs, "MutatingWebhookConfiguration", "gryvia-webhook")["webhooks"]
    assert stamp["clientConfig"]["service"]["path"] == "/mutate-gryvia-io-v1alpha1-gryviaaijob"
    assert stamp["rules"][0]["resources"] == ["gryviaaijobs"]
    assert stamp["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert (stamp["failurePolicy"], stamp["reinvocationPolicy"]) == ("Ignore", "Never")
    assert stamp["namespaceSelector"] == vwc["webhooks"][0]["namespaceSelector"]
    service = one(objs, "Service", "gryvia-webhook")
    assert service["spec"]["ports"] == [
        {"name": "https", "port": 443, "targetPort": "webhook", "protocol": "TCP"}
    ]


def test_webhook_values_reach_the_configuration() -> None:
    objs = render("--set", "webhook.failurePolicy=Fail,webhook.timeoutSeconds=10")
    for hook in one(objs, "ValidatingWebhookConfiguration")["webhooks"]:
        assert (hook["failurePolicy"], hook["timeoutSeconds"]) == ("Fail", 10)


def test_self_signed_certificate_serves_the_service_and_matches_the_ca_bundle() -> None:
    objs = render()
    secret = one(objs, "Secret", "gryvia-webhook-tls")
    assert secret["type"] == "kubernetes.io/tls"
    data = {k: base64.b64decode(v) for k, v in secret["data"].items()}
    assert set(data) == {"tls.crt", "tls.key", "ca.crt"}
    vwc = one(objs, "ValidatingWebhookConfiguration")
    mwc = one(objs, "MutatingWebhookConfiguration")
    for hook in [*vwc["webhooks"], *mwc["webhooks"]]:
        assert base64.b64decode(hook["clientConfig"]["caBundle"]) == data["ca.crt"]
    leaf = x509.load_pem_x509_certificate(data["tls.crt"])
    ca = x509.load_pem_x509_certificate(data["ca.crt"])
    leaf.verify_directly_issued_by(ca)
    names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(names.get_values_for_type(x509.DNSName)) == {
        "gryvia-webhook",
        "gryvia-webhook.gryvia-system",
        "gryvia-webhook.gryvia-system.svc",
        "gryvia-webhook.gryvia-system.svc.cluster.local",
    }
    deployment_volumes = one(objs, "Deployment")["spec"]["template"]["spec"]["volumes"]
    certs = next(v for v in deployment_volumes if v["name"] == "webhook-certs")
    assert certs["secret"]["secretName"] == "gryvia-webhook-tls"


def test_self_signed_certificate_reuse_is_wired_through_lookup() -> None:
    # `helm template` cannot look anything up, so the reuse itself is checked against a real
    # cluster in tests/integration/test_chart.py; here: the template asks for the Secret.
    text = (CHART / "templates" / "webhook" / "validatingwebhookconfiguration.yaml").read_text()
    assert 'lookup "v1" "Secret" .Release.Namespace $secretName' in text


# -- the operator image --------------------------------------------------------------------


def test_dockerfile_builds_a_non_root_operator_image() -> None:
    lines = [
        line.strip()
        for line in (ROOT / "Dockerfile").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    stages = [line for line in lines if line.startswith("FROM ")]
    assert len(stages) == 2, "a builder stage and a final stage"
    assert stages[0].endswith(" AS builder")
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in lines
    assert any('pip install ".[operator,stripe]"' in line for line in lines)
    assert "COPY --from=builder /opt/venv /opt/venv" in lines
    assert lines.index("USER 65532:65532") > lines.index(stages[1])
    assert lines[-1] == 'ENTRYPOINT ["gryvia-operator"]'
