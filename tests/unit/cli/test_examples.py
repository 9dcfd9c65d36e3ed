"""The manifests in examples/ are valid, and each is the kind of job it says it is."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gryvia_operator.api import GryviaAIJob, validate_object

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
FILES = sorted(EXAMPLES.glob("*.yaml"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_example_is_valid(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    assert docs
    for doc in docs:
        result = validate_object(doc)
        assert result.ok, [f"{e.field}: {e.message}" for e in result.errors]
        assert not result.warnings, result.warnings
        assert doc["spec"].get("command"), "sandbox pods run their command: give one"


def _job(name: str) -> GryviaAIJob:
    return GryviaAIJob.model_validate(yaml.safe_load((EXAMPLES / name).read_text()))


def test_the_four_kinds_of_example_exist() -> None:
    single = _job("train-single-gpu.yaml").spec
    assert single.type == "training" and single.total_gpus() == 1 and single.gpu_type
    ddp = _job("train-ddp.yaml").spec
    assert ddp.distributed_enabled and ddp.pod_count() == 2 and ddp.cpu_only
    assert ddp.distributed and ddp.distributed.backend == "gloo"
    inference = _job("inference.yaml").spec
    assert inference.type == "inference" and inference.effective_workload_kind() == "statefulset"
    tune = _job("fine-tune.yaml").spec
    assert tune.type == "fine-tuning" and tune.storage and tune.storage_request
