"""`:describe KIND NAME` on the console's `:` line: which object the words name.

KIND is any word kubectl or gryvia uses for the kind: plural, singular, the CLI noun or the
short name (`gaj`, `po`, `gtn`, ...); NAME is `name` or `namespace/name`. Without a namespace
a namespaced kind is looked up in the console's namespace (`default` when it shows all).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import get_args

from gryvia_cli.tui.registry import ObjectRef
from gryvia_cli.tui.source import ObjectKind

_WORDS: Mapping[ObjectKind, tuple[str, ...]] = {
    "jobs": ("job", "gryviaaijob", "gryviaaijobs", "gaj", "aijob", "aijobs"),
    "gpunodes": ("gpunode", "gryviagpunode", "gryviagpunodes", "ggn"),
    "nodes": ("node", "no"),
    "pods": ("pod", "po"),
    "skus": ("sku", "gryviagpusku", "gryviagpuskus", "gsku"),
    "tenants": ("tenant", "gryviatenant", "gryviatenants", "gtn"),
    "quotas": ("quota", "gryviaquota", "gryviaquotas", "gqt"),
    "usage": ("usagerecord", "usagerecords", "gryviausagerecord", "gryviausagerecords", "gur"),
    "budgets": ("budget", "gryviabudget", "gryviabudgets", "gbud"),
    "reservations": ("reservation", "gryviareservation", "gryviareservations", "grsv", "rsv"),
    "jobhooks": ("hook", "hooks", "jobhook", "gryviajobhook", "gryviajobhooks", "gjh"),
    "priorities": ("priority", "gryviapriority", "gryviapriorities", "gprio"),
    "checkpointguards": (
        "checkpoint",
        "checkpoints",
        "checkpointguard",
        "gryviacheckpointguard",
        "gryviacheckpointguards",
        "gckg",
    ),
    "gpusharingpolicies": (
        "gpusharing",
        "gpusharingpolicy",
        "gryviagpusharingpolicy",
        "gryviagpusharingpolicies",
        "ggsp",
    ),
    "workflows": ("workflow", "gryviaworkflow", "gryviaworkflows", "gwf", "wf"),
    "autotuners": ("tuner", "tuners", "autotuner", "gryviaautotuner", "gryviaautotuners", "gat"),
    "workspaces": ("workspace", "gryviaworkspace", "gryviaworkspaces", "gws"),
    "inferenceservices": (
        "inferenceservice",
        "gryviainferenceservice",
        "gryviainferenceservices",
        "gisvc",
    ),
    "modelregistries": (
        "model",
        "models",
        "modelregistry",
        "gryviamodelregistry",
        "gryviamodelregistries",
        "gmr",
    ),
}
KIND_OF_WORD: Mapping[str, ObjectKind] = {
    word: kind for kind in get_args(ObjectKind) for word in (kind, *_WORDS.get(kind, ()))
}
"""Every word `:describe` takes for a kind, to that kind."""

NAMESPACED: frozenset[ObjectKind] = frozenset(
    {
        "jobs",
        "pods",
        "usage",
        "jobhooks",
        "checkpointguards",
        "workflows",
        "autotuners",
        "workspaces",
        "inferenceservices",
        "modelregistries",
    }
)
"""The kinds whose objects live in a namespace (the others are cluster-scoped)."""

USAGE = "describe KIND NAME (or KIND NAMESPACE/NAME), e.g. describe pod tenant-nlp/llama-ddp-0"


def describe_ref(argument: str, namespace: str | None) -> ObjectRef | str:
    """The object `:describe` + `argument` names, or why it names none (a message for the user).

    `namespace`: the console's namespace (None when it shows all namespaces).
    """
    words = argument.split()
    if len(words) != 2:
        return f"write {USAGE}"
    kind = KIND_OF_WORD.get(words[0].lower())
    if kind is None:
        return f"“{words[0]}” is no kind the console describes; write {USAGE}"
    where, _, name = words[1].rpartition("/")
    if not name:
        return f"write {USAGE}"
    if kind not in NAMESPACED:
        if where:
            return f"{kind} are cluster-scoped: write describe {words[0]} {name}"
        return ObjectRef(kind, None, name)
    return ObjectRef(kind, where or namespace or "default", name)
