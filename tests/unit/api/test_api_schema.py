"""The pydantic JSON Schema -> structural OpenAPI converter, and CEL message building."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from gryvia_operator.api.base import FreeForm, GryviaModel, Int32
from gryvia_operator.api.crd.fielddocs import DocumentedSchema
from gryvia_operator.api.crd.schema import SchemaConversionError, to_structural
from gryvia_operator.api.crd.structural import structural_errors
from gryvia_operator.api.quantity import Quantity


class Inner(GryviaModel):
    """Inner docs."""

    size: Int32
    """How big."""


class Outer(GryviaModel):
    """Outer docs."""

    inner: Inner | None = None
    """Field docs win."""
    items: list[Inner] | None = None
    amount: Quantity | None = None
    loose: FreeForm | None = None
    labels: dict[str, str] | None = None
    ratio: float = Field(default=0.5, gt=0, lt=1)
    mode: str = "fast"
    tags: list[str] = Field(default_factory=list)
    marker: Any = Field(default=None, json_schema_extra={"type": "string"})


def _convert(model: type[BaseModel]) -> dict[str, Any]:
    return to_structural(model.model_json_schema(by_alias=True, schema_generator=DocumentedSchema))


def _walk(node: Any) -> list[dict[str, Any]]:
    out = []
    if isinstance(node, dict):
        out.append(node)
        for value in node.values():
            out.extend(_walk(value))
    elif isinstance(node, list):
        for value in node:
            out.extend(_walk(value))
    return out


def test_refs_are_inlined_and_titles_dropped() -> None:
    schema = _convert(Outer)
    nodes = _walk(schema)
    assert not any("$ref" in n or "$defs" in n or "title" in n for n in nodes)
    inner = schema["properties"]["inner"]
    assert inner["type"] == "object"
    assert inner["description"] == "Field docs win."
    assert inner["properties"]["size"] == {
        "type": "integer",
        "format": "int32",
        "description": "How big.",
    }
    assert inner["required"] == ["size"]
    assert schema["properties"]["items"]["items"]["description"] == "Inner docs."


def test_nullable_unions_become_plain_optional_fields() -> None:
    schema = _convert(Outer)
    nodes = _walk(schema)
    assert not any(n.get("type") == "null" or "nullable" in n for n in nodes)
    assert not any("default" in n and n["default"] is None for n in nodes)
    assert schema["properties"]["labels"] == {
        "type": "object",
        "additionalProperties": {"type": "string"},
    }


def test_int_or_string_and_free_form() -> None:
    props = _convert(Outer)["properties"]
    amount = props["amount"]
    assert amount["x-kubernetes-int-or-string"] is True
    assert "type" not in amount
    assert amount["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert props["loose"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def test_defaults_and_bounds() -> None:
    props = _convert(Outer)["properties"]
    assert props["ratio"] == {
        "type": "number",
        "default": 0.5,
        "minimum": 0,
        "exclusiveMinimum": True,
        "maximum": 1,
        "exclusiveMaximum": True,
    }
    assert props["mode"]["default"] == "fast"
    assert "default" not in props["tags"], "object and list defaults are dropped"


def test_output_is_structural() -> None:
    schema = _convert(Outer)
    assert structural_errors(schema) == []


def test_cel_rules_of_model_and_field_are_both_kept() -> None:
    class Child(GryviaModel):
        model_config = ConfigDict(json_schema_extra={"x-kubernetes-validations": [{"rule": "a"}]})
        x: int = 0

    class Parent(GryviaModel):
        child: Child | None = None
        child2: Child = Field(
            default_factory=Child,
            json_schema_extra={"x-kubernetes-validations": [{"rule": "b"}]},
        )

    props = _convert(Parent)["properties"]
    assert props["child"]["x-kubernetes-validations"] == [{"rule": "a"}]
    assert props["child2"]["x-kubernetes-validations"] == [{"rule": "a"}, {"rule": "b"}]


def test_recursive_models_are_refused() -> None:
    class Node(BaseModel):
        children: list[Node] = []

    with pytest.raises(SchemaConversionError, match="recursive"):
        _convert(Node)


def test_real_unions_are_refused() -> None:
    class Either(BaseModel):
        value: int | list[int]

    with pytest.raises(SchemaConversionError, match="union"):
        _convert(Either)


def test_const_becomes_enum() -> None:
    schema = to_structural(
        {"type": "object", "properties": {"k": {"const": "X", "type": "string"}}}
    )
    assert schema["properties"]["k"] == {"type": "string", "enum": ["X"]}


def test_schema_extra_works_inside_optional() -> None:
    class M(GryviaModel):
        n: Int32 | None = None
        s: list[int] | None = Field(default=None)
        t: Any = None

    schema = M.model_json_schema()
    assert schema["properties"]["n"]["anyOf"][0]["format"] == "int32"


class _Base(GryviaModel):
    gpus: Int32 = 1
    """GPUs per worker."""
    image: str = ""
    """The base's words."""


class _Child(_Base):
    image: str = ""
    """The child's words."""
    tier: str = Field(default="", description="Field(description) wins.")
    """Not this."""


def test_attribute_docstrings_become_descriptions_only_in_the_crd_generator() -> None:
    documented = _convert(_Child)["properties"]
    assert documented["gpus"]["description"] == "GPUs per worker."  # inherited
    assert documented["image"]["description"] == "The child's words."  # the nearest class
    assert documented["tier"]["description"] == "Field(description) wins."
    plain = _Child.model_json_schema(by_alias=True)["properties"]
    assert "description" not in plain["gpus"]  # pydantic itself never reads the source
