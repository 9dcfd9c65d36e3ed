"""The structural-schema checker: it accepts every generated CRD and catches each violation."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gryvia_operator.api import ALL_KINDS
from gryvia_operator.api.crd.generate import build_crds
from gryvia_operator.api.crd.schema import openapi_schema
from gryvia_operator.api.crd.structural import structural_errors


def _root(**props: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": props},
        },
    }


OK_LEAF = {"type": "string"}


@pytest.mark.parametrize("info", ALL_KINDS, ids=[i.kind for i in ALL_KINDS])
def test_generated_schemas_are_structural(info: Any) -> None:
    assert structural_errors(openapi_schema(info)) == []


def test_good_schema_passes() -> None:
    schema = _root(
        name=OK_LEAF,
        size={
            "x-kubernetes-int-or-string": True,
            "anyOf": [{"type": "integer"}, {"type": "string"}],
        },
        free={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        tags={"type": "array", "items": OK_LEAF, "x-kubernetes-list-type": "set"},
        mode={"type": "string", "enum": ["a", "b"], "default": "a"},
        count={"type": "integer", "minimum": 0, "x-kubernetes-validations": [{"rule": "self < 5"}]},
    )
    assert structural_errors(schema) == []


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ({"description": "no type"}, "type is required"),
        ({"type": "strin"}, "unknown type"),
        ({"$ref": "#/definitions/x", "type": "string"}, "'$ref' is not allowed"),
        ({"type": "string", "title": "T", "const": "x"}, "'const' is not allowed"),
        ({"type": "integer", "anyOf": [{"type": "integer"}]}, "value validations only"),
        (
            {"type": "string", "anyOf": [{"minLength": 1, "description": "d"}]},
            "value validations only",
        ),
        ({"type": "string", "oneOf": [{"default": "x"}]}, "value validations only"),
        (
            {"type": "object", "properties": {"a": OK_LEAF}, "additionalProperties": OK_LEAF},
            "mutually exclusive",
        ),
        ({"type": "object", "additionalProperties": True}, "must be a schema"),
        ({"type": "object"}, "would prune every field"),
        ({"type": "array"}, "array without a single items schema"),
        ({"type": "string", "items": OK_LEAF}, "items on a non-array"),
        (
            {"type": "string", "x-kubernetes-int-or-string": True},
            "must not set type",
        ),
        (
            {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "number"}, {"type": "string"}]},
            "int-or-string anyOf",
        ),
        ({"type": "integer", "minimum": 0, "exclusiveMinimum": 0}, "must be a boolean"),
        ({"type": "string", "nullable": "yes"}, "nullable must be a boolean"),
        ({"type": "string", "format": "money"}, "unknown format"),
        ({"type": "integer", "enum": [1, "two"]}, "enum value 'two' is not a integer"),
        ({"type": "integer", "default": "1"}, "default '1' is not a integer"),
        ({"type": "boolean", "default": 1}, "is not a boolean"),
        ({"type": "integer", "default": True}, "is not a integer"),
        ({"type": "string", "enum": ["a"], "default": "b"}, "not in the enum"),
        ({"type": "array", "items": OK_LEAF, "uniqueItems": True}, "uniqueItems is forbidden"),
        (
            {
                "type": "array",
                "items": {"type": "object", "properties": {"a": OK_LEAF}},
                "x-kubernetes-list-type": "set",
            },
            "set needs scalar items",
        ),
        (
            {
                "type": "array",
                "items": {"type": "object", "properties": {"a": OK_LEAF}},
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["a"],
            },
            "must be required or defaulted",
        ),
        (
            {"type": "array", "items": OK_LEAF, "x-kubernetes-list-map-keys": ["a"]},
            "need x-kubernetes-list-type",
        ),
        ({"type": "string", "x-kubernetes-list-type": "set"}, "on a non-array"),
    ],
)
def test_violations_are_reported(field: dict[str, Any], expected: str) -> None:
    errors = structural_errors(_root(bad=field))
    assert any(expected in e for e in errors), errors
    assert all(e.startswith(".spec.bad") for e in errors), errors


def test_root_and_metadata_rules() -> None:
    assert "<root>: type must be object" in structural_errors({"type": "string"})
    schema = _root()
    schema["properties"]["metadata"] = {
        "type": "object",
        "properties": {"labels": {"type": "object", "additionalProperties": OK_LEAF}},
    }
    assert any("only name and generateName" in e for e in structural_errors(schema))


@pytest.mark.parametrize(
    ("rule", "node_extra", "expected"),
    [
        ({"rule": "self.nodez > 0"}, {}, "names no field (nodez)"),
        ({"rule": "self.nodes.foo > 0"}, {}, "selects into a integer"),
        ({"rule": "true", "messageExpression": "string(self.gpu)"}, {}, "names no field (gpu)"),
        ({"rule": "self.name.matches('^a')"}, {}, "string without maxLength"),
        ({"rule": "self.items.all(i, i != '')"}, {}, "iterates a list without maxItems"),
        ({"rule": "self == oldSelf"}, {}, "compares unbounded"),
        ({"rule": "true", "reason": "Because"}, {}, "unknown reason"),
        ({"rule": "true", "messageExpression": "'n=' + string(self.nodes)"}, {}, "string()"),
        ({"rule": "true", "message": "two\nlines"}, {}, "one line"),
        ({"rule": "true", "severity": "high"}, {}, "unknown key 'severity'"),
        ({"message": "no rule"}, {}, "needs a rule string"),
    ],
)
def test_cel_hygiene(rule: dict[str, Any], node_extra: dict[str, Any], expected: str) -> None:
    spec = {
        "type": "object",
        "properties": {
            "nodes": {"type": "integer"},
            "name": {"type": "string"},
            "short": {"type": "string", "maxLength": 8},
            "items": {"type": "array", "items": OK_LEAF},
        },
        "x-kubernetes-validations": [rule],
        **node_extra,
    }
    errors = structural_errors({"type": "object", "properties": {"spec": spec}})
    assert any(expected in e for e in errors), errors


def test_cel_rules_accept_bounded_inputs() -> None:
    spec = {
        "type": "object",
        "properties": {
            "short": {"type": "string", "maxLength": 8},
            "few": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 4}},
        },
        "x-kubernetes-validations": [
            {"rule": "self.short.startsWith('a') && self.few.all(f, f != '')"},
            {"rule": "self == oldSelf"},
        ],
    }
    assert structural_errors({"type": "object", "properties": {"spec": spec}}) == []


def test_cel_rules_under_unbounded_lists_are_reported() -> None:
    item = {
        "type": "object",
        "properties": {"a": OK_LEAF},
        "x-kubernetes-validations": [{"rule": "true"}],
    }
    the_list: dict[str, Any] = {"type": "array", "items": item}
    spec = {"type": "object", "properties": {"list": the_list}}
    errors = structural_errors({"type": "object", "properties": {"spec": spec}})
    assert any("under a list or map without maxItems" in e for e in errors)
    the_list["maxItems"] = 10
    assert structural_errors({"type": "object", "properties": {"spec": spec}}) == []


def test_checker_does_not_mutate_its_input() -> None:
    crd = build_crds()[0]
    before = copy.deepcopy(crd)
    structural_errors(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    assert crd == before
