"""Round trips of the example manifests through the models, aliases and the kind registry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gryvia_operator.api import (
    AIJOB_KIND,
    ALL_KINDS,
    GryviaAIJob,
    GryviaGpuNode,
    GryviaQuota,
    GryviaTenant,
    JobPhase,
    kind_info,
    parse_object,
)
from gryvia_operator.api.aijob import GryviaAIJobSpec

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.yaml"))


def _documents() -> list[tuple[str, dict[str, Any]]]:
    docs = []
    for path in EXAMPLES:
        for i, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            docs.append((f"{path.name}#{i}", doc))
    return docs


DOCUMENTS = _documents()


def _is_subset(small: Any, big: Any) -> bool:
    if isinstance(small, dict):
        return isinstance(big, dict) and all(
            k in big and _is_subset(v, big[k]) for k, v in small.items()
        )
    if isinstance(small, list):
        return (
            isinstance(big, list)
            and len(small) == len(big)
            and all(_is_subset(a, b) for a, b in zip(small, big, strict=True))
        )
    return bool(small == big)


def test_examples_exist_for_every_kind_and_job_type() -> None:
    kinds = {doc["kind"] for _, doc in DOCUMENTS}
    assert kinds == {info.kind for info in ALL_KINDS}
    job_types = {doc["spec"]["type"] for _, doc in DOCUMENTS if doc["kind"] == "GryviaAIJob"}
    assert job_types == {"training", "inference", "fine-tuning", "evaluation"}


@pytest.mark.parametrize(("name", "doc"), DOCUMENTS, ids=[n for n, _ in DOCUMENTS])
def test_example_round_trips(name: str, doc: dict[str, Any]) -> None:
    obj = parse_object(doc)
    assert obj.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True) == doc
    full = obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert _is_subset(doc, full), "a field changed value on the way through the model"
    assert type(obj).model_validate(full) == obj, "the dump with defaults must parse to the same"


def test_defaults_are_filled_in() -> None:
    job = GryviaAIJob.model_validate(
        {"metadata": {"name": "a"}, "spec": {"type": "training", "gpus": 1, "image": "i"}}
    )
    dumped = job.model_dump(by_alias=True, exclude_none=True)
    assert dumped["apiVersion"] == "gryvia.io/v1alpha1"
    assert dumped["kind"] == "GryviaAIJob"
    assert dumped["spec"] == {
        "type": "training",
        "gpus": 1,
        "image": "i",
        "storageRequest": "100Gi",
        "priority": 0,
        "retryLimit": 0,
        "suspend": False,
    }


def test_snake_case_in_python_camel_case_on_the_wire() -> None:
    spec = GryviaAIJobSpec(type="training", gpus=8, image="i", gpu_type="H100", retry_limit=2)
    wire = spec.model_dump(exclude_none=True)
    assert wire["gpuType"] == "H100"
    assert wire["retryLimit"] == 2
    assert GryviaAIJobSpec.model_validate(wire).gpu_type == "H100"


@pytest.mark.parametrize(
    ("model", "spec", "python_name", "wire_name"),
    [
        (
            GryviaGpuNode,
            {"nodeName": "n", "gpuType": "T4", "gpuCount": 1, "memoryGB": 16},
            "memory_gb",
            "memoryGB",
        ),
        (
            GryviaTenant,
            {"quotas": {"costUSD": {"monthly": 5}, "concurrentGPUs": 4}},
            "quotas",
            "quotas",
        ),
        (
            GryviaQuota,
            {
                "team": "t",
                "namespaces": ["a"],
                "gpuQuota": {"maxGPUs": 8, "maxGPUsPerJob": 4, "allowedGPUTypes": ["T4"]},
            },
            "gpu_quota",
            "gpuQuota",
        ),
    ],
)
def test_upper_case_acronyms_keep_their_wire_names(
    model: Any, spec: dict[str, Any], python_name: str, wire_name: str
) -> None:
    obj = model.model_validate({"metadata": {"name": "x"}, "spec": spec})
    assert getattr(obj.spec, python_name) is not None
    assert obj.model_dump(by_alias=True, exclude_none=True, exclude_unset=True)["spec"] == spec


def test_metadata_keeps_unknown_keys() -> None:
    meta = {"name": "a", "managedFields": [{"manager": "kubectl"}], "uid": "u-1"}
    job = GryviaAIJob.model_validate(
        {"metadata": meta, "spec": {"type": "training", "gpus": 0, "image": "i"}}
    )
    assert job.metadata.uid == "u-1"
    assert job.model_dump(by_alias=True, exclude_none=True)["metadata"] == meta


def test_integer_fields_are_strict_like_the_api_server() -> None:
    with pytest.raises(ValueError, match="gpus"):
        GryviaAIJob.model_validate(
            {"metadata": {"name": "a"}, "spec": {"type": "training", "gpus": "8", "image": "i"}}
        )


def test_job_phase_defaults_to_pending() -> None:
    job = GryviaAIJob.model_validate(
        {"metadata": {"name": "a"}, "spec": {"type": "inference", "gpus": 1, "image": "i"}}
    )
    assert job.phase is JobPhase.PENDING
    job = GryviaAIJob.model_validate({**job.model_dump(), "status": {"phase": "Running"}})
    assert job.phase is JobPhase.RUNNING


def test_registry_names_are_unique_and_complete() -> None:
    from gryvia_operator.api.resources import GRYVIA

    assert [info.resource for info in ALL_KINDS] == list(GRYVIA)  # one kind per table row
    names = [n for info in ALL_KINDS for n in (info.kind, info.plural, *info.short_names)]
    assert len(names) == len(set(names))
    for info in ALL_KINDS:
        plural = info.kind.lower() + "s"
        assert info.plural == (
            plural.replace("entrys", "entries")
            .replace("tys", "ties")
            .replace("policys", "policies")
            .replace("registrys", "registries")
        )
        assert info.categories == ("gryvia",)
        assert info.crd_name == f"{info.plural}.gryvia.io"
        assert info.model.kind_info is info
        shown = [c for c in info.printer_columns if not c.priority]  # -o wide adds the rest
        assert shown[-1].name == "Age"
    assert AIJOB_KIND.short_names == ("gaj",)
    assert kind_info("gjh").kind == "GryviaJobHook"
    assert kind_info("GryviaAIJob") is AIJOB_KIND
    with pytest.raises(KeyError, match="known kinds"):
        kind_info("FabricAIJob")


def test_scopes_follow_the_reference() -> None:
    namespaced = {info.kind for info in ALL_KINDS if info.namespaced}
    assert namespaced == {
        "GryviaAIJob",
        "GryviaUsageRecord",
        "GryviaJobHook",
        "GryviaCheckpointGuard",
        "GryviaWorkflow",
        "GryviaAutoTuner",
        "GryviaWorkspace",
        "GryviaInferenceService",
        "GryviaModelRegistry",
        "GryviaIdlePolicy",
        "GryviaJobRecord",
    }


def test_api_package_imports_no_kubernetes_kopf_typer_or_textual() -> None:
    code = (
        "import sys, gryvia_operator.api, gryvia_operator.api.validation, "
        "gryvia_operator.api.crd.generate, gryvia_operator.api.crd.docs\n"
        "bad = [m for m in ('kubernetes', 'kopf', 'typer', 'textual') if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == ""
