"""Static admission rules: one test per rule, message for message, plus context warnings."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.validation import FieldError, ValidationResult, validate_job
from tests.unit.api.manifests import job

VALID_TYPES = "training, inference, fine-tuning, evaluation"


def errors(obj: Any) -> list[tuple[str, str]]:
    return [(e.field, e.message) for e in validate_job(obj).errors]


def test_valid_job_has_no_findings() -> None:
    result = validate_job(job())
    assert result == ValidationResult()
    assert result.ok


def test_model_input_is_accepted() -> None:
    assert validate_job(GryviaAIJob.model_validate(job(gpus=4))).ok


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("Demo", "lowercase RFC 1123 subdomain"),
        ("-demo", "lowercase RFC 1123 subdomain"),
        ("demo_job", "lowercase RFC 1123 subdomain"),
        ("a" * 254, "must be no more than 253 characters"),
    ],
)
def test_name_must_be_a_dns_subdomain(name: str, problem: str) -> None:
    obj = job()
    obj["metadata"]["name"] = name
    ((field, message),) = errors(obj)
    assert field == "metadata.name"
    assert message.startswith(f'metadata.name "{name}" is invalid: ')
    assert problem in message


@pytest.mark.parametrize(("job_type", "limit"), [("training", 54), ("inference", 43)])
def test_a_name_too_long_for_the_jobs_children_is_refused(job_type: str, limit: int) -> None:
    obj = job(type=job_type)
    obj["metadata"]["name"] = "a" * limit
    assert errors(obj) == []
    obj["metadata"]["name"] = "a" * (limit + 1)
    ((field, message),) = errors(obj)
    assert field == "metadata.name" and f"over the {limit} a job run as a" in message
    assert message.endswith("must fit in 63 characters): shorten the name")


def test_name_is_required_unless_generated() -> None:
    obj = job()
    del obj["metadata"]["name"]
    assert errors(obj) == [("metadata.name", "metadata.name is required")]
    obj["metadata"]["generateName"] = "demo-"
    assert errors(obj) == []


def test_envelope() -> None:
    obj = job()
    obj["apiVersion"] = "gryvia.io/v1"
    obj["kind"] = "FabricAIJob"
    assert errors(obj) == [
        ("apiVersion", 'apiVersion must be gryvia.io/v1alpha1, got "gryvia.io/v1"'),
        ("kind", 'kind must be GryviaAIJob, got "FabricAIJob"'),
    ]
    assert errors({**job(), "spec": None}) == [("spec", "spec is required")]
    assert validate_job([1, 2]).errors == [FieldError("", "a GryviaAIJob must be a mapping")]  # type: ignore[arg-type]


def test_type_required() -> None:
    expected = [("spec.type", f"spec.type is required; valid values: {VALID_TYPES}")]
    assert errors(job(type=...)) == expected
    assert errors(job(type="")) == expected


def test_type_unsupported() -> None:
    assert errors(job(type="serving")) == [
        ("spec.type", f'spec.type "serving" is not supported; valid values: {VALID_TYPES}')
    ]


def test_gpus_required_and_not_negative() -> None:
    assert errors(job(gpus=...)) == [("spec.gpus", "spec.gpus is required")]
    assert errors(job(gpus=-1)) == [("spec.gpus", "spec.gpus must not be negative, got -1")]
    assert errors(job(gpus=0)) == []


def test_gpus_of_the_wrong_type_is_a_schema_error() -> None:
    assert errors(job(gpus="8")) == [("spec.gpus", "spec.gpus: Input should be a valid integer")]


def test_image_required() -> None:
    for image in (..., "", "  "):
        assert errors(job(image=image)) == [("spec.image", "spec.image is required")]


def test_network() -> None:
    assert errors(job(network="infiniband")) == [
        (
            "spec.network",
            'spec.network "infiniband" is not supported; valid values: standard, rdma, sriov',
        )
    ]
    for network in ("", "standard", "rdma", "sriov"):
        assert errors(job(network=network)) == []


def test_workload_kind() -> None:
    assert errors(job(workloadKind="deployment")) == [
        (
            "spec.workloadKind",
            'spec.workloadKind "deployment" is not supported; valid values: job, statefulset',
        )
    ]


@pytest.mark.parametrize(
    ("timeout", "message"),
    [
        ("ten minutes", 'spec.timeout: invalid duration "ten minutes"'),
        ("0s", 'spec.timeout: duration must be positive, got "0s"'),
        ("5", 'spec.timeout: invalid duration "5"'),
    ],
)
def test_timeout(timeout: str, message: str) -> None:
    ((field, text),) = errors(job(timeout=timeout))
    assert field == "spec.timeout"
    assert text.startswith(message)


def test_good_timeouts() -> None:
    for timeout in ("90m", "24h", "7d", "1d12h", ""):
        assert errors(job(timeout=timeout)) == []


def test_retry_limit() -> None:
    assert errors(job(retryLimit=-1)) == [
        ("spec.retryLimit", "spec.retryLimit must not be negative, got -1")
    ]


@pytest.mark.parametrize("priority", [-1, 101, 1000])
def test_priority(priority: int) -> None:
    assert errors(job(priority=priority)) == [
        ("spec.priority", f"spec.priority must be between 0 and 100, got {priority}")
    ]


def test_priority_bounds_are_inclusive() -> None:
    assert errors(job(priority=0)) == errors(job(priority=100)) == []


@pytest.mark.parametrize("nodes", [0, -2, ...])
def test_distributed_nodes(nodes: Any) -> None:
    dist = {"enabled": True, "nodes": nodes} if nodes is not ... else {"enabled": True}
    shown = 0 if nodes is ... else nodes
    assert errors(job(distributed=dist)) == [
        (
            "spec.distributed.nodes",
            "distributed.nodes must be greater than 0 when distributed training is enabled, "
            f"got {shown}",
        )
    ]


def test_distributed_rules_wait_for_enabled() -> None:
    assert errors(job(distributed={"enabled": False, "nodes": 0})) == []


def test_distributed_gpus_per_node() -> None:
    assert errors(job(distributed={"enabled": True, "nodes": 2, "gpusPerNode": -1})) == [
        ("spec.distributed.gpusPerNode", "distributed.gpusPerNode must be non-negative, got -1")
    ]


def test_distributed_framework_and_backend() -> None:
    dist = {"enabled": True, "nodes": 2, "framework": "jax", "backend": "ucx"}
    assert errors(job(distributed=dist)) == [
        (
            "spec.distributed.framework",
            'distributed.framework "jax" is not supported; valid values: pytorch, tensorflow, '
            "horovod, deepspeed, megatron",
        ),
        (
            "spec.distributed.backend",
            'distributed.backend "ucx" is not supported; valid values: nccl, gloo, mpi',
        ),
    ]


@pytest.mark.parametrize("min_nodes", [0, 5])
def test_elastic_min_nodes(min_nodes: int) -> None:
    dist = {"enabled": True, "nodes": 4, "elastic": {"minNodes": min_nodes}}
    assert errors(job(distributed=dist)) == [
        (
            "spec.distributed.elastic.minNodes",
            "distributed.elastic.minNodes must be between 1 and distributed.nodes (4), "
            f"got {min_nodes}",
        )
    ]


def test_elastic_needs_pytorch_and_a_batch_job() -> None:
    dist = {"enabled": True, "nodes": 4, "framework": "deepspeed", "elastic": {"minNodes": 2}}
    assert errors(job(distributed=dist)) == [
        (
            "spec.distributed.elastic",
            'distributed.elastic requires framework pytorch, got "deepspeed"',
        )
    ]
    dist = {"enabled": True, "nodes": 4, "elastic": {"minNodes": 2}}
    assert errors(job(type="inference", distributed=dist)) == [
        (
            "spec.distributed.elastic",
            "distributed.elastic requires workloadKind job, got statefulset",
        )
    ]
    assert errors(job(type="inference", workloadKind="job", distributed=dist)) == []


@pytest.mark.parametrize(
    ("spec", "field", "shape"),
    [
        (
            {"gpus": 8, "distributed": {"enabled": True, "nodes": 200, "gpusPerNode": 8}},
            "spec.distributed",
            "200 nodes x 8 GPUs/node = 1600",
        ),
        (
            {"gpus": 16, "distributed": {"enabled": True, "nodes": 65}},
            "spec.distributed",
            "65 nodes x 16 GPUs/node = 1040",
        ),
        ({"gpus": 2000}, "spec.gpus", "1 nodes x 2000 GPUs/node = 2000"),
    ],
)
def test_total_gpus(spec: dict[str, Any], field: str, shape: str) -> None:
    assert errors(job(**spec)) == [
        (
            field,
            f"total GPU count ({shape}) seems unreasonably large; maximum supported is 1024",
        )
    ]


def test_total_gpus_at_the_limit_is_fine() -> None:
    assert errors(job(gpus=8, distributed={"enabled": True, "nodes": 128})) == []


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        (
            {"requests": {"cpu": "0"}},
            [("spec.resources.requests.cpu", "CPU request must be positive, got 0")],
        ),
        (
            {"requests": {"memory": "-1Gi"}},
            [("spec.resources.requests.memory", "memory request must be positive, got -1Gi")],
        ),
        (
            {"requests": {"cpu": "4"}, "limits": {"cpu": "2"}},
            [("spec.resources.limits.cpu", "CPU limit (2) must be >= CPU request (4)")],
        ),
        (
            {"requests": {"memory": "2Gi"}, "limits": {"memory": "1000Mi"}},
            [
                (
                    "spec.resources.limits.memory",
                    "memory limit (1000Mi) must be >= memory request (2Gi)",
                )
            ],
        ),
        (
            {"requests": {"memory": "lots"}},
            [
                (
                    "spec.resources.requests.memory",
                    'spec.resources.requests.memory: invalid quantity "lots"',
                )
            ],
        ),
        ({"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": 1, "memory": "1Gi"}}, []),
    ],
)
def test_resources(resources: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert errors(job(resources=resources)) == expected


def test_all_violations_are_collected_and_joined() -> None:
    result = validate_job(job(type=..., gpus=-2, image="", priority=300))
    assert [e.field for e in result.errors] == [
        "spec.type",
        "spec.gpus",
        "spec.image",
        "spec.priority",
    ]
    assert result.denial() == (
        f"invalid GryviaAIJob: spec.type is required; valid values: {VALID_TYPES}; "
        "spec.gpus must not be negative, got -2; spec.image is required; "
        "spec.priority must be between 0 and 100, got 300"
    )
    assert not result.ok


def test_schema_errors_for_uncovered_fields_follow_the_rules() -> None:
    obj = job(suspend="yes", env=[{"value": "x"}], distributed={"enabled": True, "nodes": "4"})
    assert errors(obj) == [
        ("spec.env[0].name", "spec.env[0].name is required"),
        ("spec.distributed.nodes", "spec.distributed.nodes: Input should be a valid integer"),
        ("spec.suspend", "spec.suspend: Input should be a valid boolean"),
    ]


def test_validation_does_not_mutate_its_input() -> None:
    obj = job(gpus=-1, timeout="0s", resources={"requests": {"cpu": "0"}})
    before = copy.deepcopy(obj)
    validate_job(obj, inventory=[("T4", 1)])
    assert obj == before
