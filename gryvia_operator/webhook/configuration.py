"""The Validating- and MutatingWebhookConfiguration the sandbox operator registers for itself.

In a cluster the chart renders the same webhooks.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from gryvia_operator.api.namelimits import NAME_LIMITED_KINDS
from gryvia_operator.api.names import GROUP, VERSION
from gryvia_operator.api.registry import kind_info
from gryvia_operator.webhook.billing import INVOICE_PATH, LEDGER_ENTRY_PATH
from gryvia_operator.webhook.names import NAMES_PATH
from gryvia_operator.webhook.review import AIJOB_MUTATE_PATH, AIJOB_PATH, USAGE_RECORD_PATH

DEFAULT_NAME = "gryvia-validating"
AIJOB_WEBHOOK = "vgryviaaijob.gryvia.io"
AIJOB_MUTATING_WEBHOOK = "mgryviaaijob.gryvia.io"
USAGE_RECORD_WEBHOOK = "vgryviausagerecord.gryvia.io"
LEDGER_ENTRY_WEBHOOK = "vgryvialedgerentry.gryvia.io"
INVOICE_WEBHOOK = "vgryviainvoice.gryvia.io"
NAMES_WEBHOOK = "vgryvianames.gryvia.io"
NAME_PLURALS = tuple(kind_info(kind).plural for kind in NAME_LIMITED_KINDS)
"""The resources whose names the names webhook checks on CREATE."""


def _webhook(
    name: str,
    url: str,
    ca_bundle: bytes,
    plural: str | tuple[str, ...],
    operations: Sequence[str],
    failure_policy: str,
    timeout_seconds: int,
    exclude_namespaces: Sequence[str],
    scope: str = "Namespaced",
) -> dict[str, Any]:
    webhook: dict[str, Any] = {
        "name": name,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": failure_policy,
        "matchPolicy": "Equivalent",
        "timeoutSeconds": timeout_seconds,
        "clientConfig": {"url": url, "caBundle": base64.b64encode(ca_bundle).decode()},
        "rules": [
            {
                "apiGroups": [GROUP],
                "apiVersions": [VERSION],
                "resources": [plural] if isinstance(plural, str) else list(plural),
                "operations": list(operations),
                "scope": scope,
            }
        ],
    }
    if exclude_namespaces and scope == "Namespaced":
        webhook["namespaceSelector"] = {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": list(exclude_namespaces),
                }
            ]
        }
    return webhook


def build_webhook_configuration(
    base_url: str,
    ca_bundle: bytes,
    *,
    name: str = DEFAULT_NAME,
    failure_policy: str = "Ignore",
    timeout_seconds: int = 5,
    exclude_namespaces: Sequence[str] = ("kube-system",),
) -> dict[str, Any]:
    """The webhooks (GryviaAIJob CREATE/UPDATE, GryviaUsageRecord UPDATE, GryviaLedgerEntry
    and GryviaInvoice UPDATE/DELETE, the names of `NAME_PLURALS` on CREATE) at `base_url`
    (e.g. `https://127.0.0.1:9443`), trusting `ca_bundle` (PEM)."""
    base = base_url.rstrip("/")
    common = (failure_policy, timeout_seconds, exclude_namespaces)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "gryvia-operator"}},
        "webhooks": [
            _webhook(
                AIJOB_WEBHOOK,
                base + AIJOB_PATH,
                ca_bundle,
                "gryviaaijobs",
                ("CREATE", "UPDATE"),
                *common,
            ),
            _webhook(
                USAGE_RECORD_WEBHOOK,
                base + USAGE_RECORD_PATH,
                ca_bundle,
                "gryviausagerecords",
                ("UPDATE",),
                *common,
            ),
            _webhook(
                LEDGER_ENTRY_WEBHOOK,
                base + LEDGER_ENTRY_PATH,
                ca_bundle,
                "gryvialedgerentries",
                ("UPDATE", "DELETE"),
                *common,
                scope="Cluster",
            ),
            _webhook(
                INVOICE_WEBHOOK,
                base + INVOICE_PATH,
                ca_bundle,
                "gryviainvoices",
                ("UPDATE", "DELETE"),
                *common,
                scope="Cluster",
            ),
            _webhook(
                NAMES_WEBHOOK,
                base + NAMES_PATH,
                ca_bundle,
                NAME_PLURALS,
                ("CREATE",),
                *common,
            ),
        ],
    }


def mutating_name(validating_name: str) -> str:
    """The self-registered MutatingWebhookConfiguration's name, from the validating one's:
    `gryvia-validating` -> `gryvia-mutating`, anything else -> `<name>-mutating`."""
    if "validating" in validating_name:
        return validating_name.replace("validating", "mutating")
    return f"{validating_name}-mutating"


def build_mutating_configuration(
    base_url: str,
    ca_bundle: bytes,
    *,
    name: str = "gryvia-mutating",
    failure_policy: str = "Ignore",
    timeout_seconds: int = 5,
    exclude_namespaces: Sequence[str] = ("kube-system",),
) -> dict[str, Any]:
    """The mutating webhook that stamps a new GryviaAIJob's submitter (CREATE) and keeps it
    through an UPDATE that leaves it out, at `base_url`, trusting `ca_bundle` (PEM).
    `reinvocationPolicy: Never`: the validating webhook checks the result again."""
    hook = _webhook(
        AIJOB_MUTATING_WEBHOOK,
        base_url.rstrip("/") + AIJOB_MUTATE_PATH,
        ca_bundle,
        "gryviaaijobs",
        ("CREATE", "UPDATE"),
        failure_policy,
        timeout_seconds,
        exclude_namespaces,
    )
    hook["reinvocationPolicy"] = "Never"
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "gryvia-operator"}},
        "webhooks": [hook],
    }
