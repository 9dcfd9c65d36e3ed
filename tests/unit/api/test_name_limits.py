"""Names too long for the children a kind derives are refused by validation (issue #37): trial
jobs of a GryviaAutoTuner, step jobs of a GryviaWorkflow, a GryviaWorkspace's pod, a
GryviaInferenceService's Service (`api.namelimits`)."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_operator.api.validation import validate_object


def _tuner(name: str, max_trials: int = 1000, **template: Any) -> dict[str, Any]:
    base = {"type": "training", "image": "i", "gpus": 0, "command": ["true"], **template}
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAutoTuner",
        "metadata": {"name": name},
        "spec": {
            "jobTemplate": base,
            "parameterSpace": [{"name": "x", "type": "uniform", "min": 1, "max": 2}],
            "objective": {"name": "score"},
            "maxTrials": max_trials,
        },
    }


def _workflow(name: str, *steps: tuple[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaWorkflow",
        "metadata": {"name": name},
        "spec": {
            "steps": [
                {
                    "name": step,
                    "template": {
                        "type": "training",
                        "image": "i",
                        "gpus": 0,
                        "command": ["true"],
                        "workloadKind": workload,
                    },
                }
                for step, workload in steps
            ]
        },
    }


def _simple(kind: str, name: str) -> dict[str, Any]:
    spec = {"image": "i", "port": 8000} if kind == "GryviaInferenceService" else {"image": "i"}
    return {"apiVersion": "gryvia.io/v1alpha1", "kind": kind, "metadata": {"name": name},
            "spec": spec}  # fmt: skip


def _name_errors(obj: dict[str, Any]) -> list[str]:
    return [e.message for e in validate_object(obj).errors if e.field == "metadata.name"]


@pytest.mark.parametrize(
    ("obj", "limit", "child"),
    [
        # trial jobs <tuner>-t999, each a batch Job whose Service <trial>-headless fits in 63
        (lambda n: _tuner(n), 49, "trial job <tuner>-t999 (maxTrials 1000)"),
        (lambda n: _tuner(n, max_trials=5), 51, "trial job <tuner>-t4"),
        # a StatefulSet trial: <trial>-training-<hash> label, so trials of at most 43
        (lambda n: _tuner(n, max_trials=10, workloadKind="statefulset"), 40, "revision-hash"),
        # step jobs <workflow>-9999-<step>: the tightest step (a StatefulSet) sets the limit
        (
            lambda n: _workflow(n, ("prepare", "job"), ("train", "statefulset")),
            43 - len("-9999-train"),
            "step job <workflow>-9999-train",
        ),
        (lambda n: _workflow(n, ("prepare", "job")), 54 - len("-9999-prepare"), "-headless"),
        (lambda n: _simple("GryviaWorkspace", n), 61, "pod <workspace>-0"),
        (lambda n: _simple("GryviaInferenceService", n), 63, "Service <service>"),
    ],
)
def test_names_too_long_for_the_derived_children_are_refused(
    obj: Any, limit: int, child: str
) -> None:
    assert _name_errors(obj("a" * limit)) == []
    errors = _name_errors(obj("a" * (limit + 1)))
    assert len(errors) == 1
    assert errors[0].startswith(f"metadata.name is {limit + 1} characters; this ")
    assert f"allows at most {limit} (" in errors[0] and child in errors[0]
    assert errors[0].endswith("shorten the name")
