"""Validation warnings: unknown fields, GPU type names, node inventory; other kinds."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.validation import (
    FieldError,
    inventory_warnings,
    validate_job,
    validate_object,
)
from tests.unit.api.manifests import job


def test_unknown_fields_are_warnings() -> None:
    obj = job(gpuCount=8, scheduling={"gang": True}, resources={"requests": {"cpu": "1"}})
    obj["spec"]["distributed"] = {"enabled": False, "replicas": 2}
    obj["spec"]["affinity"] = {"anything": {"goes": 1}}
    result = validate_job(obj)
    assert result.ok
    assert [w.field for w in result.warnings] == [
        "spec.gpuCount",
        "spec.scheduling",
        "spec.distributed.replicas",
    ]
    assert result.warnings[0].message == (
        "spec.gpuCount is not a field of GryviaAIJob; the API server rejects or drops it"
    )


def test_non_normalised_gpu_type_is_a_warning() -> None:
    result = validate_job(job(gpuType="NVIDIA-H100-80GB-HBM3"))
    assert result.ok
    assert result.warnings == [
        FieldError(
            "spec.gpuType",
            'spec.gpuType "NVIDIA-H100-80GB-HBM3" is not a normalised GPU type; nodes are '
            'labelled gryvia.io/gpu=H100, so use "H100"',
        )
    ]
    assert validate_job(job(gpuType="MI300X")).warnings == []


INVENTORY = [("H100", 8), ("H100", 8), ("L40", 4), ("T4", 1)]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"gpus": 8, "gpuType": "H100"}, []),
        ({"gpus": 4, "gpuType": "any"}, []),
        (
            {"gpus": 2, "gpuType": "A100-80G"},
            [
                (
                    "spec.gpuType",
                    'no node currently carries GPU type "A100-80G" (label gryvia.io/gpu)',
                )
            ],
        ),
        (
            {"gpus": 8, "gpuType": "L40"},
            [
                (
                    "spec.gpus",
                    "requested 8 GPUs per node exceeds the largest current node (4 GPUs); the job "
                    "stays pending until a larger node exists or you use distributed training",
                )
            ],
        ),
        (
            {"gpus": 16, "distributed": {"enabled": True, "nodes": 2, "gpusPerNode": 16}},
            [
                (
                    "spec.distributed.gpusPerNode",
                    "requested 16 GPUs per node exceeds the largest current node (8 GPUs); the job "
                    "stays pending until a larger node exists or you use distributed training",
                )
            ],
        ),
        # CPU-only jobs get no node warnings (with a gpuType, `gpus: 0` is an error since
        # issue 13: tests/unit/api/test_api_validation.py)
        ({"gpus": 0}, []),
    ],
)
def test_inventory_warnings(spec: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    result = validate_job(job(**spec), inventory=INVENTORY)
    assert result.ok
    assert [(w.field, w.message) for w in result.warnings] == expected


def test_inventory_warnings_on_an_empty_cluster() -> None:
    model = GryviaAIJob.model_validate(job(gpus=1))
    assert inventory_warnings(model, []) == [
        FieldError(
            "spec.gpus",
            # "1 GPU", not "1 GPUs" (issue 13)
            "requested 1 GPU per node exceeds the largest current node (0 GPUs); the job "
            "stays pending until a larger node exists or you use distributed training",
        )
    ]
    assert inventory_warnings(model.spec, [("T4", 1)]) == []


def test_validate_object_dispatches_by_kind() -> None:
    assert (
        validate_object(job(gpus=-1)).errors[0].message == "spec.gpus must not be negative, got -1"
    )
    tenant = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaTenant",
        "metadata": {"name": "acme"},
        "spec": {"quotas": {"concurrentGPUs": -1, "burst": 5}},
    }
    result = validate_object(tenant)
    assert [(e.field, e.message) for e in result.errors] == [
        (
            "spec.quotas.concurrentGPUs",
            "spec.quotas.concurrentGPUs: Input should be greater than or equal to 0",
        )
    ]
    assert [w.field for w in result.warnings] == ["spec.quotas.burst"]
    unknown = validate_object({"kind": "GryviaModelWatch"})
    assert unknown.errors[0].message.startswith('kind "GryviaModelWatch" is not a Gryvia kind')
    assert not validate_object("text").ok
