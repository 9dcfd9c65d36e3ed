"""An in-memory stand-in for KubeApi, for the handler unit tests (integration tests use the
real sandbox)."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from gryvia_operator.controller.kubeapi import AlreadyExists, Conflict, Invalid, KubeError, NotFound


class FakeApi:
    """Objects by (kind, namespace, name); records every call."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.calls: list[tuple[str, str, str]] = []
        self.conflict_next_status = False
        self.logs: dict[tuple[str, str], str | Exception] = {}
        """(namespace, pod) -> its log text, or the error reading it raises."""
        self._rv = itertools.count(100)

    def _key(self, kind: str, name: str, namespace: str | None) -> tuple[str, str, str]:
        return (kind, namespace or "", name)

    def put(self, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        self.objects[self._key(obj["kind"], meta["name"], meta.get("namespace"))] = obj

    async def create(self, body: Mapping[str, Any]) -> dict[str, Any]:
        meta = body["metadata"]
        key = self._key(str(body["kind"]), meta["name"], meta.get("namespace"))
        self.calls.append(("create", key[0], key[2]))
        if key in self.objects:
            raise AlreadyExists(409, "AlreadyExists", "exists")
        obj = copy.deepcopy(dict(body))
        obj["metadata"]["resourceVersion"] = str(next(self._rv))
        obj["metadata"].setdefault("uid", f"uid-{key[0]}-{key[2]}")
        self.objects[key] = obj
        return copy.deepcopy(obj)

    async def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        self.calls.append(("get", kind, name))
        try:
            return copy.deepcopy(self.objects[self._key(kind, name, namespace)])
        except KeyError:
            raise NotFound(404, "NotFound", name) from None

    async def list(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[dict[str, Any]]:
        """Objects of `kind` (in `namespace` when given) matching `a.b=c,...` field selectors
        (label selectors are not supported)."""
        self.calls.append(("list", kind, field_selector))
        wanted = [term.split("=", 1) for term in field_selector.split(",") if term]
        out = []
        for (k, ns, _), obj in self.objects.items():
            if k != kind or (namespace is not None and ns != namespace):
                continue
            if all(_field(obj, path) == value for path, value in wanted):
                out.append(copy.deepcopy(obj))
        return out

    async def patch(
        self,
        kind: str,
        name: str,
        patch: Mapping[str, Any],
        namespace: str | None = None,
        *,
        subresource: str = "",
    ) -> dict[str, Any]:
        self.calls.append(("patch" + (f"/{subresource}" if subresource else ""), kind, name))
        if subresource == "status" and self.conflict_next_status:
            self.conflict_next_status = False
            raise Conflict(409, "Conflict", "changed")
        key = self._key(kind, name, namespace)
        obj = self.objects.setdefault(key, {"kind": kind, "metadata": {"name": name}})
        _merge(obj, {k: v for k, v in patch.items() if k != "metadata"})
        _merge(
            obj.setdefault("metadata", {}),
            {k: v for k, v in patch.get("metadata", {}).items() if k != "resourceVersion"},
        )
        obj["metadata"]["resourceVersion"] = str(next(self._rv))
        return copy.deepcopy(obj)

    async def pod_log(
        self, name: str, namespace: str, *, container: str, tail_lines: int | None = None
    ) -> str:
        self.calls.append(("log", "Pod", name))
        found = self.logs.get((namespace, name), KubeError(400, "BadRequest", "no log"))
        if isinstance(found, Exception):
            raise found
        lines = found.splitlines(keepends=True)
        return "".join(lines[-tail_lines:] if tail_lines else lines)

    async def json_patch(
        self, kind: str, name: str, ops: Sequence[Mapping[str, Any]], namespace: str | None = None
    ) -> dict[str, Any]:
        """Only `test` + `remove` of a list entry (a metadata.finalizers entry, a
        spec.schedulingGates entry's name), as the operator sends."""
        self.calls.append(("json_patch", kind, name))
        obj = self.objects.get(self._key(kind, name, namespace))
        if obj is None:
            raise NotFound(404, "NotFound", name)
        for op in ops:
            parts = str(op["path"]).strip("/").split("/")
            section, field, index = parts[0], parts[1], int(parts[2])
            items = obj.setdefault(section, {}).setdefault(field, [])
            if op["op"] == "test":
                found = items[index] if index < len(items) else None
                if len(parts) > 3 and isinstance(found, Mapping):
                    found = found.get(parts[3])
                if found != op["value"]:
                    raise Invalid(422, "Invalid", "test failed")
            if op["op"] == "remove":
                items.pop(index)
        return copy.deepcopy(obj)

    async def evict(self, name: str, namespace: str) -> bool:
        self.calls.append(("evict", "Pod", name))
        return True

    async def delete(self, kind: str, name: str, namespace: str | None = None, **_: Any) -> bool:
        self.calls.append(("delete", kind, name))
        return self.objects.pop(self._key(kind, name, namespace), None) is not None


def _merge(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def _field(obj: Mapping[str, Any], path: str) -> str:
    found: Any = obj
    for part in path.split("."):
        found = found.get(part) if isinstance(found, Mapping) else None
    return "" if found is None else str(found)
