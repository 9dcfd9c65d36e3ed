"""A checker for the Kubernetes structural-schema rules and CEL hygiene of CRD schemas."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
FORMATS = frozenset(
    {
        "int32",
        "int64",
        "float",
        "double",
        "byte",
        "binary",
        "date",
        "date-time",
        "duration",
        "password",
        "uri",
        "uuid",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
    }
)
_VALUE_VALIDATIONS = frozenset(
    {
        "format",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "multipleOf",
        "enum",
        "maxProperties",
        "minProperties",
        "required",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
    }
)
_STRUCTURE = frozenset({"type", "properties", "items", "additionalProperties", "description"})
_EXTENSIONS = frozenset(
    {
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-int-or-string",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
        "x-kubernetes-validations",
    }
)
ALLOWED_KEYS = _VALUE_VALIDATIONS | _STRUCTURE | _EXTENSIONS | {"default", "nullable", "title"}
_RULE_KEYS = frozenset(
    {"rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"}
)
_REASONS = frozenset(
    {"FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"}
)
_SCALAR_PY = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,)}
_SELF_PATH = re.compile(r"(?<![\w.])(self|oldSelf)((?:\.[A-Za-z_]\w*)+)(\s*\()?")
_ITERATING = frozenset({"all", "exists", "exists_one", "map", "filter"})


def structural_errors(schema: Mapping[str, Any]) -> list[str]:
    """Return every violation (as `<path>: <problem>`) of the rules a CRD schema must follow.

    Checks the structural-schema rules of apiextensions.k8s.io/v1 (a `type` on every node
    except int-or-string and preserve-unknown-fields nodes, no `$ref`, junctors holding value
    validations only, `properties` xor `additionalProperties`, arrays with `items`, typed
    defaults and enums, metadata limited to name/generateName) plus CEL hygiene: rules use
    known keys, `self.x.y` paths exist, and rules never sit under unbounded lists or compare
    unbounded values (the API server's cost estimate would reject them).
    An empty list means the schema is acceptable.
    """
    errors: list[str] = []
    if schema.get("type") != "object":
        errors.append("<root>: type must be object")
    metadata = schema.get("properties", {}).get("metadata")
    if metadata is not None and set(metadata) - {"type"} - {"properties"}:
        errors.append(".metadata: only type and name/generateName restrictions are allowed")
    if metadata is not None and set(metadata.get("properties", {})) - {"name", "generateName"}:
        errors.append(".metadata: only name and generateName may be restricted")
    _walk(schema, "", errors, bounded=True, is_root=True)
    return errors


def _walk(node: Any, path: str, errors: list[str], *, bounded: bool, is_root: bool = False) -> None:
    where = path or "<root>"
    if not isinstance(node, Mapping):
        errors.append(f"{where}: schema must be a mapping")
        return
    for key in node:
        if key not in ALLOWED_KEYS:
            errors.append(f"{where}: keyword {key!r} is not allowed in a CRD schema")
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    typ = node.get("type")
    if int_or_string:
        _check_int_or_string(node, where, errors)
    elif typ is None and not preserve:
        errors.append(f"{where}: type is required")
    elif typ is not None and typ not in TYPES:
        errors.append(f"{where}: unknown type {typ!r}")
    _check_values(node, where, errors)
    for junctor in ("allOf", "anyOf", "oneOf", "not"):
        if junctor in node and not (int_or_string and junctor == "anyOf"):
            subs = node[junctor] if junctor != "not" else [node[junctor]]
            for sub in subs:
                _check_junctor_branch(sub, f"{where}.{junctor}", errors)
    props = node.get("properties")
    additional = node.get("additionalProperties")
    if props is not None and additional is not None:
        errors.append(f"{where}: properties and additionalProperties are mutually exclusive")
    if additional is not None and not isinstance(additional, Mapping):
        errors.append(f"{where}: additionalProperties must be a schema, not {additional!r}")
    if typ == "object" and props is None and additional is None and not preserve:
        errors.append(f"{where}: object without properties would prune every field")
    if typ == "array" and not isinstance(node.get("items"), Mapping):
        errors.append(f"{where}: array without a single items schema")
    if typ != "array" and "items" in node:
        errors.append(f"{where}: items on a non-array")
    _check_list_type(node, where, errors)
    _check_rules(node, where, errors, bounded=bounded)
    for name, sub in (props or {}).items():
        if is_root and name == "metadata":
            continue
        _walk(sub, f"{path}.{name}", errors, bounded=bounded)
    if isinstance(additional, Mapping):
        _walk(additional, f"{path}.*", errors, bounded=bounded and "maxProperties" in node)
    if isinstance(node.get("items"), Mapping):
        _walk(node["items"], f"{path}[]", errors, bounded=bounded and "maxItems" in node)


def _check_int_or_string(node: Mapping[str, Any], where: str, errors: list[str]) -> None:
    if "type" in node:
        errors.append(f"{where}: x-kubernetes-int-or-string must not set type")
    any_of = node.get("anyOf")
    if any_of is not None:
        types = sorted(str(b.get("type")) for b in any_of if isinstance(b, Mapping))
        if types != ["integer", "string"] or any(len(b) != 1 for b in any_of):
            errors.append(
                f"{where}: int-or-string anyOf must be [{{type: integer}}, {{type: string}}]"
            )


def _check_junctor_branch(sub: Any, where: str, errors: list[str]) -> None:
    if not isinstance(sub, Mapping):
        errors.append(f"{where}: junctor branch must be a mapping")
        return
    forbidden = (set(sub) - _VALUE_VALIDATIONS) | (set(sub) & {"default", "nullable"})
    if forbidden:
        errors.append(
            f"{where}: junctors may hold value validations only, found {sorted(forbidden)}"
        )
    for junctor in ("allOf", "anyOf", "oneOf"):
        for inner in sub.get(junctor, []):
            _check_junctor_branch(inner, f"{where}.{junctor}", errors)


def _check_values(node: Mapping[str, Any], where: str, errors: list[str]) -> None:
    typ = node.get("type")
    for key in ("exclusiveMinimum", "exclusiveMaximum"):
        if key in node and not isinstance(node[key], bool):
            errors.append(f"{where}: {key} must be a boolean in OpenAPI v3.0")
    if "nullable" in node and not isinstance(node["nullable"], bool):
        errors.append(f"{where}: nullable must be a boolean")
    if "format" in node and node["format"] not in FORMATS:
        errors.append(f"{where}: unknown format {node['format']!r}")
    if "enum" in node and typ in _SCALAR_PY:
        for value in node["enum"]:
            if not _matches(value, str(typ)):
                errors.append(f"{where}: enum value {value!r} is not a {typ}")
    if "default" in node:
        default = node["default"]
        if typ in _SCALAR_PY and not _matches(default, str(typ)):
            errors.append(f"{where}: default {default!r} is not a {typ}")
        if "enum" in node and default not in node["enum"]:
            errors.append(f"{where}: default {default!r} is not in the enum")
    if node.get("uniqueItems") is True:
        errors.append(f"{where}: uniqueItems is forbidden (use x-kubernetes-list-type: set)")


def _matches(value: Any, typ: str) -> bool:
    if typ in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _SCALAR_PY[typ])


def _check_list_type(node: Mapping[str, Any], where: str, errors: list[str]) -> None:
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys")
    if list_type is None:
        if keys is not None:
            errors.append(f"{where}: list-map-keys need x-kubernetes-list-type: map")
        return
    items = node.get("items", {})
    if node.get("type") != "array":
        errors.append(f"{where}: x-kubernetes-list-type on a non-array")
    elif list_type == "set" and items.get("type") not in _SCALAR_PY:
        errors.append(f"{where}: list-type set needs scalar items")
    elif list_type == "map":
        required = set(items.get("required", []))
        item_props = items.get("properties", {})
        for key in keys or []:
            if key not in required and "default" not in item_props.get(key, {}):
                errors.append(f"{where}: list-map key {key!r} must be required or defaulted")
        if not keys:
            errors.append(f"{where}: list-type map needs x-kubernetes-list-map-keys")
    elif list_type not in ("atomic", "set", "map"):
        errors.append(f"{where}: unknown list-type {list_type!r}")


def _check_rules(node: Mapping[str, Any], where: str, errors: list[str], *, bounded: bool) -> None:
    rules = node.get("x-kubernetes-validations")
    if rules is None:
        return
    if not bounded:
        errors.append(f"{where}: CEL rules under a list or map without maxItems/maxProperties")
    for i, rule in enumerate(rules):
        at = f"{where}.x-kubernetes-validations[{i}]"
        if not isinstance(rule, Mapping) or not isinstance(rule.get("rule"), str):
            errors.append(f"{at}: needs a rule string")
            continue
        for key in set(rule) - _RULE_KEYS:
            errors.append(f"{at}: unknown key {key!r}")
        if "\n" in str(rule.get("message", "")):
            errors.append(f"{at}: message must be one line")
        if rule.get("reason", "FieldValueInvalid") not in _REASONS:
            errors.append(f"{at}: unknown reason {rule['reason']!r}")
        for text in (rule["rule"], rule.get("messageExpression", "")):
            _check_cel_paths(node, str(text), at, errors)
        if "string(" in str(rule.get("messageExpression", "")):
            errors.append(
                f"{at}: messageExpression converts values with string(); the API "
                "server's cost estimate rejects it, use a static message"
            )
        if re.search(r"\bself\s*==\s*oldSelf\b", rule["rule"]):
            for loose in _unbounded(node, ""):
                errors.append(f"{at}: self == oldSelf compares unbounded {loose or 'self'}")


def _check_cel_paths(node: Mapping[str, Any], text: str, at: str, errors: list[str]) -> None:
    for match in _SELF_PATH.finditer(text):
        names = match.group(2).split(".")[1:]
        method = names.pop() if match.group(3) else None
        current: Mapping[str, Any] = node
        for name in names:
            props = current.get("properties")
            if props is None:
                if current.get("type") not in ("object", None):
                    errors.append(f"{at}: {match.group(0)} selects into a {current.get('type')}")
                break
            if name not in props:
                errors.append(f"{at}: {match.group(1)}.{'.'.join(names)} names no field ({name})")
                break
            current = props[name]
        else:
            if method is not None:
                _check_method(current, method, f"{match.group(1)}.{'.'.join(names)}", at, errors)


def _check_method(
    target: Mapping[str, Any], method: str, expr: str, at: str, errors: list[str]
) -> None:
    if target.get("type") == "array" and method in _ITERATING and "maxItems" not in target:
        errors.append(f"{at}: {expr}.{method}() iterates a list without maxItems")
    if target.get("type") == "string" and "maxLength" not in target and "enum" not in target:
        errors.append(f"{at}: {expr}.{method}() runs on a string without maxLength")


def _unbounded(node: Mapping[str, Any], path: str) -> list[str]:
    """Paths below `node` whose size the CEL cost estimator cannot bound."""
    typ = node.get("type")
    if node.get("x-kubernetes-preserve-unknown-fields") is True:
        return [path]
    if typ == "string" and not ({"maxLength", "enum", "format"} & set(node)):
        return [path]
    if typ == "array":
        inner = _unbounded(node.get("items", {}), f"{path}[]")
        return ([path] if "maxItems" not in node else []) + inner
    if typ == "object" and "additionalProperties" in node:
        inner = _unbounded(node["additionalProperties"], f"{path}.*")
        return ([path] if "maxProperties" not in node else []) + inner
    out: list[str] = []
    for name, sub in node.get("properties", {}).items():
        out.extend(_unbounded(sub, f"{path}.{name}"))
    return out
