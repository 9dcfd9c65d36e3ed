"""The console's one table of kinds, in a module with no heavy imports: the cluster seam
(`source`, `kubesource`) needs it before the store (and pydantic) load, so `gryvia tui` can
start its first list while the rest of the console is still importing.

A row holds only what is the console's own (its name for the kind, the view that shows it,
what titles call one object, the extra words `:describe` takes); scope, plural, singular,
short names, the event's `involvedObject.kind` and the REST path come from the kind's row of
the API's resource table (`gryvia_operator.api.resources`, the `resource` of each
`KindInfo` in `api.ALL_KINDS`). Add a kind: add its name to `ObjectKind` (and `Kind` when the
store watches it) and a row to `CONSOLE_KINDS`; a unit test checks each Gryvia kind has one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from gryvia_operator.api import resources as api
from gryvia_operator.api.resources import Resource

Kind = Literal[
    "jobs",
    "gpunodes",
    "nodes",
    "pods",
    "skus",
    "tenants",
    "quotas",
    "usage",
    "budgets",
    "reservations",
]
"""A kind the console lists and watches (the store keeps one table of each)."""
KINDS: tuple[Kind, ...] = get_args(Kind)

ObjectKind = Literal[
    Kind,
    "jobhooks",
    "priorities",
    "checkpointguards",
    "gpusharingpolicies",
    "workflows",
    "autotuners",
    "workspaces",
    "inferenceservices",
    "modelregistries",
    "idlepolicies",
    "storages",
    "datasets",
]
"""Kinds the console reads one object (or a list) of on demand: describe, and the lists of
the registry views that poll (hooks, priorities, checkpoint guards, GPU sharing policies).
The names of `CONSOLE_KINDS` (a unit test checks they agree)."""


@dataclass(frozen=True)
class ConsoleKind:
    """One kind the console shows: the console's own facts, and the kind's API resource."""

    name: ObjectKind
    """The console's name for the kind (`jobs`, `usage`)."""
    resource: Resource
    """The kind's row of the API resource table: names, scope and REST paths."""
    view: str
    """The view that lists its objects (`jobs`, `hooks`)."""
    title: str
    """What titles call one object ("Describe GPU node a100-0")."""
    words: tuple[str, ...] = ()
    """Words `:describe` takes for it besides its name and the resource's plural, singular
    and short names (`job`, `hook`)."""
    from_events: bool = True
    """An event about an object of this kind opens that object (`d` in the events view)."""


CONSOLE_KINDS: tuple[ConsoleKind, ...] = (
    ConsoleKind("jobs", api.AIJOB, "jobs", "job", ("job", "aijob", "aijobs")),
    ConsoleKind("gpunodes", api.GPUNODE, "nodes", "GPU node", ("gpunode",)),
    ConsoleKind("nodes", api.NODE, "nodes", "node"),
    ConsoleKind("skus", api.GPUSKU, "cost", "SKU", ("sku",), from_events=False),
    ConsoleKind(
        "usage", api.USAGE_RECORD, "cost", "usage record", ("usagerecord", "usagerecords"), False
    ),
    # The rows below are in the order of the registry views (`keytables.REGISTRY_VIEWS`).
    ConsoleKind("tenants", api.TENANT, "tenants", "tenant", ("tenant",)),
    ConsoleKind("quotas", api.QUOTA, "tenants", "quota", ("quota",)),
    ConsoleKind("budgets", api.BUDGET, "budgets", "budget", ("budget",)),
    ConsoleKind("pods", api.POD, "pods", "pod"),
    ConsoleKind(
        "reservations", api.RESERVATION, "reservations", "reservation", ("reservation", "rsv")
    ),
    ConsoleKind("jobhooks", api.JOBHOOK, "hooks", "hook", ("hook", "hooks", "jobhook")),
    ConsoleKind("priorities", api.PRIORITY, "priorities", "priority", ("priority",)),
    ConsoleKind(
        "checkpointguards",
        api.CHECKPOINT_GUARD,
        "checkpoints",
        "checkpoint guard",
        ("checkpoint", "checkpoints", "checkpointguard"),
    ),
    ConsoleKind(
        "gpusharingpolicies",
        api.GPU_SHARING_POLICY,
        "gpusharing",
        "GPU sharing policy",
        ("gpusharing", "gpusharingpolicy"),
    ),
    ConsoleKind("workflows", api.WORKFLOW, "workflows", "workflow", ("workflow", "wf")),
    ConsoleKind("autotuners", api.AUTOTUNER, "tuners", "tuner", ("tuner", "tuners", "autotuner")),
    ConsoleKind("workspaces", api.WORKSPACE, "workspaces", "workspace", ("workspace",)),
    ConsoleKind(
        "inferenceservices",
        api.INFERENCE_SERVICE,
        "inference",
        "inference service",
        ("inferenceservice",),
    ),
    ConsoleKind(
        "modelregistries",
        api.MODEL_REGISTRY,
        "models",
        "model registry",
        ("model", "models", "modelregistry"),
    ),
    ConsoleKind("idlepolicies", api.IDLE_POLICY, "idle", "idle policy", ("idle", "idlepolicy")),
    ConsoleKind("storages", api.STORAGE, "storage", "storage backend", ("storage",)),
    ConsoleKind("datasets", api.DATASET, "datasets", "dataset", ("dataset",)),
)
"""Every kind the console shows, one row each."""

NOT_SHOWN: Mapping[str, str] = {
    "GryviaLedgerEntry": "billing records, read with `gryvia ledger`; the cost view shows "
    "spending from usage records",
    "GryviaInvoice": "billing documents, read with `gryvia invoice`; the cost view shows "
    "spending from usage records",
    "GryviaChargeback": "monthly cost-center reports, read with `gryvia chargeback show`; the "
    "cost view shows spending from usage records",
    "GryviaJobRecord": "finished-job history, read with `gryvia sacct`; the jobs view shows "
    "the jobs that still exist",
}
"""Gryvia kinds the console has no view of, by kind name, and why."""

CONSOLE_KIND: Mapping[ObjectKind, ConsoleKind] = {row.name: row for row in CONSOLE_KINDS}
"""The rows by the console's name for the kind."""


def resource_of(kind: ObjectKind) -> Resource:
    """The API resource of a console kind (its REST paths and scope)."""
    return CONSOLE_KIND[kind].resource


def kind_words(row: ConsoleKind) -> tuple[str, ...]:
    """Every word that names `row`'s kind: its name, the resource's plural, singular and
    short names, and the console's own words."""
    res = row.resource
    return (row.name, res.plural, res.singular, *res.short_names, *row.words)


NAMESPACED: frozenset[ObjectKind] = frozenset(
    row.name for row in CONSOLE_KINDS if row.resource.namespaced
)
"""The kinds whose objects live in a namespace (the others are cluster-scoped)."""
