"""`:describe KIND NAME`: the words for each kind, namespaces, and what a half command says."""

from __future__ import annotations

from gryvia_cli.kube import resources as r
from gryvia_cli.tui.describeref import KIND_OF_WORD, NAMESPACED, describe_ref
from gryvia_cli.tui.registry import ObjectRef

KINDS = {
    "jobs": r.AIJOB,
    "gpunodes": r.GPUNODE,
    "nodes": r.NODE,
    "pods": r.POD,
    "skus": r.GPUSKU,
    "tenants": r.TENANT,
    "quotas": r.QUOTA,
    "usage": r.USAGE_RECORD,
    "budgets": r.BUDGET,
    "reservations": r.RESERVATION,
    "jobhooks": r.JOBHOOK,
    "priorities": r.PRIORITY,
    "checkpointguards": r.CHECKPOINT_GUARD,
    "gpusharingpolicies": r.GPU_SHARING_POLICY,
    "workflows": r.WORKFLOW,
    "autotuners": r.AUTOTUNER,
    "workspaces": r.WORKSPACE,
    "inferenceservices": r.INFERENCE_SERVICE,
    "modelregistries": r.MODEL_REGISTRY,
    "idlepolicies": r.IDLE_POLICY,
    "storages": r.STORAGE,
    "datasets": r.DATASET,
}


def test_every_kind_of_the_console_has_its_words() -> None:
    from typing import get_args

    from gryvia_cli.tui.source import ObjectKind

    assert set(KINDS) == set(get_args(ObjectKind))


def test_the_words_and_scopes_agree_with_the_resource_table() -> None:
    for kind, res in KINDS.items():
        assert (kind in NAMESPACED) == res.namespaced, kind
        for word in (res.plural, res.singular, *res.short_names):
            assert KIND_OF_WORD.get(word) == kind, word


def test_names_namespaces_and_problems() -> None:
    assert describe_ref("po tenant-a/x-0", None) == ObjectRef("pods", "tenant-a", "x-0")
    assert describe_ref("job train", "ml") == ObjectRef("jobs", "ml", "train")
    assert describe_ref("gaj train", None) == ObjectRef("jobs", "default", "train")
    assert describe_ref("tenant acme", "ml") == ObjectRef("tenants", None, "acme")
    assert describe_ref("GTN acme", None) == ObjectRef("tenants", None, "acme")
    assert describe_ref("storage fast-nfs", "ml") == ObjectRef("storages", None, "fast-nfs")
    assert "cluster-scoped" in str(describe_ref("tenant ml/acme", None))
    assert "describe KIND NAME" in str(describe_ref("pod", None))
    assert "no kind the console describes" in str(describe_ref("gizmo a", None))
    assert "describe KIND NAME" in str(describe_ref("pod ns/", None))
