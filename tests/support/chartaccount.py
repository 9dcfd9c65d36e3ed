"""The chart's operator account in a sandbox: its ServiceAccount, ClusterRole and binding as the
chart renders them (every opt-in feature on, the webhook self-registered as in the sandbox),
and a kubeconfig whose user is a token minted for that ServiceAccount (TokenRequest). An
operator started with it makes every API call through the chart's RBAC."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

CHART = Path(__file__).resolve().parents[2] / "charts" / "gryvia"
RELEASE = "gryvia-it"
NAMESPACE = "gryvia-it"
ACCOUNT = f"{RELEASE}-operator"
CLUSTER_ROLE = f"{RELEASE}-operator"
"""Names that cannot clash with a test's own `helm install gryvia` (its objects are gryvia-*)."""

FEATURES = (
    "aiOperator.jobHooks.enabled=true,aiOperator.reservations.enabled=true,"
    "aiOperator.workflows.enabled=true,aiOperator.inference.enabled=true,"
    "aiOperator.priorities.enabled=true,aiOperator.kueue.enabled=true,"
    "aiOperator.modelRegistry.enabled=true,"
    "aiOperator.checkpointGuards.enabled=true,aiOperator.autotuners.enabled=true,"
    "gpuOperator.gpuSharing.enabled=true,billing.ledger.enabled=true,webhook.selfRegister=true"
)
SETTINGS = f"fullnameOverride={RELEASE},{FEATURES}"
TENANT_ROLES = "templates/rbac/tenant-clusterroles.yaml"
TEMPLATES = (
    "templates/operator/serviceaccount.yaml",
    "templates/rbac/operator-clusterrole.yaml",
    "templates/rbac/operator-clusterrolebinding.yaml",
)


def render_account(helm: Path) -> str:
    """The chart's ServiceAccount, ClusterRole and ClusterRoleBinding of release `gryvia-it`."""
    only = [arg for t in TEMPLATES for arg in ("--show-only", t)]
    return subprocess.run(
        [
            str(helm),
            "template",
            RELEASE,
            str(CHART),
            "-n",
            NAMESPACE,
            "--set",
            f"fullnameOverride={RELEASE},{FEATURES}",
            *only,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout


def render_tenant_roles(helm: Path) -> str:
    """The chart's ClusterRoles gryvia-tenant-viewer|member|admin (fixed names)."""
    return subprocess.run(
        [
            str(helm),
            "template",
            "gryvia",
            str(CHART),
            "--show-only",
            "templates/rbac/tenant-clusterroles.yaml",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout


def install_account(helm: Path, kubectl: Path, admin_kubeconfig: Path, out: Path) -> Path:
    """Apply the chart's account objects with the admin kubeconfig, mint a 24-hour token for
    the ServiceAccount, and write `out`: the admin kubeconfig's cluster with that token as its
    user. Returns `out`."""
    base = [str(kubectl), "--kubeconfig", str(admin_kubeconfig)]
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    for doc in (json.dumps(namespace), render_account(helm)):
        subprocess.run(
            [*base, "apply", "-f", "-"], input=doc, text=True, capture_output=True, check=True
        )
    token = subprocess.run(
        [*base, "create", "token", ACCOUNT, "-n", NAMESPACE, "--duration", "24h"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    raw = subprocess.run(
        [*base, "config", "view", "--raw", "--minify", "--flatten", "-o", "json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    config = json.loads(raw)
    context = config["contexts"][0]
    context["context"]["user"] = ACCOUNT
    config["users"] = [{"name": ACCOUNT, "user": {"token": token}}]
    out.write_text(yaml.safe_dump(config, sort_keys=False))
    out.chmod(0o600)
    return out


def remove_verb(kubectl: Path, admin_kubeconfig: Path, resource: str, verb: str) -> str:
    """Remove `verb` from every rule of the account's ClusterRole naming core `resource`;
    return the role as it was (JSON) for `restore_role`."""
    base = [str(kubectl), "--kubeconfig", str(admin_kubeconfig)]
    saved = subprocess.run(
        [*base, "get", "clusterrole", CLUSTER_ROLE, "-o", "json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    role = json.loads(saved)
    for rule in role["rules"]:
        if rule.get("apiGroups") == [""] and resource in rule.get("resources", []):
            others = [r for r in rule["resources"] if r != resource]
            if others:  # split the rule: the others keep the verb
                role["rules"].append({**rule, "resources": others})
            rule["resources"] = [resource]
            rule["verbs"] = [v for v in rule["verbs"] if v != verb]
    role["rules"] = [r for r in role["rules"] if r["verbs"]]
    subprocess.run(
        [*base, "replace", "-f", "-"],
        input=json.dumps(role),
        text=True,
        capture_output=True,
        check=True,
    )
    return saved


def restore_role(kubectl: Path, admin_kubeconfig: Path, saved: str) -> None:
    """Put back the ClusterRole `remove_verb` returned."""
    role = json.loads(saved)
    role["metadata"].pop("resourceVersion", None)
    subprocess.run(
        [str(kubectl), "--kubeconfig", str(admin_kubeconfig), "replace", "-f", "-"],
        input=json.dumps(role),
        text=True,
        capture_output=True,
        check=True,
    )
