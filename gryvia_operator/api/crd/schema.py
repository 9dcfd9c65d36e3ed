"""Conversion of pydantic JSON Schema into a structural OpenAPI v3 schema for a CRD."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gryvia_operator.api.base import KindInfo
from gryvia_operator.api.crd.fielddocs import DocumentedSchema

_DROPPED_KEYS = frozenset({"title", "$defs", "$schema", "discriminator", "examples"})
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
_MERGED_LISTS = ("x-kubernetes-validations",)
_KEY_ORDER = (
    "type",
    "format",
    "description",
    "default",
    "enum",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "x-kubernetes-int-or-string",
    "anyOf",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "x-kubernetes-validations",
)


class SchemaConversionError(ValueError):
    """The model uses a JSON Schema construct that has no structural CRD equivalent."""


def to_structural(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Convert a pydantic JSON Schema (`model_json_schema(by_alias=True)`) to structural form.

    - `$ref`/`allOf: [$ref]` are inlined from `$defs` (siblings such as a field's description
      win over the referenced model's; CEL rules of both are kept);
    - `anyOf: [X, {type: null}]` becomes X: optional fields are simply absent, never null;
    - `anyOf: [{type: integer}, {type: string}]` gets `x-kubernetes-int-or-string: true`;
    - `additionalProperties: true` on an object becomes `x-kubernetes-preserve-unknown-fields`;
    - `const` becomes a one-value `enum`, numeric `exclusiveMinimum/Maximum` become
      OpenAPI v3.0 booleans, `title` and null/object defaults are dropped, descriptions are
      folded onto one line.

    Raises SchemaConversionError for recursive models and for unions other than the above.
    """
    defs = schema.get("$defs", {})
    return _convert(schema, defs, (), "")


def _convert(
    node: Mapping[str, Any], defs: Mapping[str, Any], stack: tuple[str, ...], path: str
) -> dict[str, Any]:
    node = _inline(node, defs, stack, path)
    stack = (*stack, *node.pop("__defs__", ()))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYS:
            continue
        if key == "anyOf":
            continue  # handled by _inline; only int-or-string survives
        if key == "default":
            if value is not None and not isinstance(value, dict | list):
                out[key] = value
            continue
        if key == "const":
            out["enum"] = [value]
            continue
        if key in ("exclusiveMinimum", "exclusiveMaximum") and not isinstance(value, bool):
            bound = "minimum" if key == "exclusiveMinimum" else "maximum"
            out[bound] = value
            out[key] = True
            continue
        if key == "description":
            out[key] = " ".join(str(value).split())
            continue
        if key == "properties":
            out[key] = {
                name: _convert(sub, defs, stack, f"{path}.{name}") for name, sub in value.items()
            }
            continue
        if key == "items":
            out[key] = _convert(value, defs, stack, f"{path}[]")
            continue
        if key == "additionalProperties":
            if isinstance(value, Mapping) and value:
                out[key] = _convert(value, defs, stack, f"{path}.*")
            elif value is True or value == {}:
                out["x-kubernetes-preserve-unknown-fields"] = True
            continue  # additionalProperties: false (extra="forbid") has no CRD meaning
        out[key] = value
    if out.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [dict(b) for b in _INT_OR_STRING]
    return _ordered(out)


def _ordered(node: dict[str, Any]) -> dict[str, Any]:
    """Keys in a fixed, readable order (type first, children and CEL rules last)."""
    rank = {key: i for i, key in enumerate(_KEY_ORDER)}
    return dict(sorted(node.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def _inline(
    node: Mapping[str, Any], defs: Mapping[str, Any], stack: tuple[str, ...], path: str
) -> dict[str, Any]:
    """Resolve `$ref`, single-element `allOf` and nullable `anyOf` into one flat mapping."""
    result = dict(node)
    seen: list[str] = []
    while True:
        if "$ref" in result:
            name = str(result.pop("$ref")).rsplit("/", 1)[-1]
            if name in stack or name in seen:
                raise SchemaConversionError(f"{path or '<root>'}: recursive model {name}")
            if name not in defs:
                raise SchemaConversionError(f"{path or '<root>'}: unknown $ref {name}")
            seen.append(name)
            result = _merge(defs[name], result)
            continue
        if "allOf" in result:
            parts = result.pop("allOf")
            if len(parts) != 1:
                raise SchemaConversionError(f"{path}: allOf with {len(parts)} schemas")
            result = _merge(parts[0], result)
            continue
        if "anyOf" in result:
            branches = [b for b in result["anyOf"] if b != {"type": "null"}]
            if _is_int_or_string(branches):
                result["anyOf"] = branches
                result["x-kubernetes-int-or-string"] = True
                break
            if len(branches) != 1:
                raise SchemaConversionError(f"{path}: unsupported union {result['anyOf']}")
            del result["anyOf"]
            if result.get("default", 0) is None:
                del result["default"]
            result = _merge(branches[0], result)
            continue
        if "oneOf" in result:
            raise SchemaConversionError(f"{path}: oneOf is not supported")
        break
    result["__defs__"] = tuple(seen)
    return result


def _merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """`base` updated by `overlay`; CEL rule lists of both are concatenated."""
    merged = {**base, **overlay}
    for key in _MERGED_LISTS:
        if key in base and key in overlay:
            merged[key] = [*base[key], *overlay[key]]
    return merged


def _is_int_or_string(branches: list[Any]) -> bool:
    types = sorted(str(b.get("type")) for b in branches if isinstance(b, Mapping))
    return len(branches) == 2 and types == ["integer", "string"]


def openapi_schema(info: KindInfo) -> dict[str, Any]:
    """Return the structural `openAPIV3Schema` of a kind (spec and, if modelled, status)."""
    generated = info.model.model_json_schema(
        by_alias=True, mode="validation", schema_generator=DocumentedSchema
    )
    converted = to_structural(generated)
    props = converted.get("properties", {})
    properties: dict[str, Any] = {
        "apiVersion": {"type": "string", "description": "Versioned schema of this object."},
        "kind": {"type": "string", "description": "REST resource this object represents."},
        "metadata": {"type": "object"},
        "spec": props["spec"],
    }
    if "status" in props:
        properties["status"] = props["status"]
    schema: dict[str, Any] = {
        "type": "object",
        "description": " ".join(info.description.split()),
        "properties": properties,
    }
    if "spec" in converted.get("required", []):
        schema["required"] = ["spec"]
    return schema
