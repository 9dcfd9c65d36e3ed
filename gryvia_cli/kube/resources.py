"""The CLI's nouns for the API resources: `job`, `node`, `sku`, ... keyed to the rows of the
one resource table, `gryvia_operator.api.resources`, and `lookup(noun)`.

Group, version, plural, scope, short names and REST paths (`Resource.path`, which URL-quotes
names) all come from that table; the rows are re-exported here, the same objects, so the CLI
reads `r.AIJOB.path(ns, name)` without a second copy.
"""

from __future__ import annotations

from collections.abc import Mapping

from gryvia_cli.errors import UsageError
from gryvia_operator.api import resources as api
from gryvia_operator.api.resources import (
    AIJOB,
    AUTOTUNER,
    BUDGET,
    CHARGEBACK,
    CHECKPOINT_GUARD,
    CONFIG_MAP,
    DATASET,
    DEPLOYMENT,
    EVENT,
    GPU_SHARING_POLICY,
    GPUNODE,
    GPUSKU,
    IDLE_POLICY,
    INFERENCE_SERVICE,
    INVOICE,
    JOB,
    JOB_RECORD,
    JOBHOOK,
    KOPF_PEERINGS,
    LEASE,
    LEDGER_ENTRY,
    MODEL_REGISTRY,
    NAMESPACE,
    NODE,
    POD,
    PRIORITY,
    QUOTA,
    RESERVATION,
    STORAGE,
    STORAGE_CLASS,
    TENANT,
    USAGE_RECORD,
    VALIDATING_WEBHOOKS,
    WORKFLOW,
    WORKSPACE,
    Resource,
)

__all__ = [
    "AIJOB",
    "AUTOTUNER",
    "BUDGET",
    "CHARGEBACK",
    "CHECKPOINT_GUARD",
    "CONFIG_MAP",
    "DATASET",
    "DEPLOYMENT",
    "EVENT",
    "GPUNODE",
    "GPUSKU",
    "GPU_SHARING_POLICY",
    "GRYVIA_RESOURCES",
    "IDLE_POLICY",
    "INFERENCE_SERVICE",
    "INVOICE",
    "JOB",
    "JOBHOOK",
    "JOB_RECORD",
    "KOPF_PEERINGS",
    "LEASE",
    "LEDGER_ENTRY",
    "MODEL_REGISTRY",
    "NAMESPACE",
    "NODE",
    "NOUNS",
    "POD",
    "PRIORITY",
    "QUOTA",
    "RESERVATION",
    "STORAGE",
    "STORAGE_CLASS",
    "TENANT",
    "USAGE_RECORD",
    "VALIDATING_WEBHOOKS",
    "WORKFLOW",
    "WORKSPACE",
    "Resource",
    "lookup",
    "noun",
]

GRYVIA_RESOURCES: tuple[Resource, ...] = api.GRYVIA
"""Every Gryvia kind, in `gryvia_operator.api.ALL_KINDS` order."""

NOUNS: Mapping[Resource, tuple[str, ...]] = {
    AIJOB: ("job", "jobs"),
    GPUNODE: ("node", "nodes"),
    GPUSKU: ("sku", "skus"),
    TENANT: ("tenant", "tenants"),
    QUOTA: ("quota", "quotas"),
    USAGE_RECORD: ("usagerecord", "usagerecords", "usage"),
    RESERVATION: ("reservation", "reservations"),
    BUDGET: ("budget", "budgets"),
    JOBHOOK: ("jobhook", "jobhooks", "job-hook", "job-hooks"),
    LEDGER_ENTRY: ("ledgerentry", "ledgerentries", "ledger-entry", "ledger-entries"),
    INVOICE: ("invoice", "invoices"),
    PRIORITY: ("priority", "priorities"),
    GPU_SHARING_POLICY: (
        "gpusharingpolicy",
        "gpusharingpolicies",
        "gpu-sharing-policy",
        "gpu-sharing-policies",
    ),
    CHECKPOINT_GUARD: (
        "checkpointguard",
        "checkpointguards",
        "checkpoint-guard",
        "checkpoint-guards",
    ),
    WORKFLOW: ("workflow", "workflows"),
    AUTOTUNER: ("tuner", "tuners", "autotuner", "autotuners"),
    WORKSPACE: ("workspace", "workspaces"),
    INFERENCE_SERVICE: ("inferenceservice", "inferenceservices"),
    MODEL_REGISTRY: ("model", "models", "modelregistry", "modelregistries"),
    IDLE_POLICY: ("idle-policy", "idle-policies", "idlepolicy", "idlepolicies"),
    STORAGE: ("storage", "storages"),
    DATASET: ("dataset", "datasets"),
    CHARGEBACK: ("chargeback", "chargebacks"),
    JOB_RECORD: ("jobrecord", "jobrecords", "job-record", "job-records"),
    POD: ("pod", "pods"),
}
"""The CLI nouns of a resource, the short one first (`gryvia list jobs`, `delete node`)."""


def noun(res: Resource) -> str:
    """The short CLI noun of `res` (`job`, `node`), else its lower-case kind (`event`)."""
    nouns = NOUNS.get(res)
    return nouns[0] if nouns else res.singular


def lookup(name: str) -> Resource:
    """Find a Gryvia kind by CLI noun, kind, plural, singular, `plural.group`,
    `singular.group` or short name (any case).

    Raises UsageError listing the accepted nouns when nothing matches.
    """
    wanted = name.strip().lower()
    for res in GRYVIA_RESOURCES:
        names = {*NOUNS.get(res, ()), *res.short_names, res.singular, res.plural, res.qualified}
        if wanted in names or wanted == f"{res.plural}.{res.group}":
            return res
    valid = ", ".join(noun(res) for res in GRYVIA_RESOURCES)
    raise UsageError(f'unknown resource type "{name}"', hint=f"use one of: {valid}")
