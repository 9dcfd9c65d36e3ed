"""The operator's start-up check that the cluster's CRDs are as new as its own."""

from __future__ import annotations

import copy
from typing import Any

from gryvia_operator.api.crd.generate import build_crds
from gryvia_operator.api.registry import kind_info
from gryvia_operator.controller.crdcheck import describe, schema_gaps


def _crd(kind: str) -> dict[str, Any]:
    (crd,) = build_crds([kind_info(kind)])
    return crd


def test_the_generated_crd_has_no_gaps_against_itself() -> None:
    for crd in build_crds():
        assert schema_gaps(crd, crd) == [], crd["metadata"]["name"]


def test_an_older_crd_lacking_a_field_is_named_by_its_path() -> None:
    wanted = _crd("GryviaAIJob")
    served = copy.deepcopy(wanted)
    spec = served["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    field = sorted(spec["properties"])[0]
    del spec["properties"][field]
    gaps = schema_gaps(served, wanted)
    assert f"spec.{field}" in gaps
    assert all(g == f"spec.{field}" or g.startswith(f"spec.{field}.") for g in gaps)
    line = describe("gryviaaijobs.gryvia.io", gaps)
    assert line.startswith("CRD gryviaaijobs.gryvia.io is older than this operator (it lacks ")
    assert line.endswith("upgrade the chart (helm upgrade) or apply charts/gryvia/templates/crds")


def test_a_newer_crd_with_extra_fields_is_fine_and_a_missing_version_is_named() -> None:
    wanted = _crd("GryviaTenant")
    served = copy.deepcopy(wanted)
    schema = served["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["addedLater"] = {"type": "string"}
    assert schema_gaps(served, wanted) == []
    served["spec"]["versions"][0]["name"] = "v1alpha0"
    assert schema_gaps(served, wanted) == [f"{wanted['spec']['versions'][0]['name']} (not served)"]


def test_many_gaps_are_summarised() -> None:
    line = describe("x.gryvia.io", [f"spec.f{i}" for i in range(8)])
    assert "spec.f0, spec.f1, spec.f2, spec.f3, spec.f4 and 3 more" in line
