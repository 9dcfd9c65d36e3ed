"""The names webhook (`webhook.names`): kinds whose children set a name limit are refused on
CREATE with the same text `gryvia validate` gives."""

from __future__ import annotations

from typing import Any

from gryvia_operator.api.validation import validate_object
from gryvia_operator.webhook.names import admit_name, review_name


def _workflow(name: str, step: str = "train") -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaWorkflow",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"steps": [{"name": step, "template": {"image": "busybox", "gpus": 0}}]},
    }


def test_a_workflow_name_too_long_for_its_step_jobs_is_refused_as_validate_says() -> None:
    obj = _workflow("w" * 50)
    verdict = admit_name({"operation": "CREATE", "object": obj})
    assert not verdict.allowed
    (problem,) = [e.message for e in validate_object(obj).errors if e.field == "metadata.name"]
    assert verdict.message == f"invalid GryviaWorkflow: {problem}"
    assert "shorten the name" in verdict.message


def test_names_that_fit_other_kinds_and_updates_are_allowed() -> None:
    assert admit_name({"operation": "CREATE", "object": _workflow("short")}).allowed
    assert admit_name({"operation": "UPDATE", "object": _workflow("w" * 50)}).allowed
    quota = {"kind": "GryviaQuota", "metadata": {"name": "q" * 200}}
    assert admit_name({"operation": "CREATE", "object": quota}).allowed
    assert admit_name({"operation": "CREATE", "object": None}).allowed


def test_the_review_answers_with_the_request_uid_and_a_403() -> None:
    workspace = {"kind": "GryviaWorkspace", "metadata": {"name": "w" * 62}, "spec": {}}
    review = {"request": {"uid": "u1", "operation": "CREATE", "object": workspace}}
    answer = review_name(review)["response"]
    assert answer["uid"] == "u1"
    assert answer["allowed"] is False
    assert answer["status"]["code"] == 403
    assert "allows at most 61" in answer["status"]["message"]
