"""Generic field checks on raw manifests: safe lookups, pydantic errors, unknown fields."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from gryvia_operator.api import messages as msg

MISSING: Any = object()
"""Returned by get_path when a key is absent or a parent is not a mapping."""


def get_path(obj: Any, *keys: str) -> Any:
    """`obj[k1][k2]...`, or MISSING when a key is absent or a parent is not a mapping."""
    for key in keys:
        if not isinstance(obj, Mapping) or key not in obj:
            return MISSING
        obj = obj[key]
    return obj


def int_or_none(value: Any) -> int | None:
    """The value if it is a real int (not a bool), else None (type errors are reported apart)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def dotted(loc: Sequence[int | str]) -> str:
    """A pydantic error location as a field path: `("spec", "env", 0, "name")` ->
    `spec.env[0].name`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def pydantic_errors(exc: ValidationError, covered: Sequence[str]) -> list[tuple[str, str]]:
    """(field, message) per pydantic error whose field no reported error already covers.

    A field is covered by itself, its parents and its children. Union branches collapse to
    one message per field; missing fields read `<field> is required`.
    """
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for error in exc.errors(include_url=False):
        path = dotted([p for p in error["loc"] if not _is_union_tag(p)])
        if path in seen or any(_related(path, c) for c in covered):
            continue
        seen.add(path)
        if error["type"] == "missing":
            text = msg.FIELD_REQUIRED.format(field=path)
        else:
            detail = str(error["msg"]).removeprefix("Value error, ")
            text = msg.FIELD_INVALID.format(field=path or "object", detail=detail)
        out.append((path, text))
    return out


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and (
        part in {"int", "str"} or part.startswith(("literal[", "function-"))
    )


def _related(path: str, other: str) -> bool:
    if not path or not other:
        return path == other
    return path == other or _under(path, other) or _under(other, path)


def _under(child: str, parent: str) -> bool:
    return child.startswith((parent + ".", parent + "["))


def unknown_fields(obj: Mapping[str, Any], kind: str) -> list[tuple[str, str]]:
    """(field, warning) for each key the kind's CRD schema does not know (the API server
    drops such fields, so a typo silently loses a setting)."""
    schema = _schema_of(kind)
    out: list[tuple[str, str]] = []
    for part in ("spec", "status"):
        if part in obj and part in schema["properties"]:
            out.extend(_walk_unknown(obj[part], schema["properties"][part], part, kind))
    return out


def _walk_unknown(
    value: Any, node: Mapping[str, Any], path: str, kind: str
) -> Iterator[tuple[str, str]]:
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return
    if isinstance(value, Mapping) and "properties" in node:
        for key, sub in value.items():
            if key in node["properties"]:
                yield from _walk_unknown(sub, node["properties"][key], f"{path}.{key}", kind)
            else:
                text = f"{path}.{key} is not a field of {kind}; the API server rejects or drops it"
                yield (f"{path}.{key}", text)
    elif isinstance(value, Mapping) and isinstance(node.get("additionalProperties"), Mapping):
        for key, sub in value.items():
            yield from _walk_unknown(sub, node["additionalProperties"], f"{path}.{key}", kind)
    elif isinstance(value, list) and isinstance(node.get("items"), Mapping):
        for i, item in enumerate(value):
            yield from _walk_unknown(item, node["items"], f"{path}[{i}]", kind)


@functools.cache
def _schema_of(kind: str) -> Mapping[str, Any]:
    from gryvia_operator.api.crd.schema import openapi_schema
    from gryvia_operator.api.registry import kind_info

    return openapi_schema(kind_info(kind))
