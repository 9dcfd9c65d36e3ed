"""The owner reference and the invalid-spec status every controller writes (api.controlled)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from gryvia_operator.api.controlled import (
    MAX_MESSAGE,
    invalid_status,
    owner_reference,
    spec_problems,
)
from gryvia_operator.api.tenant import GryviaTenant
from gryvia_operator.api.workflow import GryviaWorkflow


def test_owner_reference_names_the_owner_and_controls_it() -> None:
    tenant = GryviaTenant.model_validate(
        {"metadata": {"name": "team-a", "uid": "u-1"}, "spec": {"namespaces": ["a"]}}
    )
    assert owner_reference(tenant) == {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaTenant",
        "name": "team-a",
        "uid": "u-1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert "blockOwnerDeletion" not in owner_reference(tenant, block_deletion=False)


def test_invalid_status_keeps_what_was_there_and_cuts_long_messages() -> None:
    before = {"phase": "Running", "runs": [{"run": 1}], "message": "old"}
    status = invalid_status(before, ["spec.steps: a", "spec.schedule: b"])
    assert status == {
        "phase": "Invalid",
        "runs": [{"run": 1}],
        "message": "spec.steps: a; spec.schedule: b",
    }
    assert before["phase"] == "Running"  # not changed in place
    assert invalid_status({}, [])["message"] == "invalid spec"
    assert len(invalid_status({}, ["x" * 5000])["message"]) == MAX_MESSAGE


class _Spec(BaseModel):
    size: int

    @field_validator("size")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError("spec.size must be at least 1")
        return value


def test_spec_problems_drop_pydantics_prefix() -> None:
    with pytest.raises(ValidationError) as caught:
        _Spec.model_validate({"size": 0})
    assert spec_problems(caught.value) == ["spec.size must be at least 1"]
    with pytest.raises(ValidationError) as caught:
        GryviaWorkflow.model_validate({"metadata": {"name": "w"}, "spec": {"steps": "no"}})
    assert spec_problems(caught.value)  # one message per problem
