"""An in-memory stand-in for `gryvia_cli.kube.access.KubeAccess` that feeds rendering tests.

It implements the same methods over dicts; it never replaces the integration tests.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from gryvia_cli.errors import ForbiddenError, NotInstalledError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.config import ContextInfo
from gryvia_cli.kube.errors import translate_api_exception


class FakeLogResponse:
    """A streaming log response: yields the lines, then ends."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.released = False

    def stream(self, amt: int = 4096, decode_content: bool = True) -> Iterator[bytes]:
        for line in self.lines:
            yield (line + "\n").encode()

    def release_conn(self) -> None:
        self.released = True

    def shutdown(self) -> None:
        self.released = True


def _matches(obj: dict[str, Any], selector: str | None) -> bool:
    if not selector:
        return True
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in selector.split(","):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True


def _fields(obj: dict[str, Any], selector: str | None) -> bool:
    if not selector:
        return True
    for term in selector.split(","):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if str(_path(obj, key)) == value:
                return False
        else:
            key, _, value = term.partition("=")
            if str(_path(obj, key)) != value:
                return False
    return True


def _path(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _merge(target: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        elif value is None:
            target.pop(key, None)
        else:
            target[key] = copy.deepcopy(value)


class FakeAccess:
    """KubeAccess over in-memory objects; `forbidden`/`missing` kinds raise like a cluster."""

    def __init__(self, *objects: dict[str, Any], namespace: str = "ml") -> None:
        self.objects: list[dict[str, Any]] = [copy.deepcopy(o) for o in objects]
        self.context = ContextInfo("test", "test", "https://fake:6443", "admin", namespace, ())
        self.server = self.context.server
        self.logs: dict[str, list[str]] = {}
        self.forbidden: set[str] = set()
        self.dry_run_warnings: list[str] = []
        self.missing: set[str] = set()
        self.calls: list[tuple[str, str]] = []
        self.user: tuple[str, tuple[str, ...]] = ("admin", ("system:masters",))
        """What `whoami` answers (a SelfSubjectReview's username and groups)."""

    def add(self, *objects: dict[str, Any]) -> FakeAccess:
        """Add objects; returns self."""
        self.objects += [copy.deepcopy(o) for o in objects]
        return self

    def _check(self, res: r.Resource, verb: str) -> None:
        self.calls.append((verb, res.kind))
        if res.kind in self.missing:
            raise NotInstalledError(f"{res.kind} is not available on this cluster")
        if res.kind in self.forbidden:
            raise ForbiddenError(f"forbidden: cannot {verb} {res.plural}")

    def _of(self, res: r.Resource) -> list[dict[str, Any]]:
        return [o for o in self.objects if o.get("kind") == res.kind]

    def list_objects(
        self,
        res: r.Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        self._check(res, "list")
        items = [
            copy.deepcopy(o)
            for o in self._of(res)
            if (
                namespace is None
                or not res.namespaced
                or o["metadata"].get("namespace") == namespace
            )
            and _matches(o, label_selector)
            and _fields(o, field_selector)
        ]
        meta: dict[str, Any] = {}
        if limit:  # pages as the API server cuts them: `continue` names the next offset
            start = int(continue_token or 0)
            items, rest = items[start : start + limit], items[start + limit :]
            if rest:
                meta["continue"] = str(start + limit)
        return {
            "apiVersion": res.api_version,
            "kind": f"{res.kind}List",
            "metadata": meta,
            "items": items,
        }

    def list_bytes(self, res: r.Resource, namespace: str | None = None, **kw: Any) -> bytes:
        return json.dumps(self.list_objects(res, namespace, **kw)).encode()

    def items(
        self, res: r.Resource, namespace: str | None = None, **kw: Any
    ) -> list[dict[str, Any]]:
        return list(self.list_objects(res, namespace, **kw)["items"])

    def _find(self, res: r.Resource, name: str, namespace: str | None) -> dict[str, Any]:
        for obj in self._of(res):
            meta = obj["metadata"]
            if meta.get("name") == name and (
                not res.namespaced or meta.get("namespace") == namespace
            ):
                return obj
        body = {"kind": "Status", "reason": "NotFound", "details": {"name": name}}
        raise translate_api_exception(
            404, json.dumps(body), resource=res, name=name, namespace=namespace
        )

    def get(self, res: r.Resource, name: str, namespace: str | None = None) -> dict[str, Any]:
        self._check(res, "get")
        return copy.deepcopy(self._find(res, name, namespace))

    def create(
        self, res: r.Resource, body: dict[str, Any], namespace: str | None, *, dry_run: bool = False
    ) -> dict[str, Any]:
        self._check(res, "create")
        obj = copy.deepcopy(dict(body))
        obj.setdefault("kind", res.kind)
        obj.setdefault("apiVersion", res.api_version)
        meta = obj.setdefault("metadata", {})
        if res.namespaced:
            meta["namespace"] = namespace
        if not meta.get("name"):
            meta["name"] = (meta.get("generateName") or "obj-") + "abcde"
        meta.setdefault("creationTimestamp", "2025-06-01T12:00:00Z")
        if not dry_run:
            self.objects.append(obj)
        return copy.deepcopy(obj)

    def apply(
        self, res: r.Resource, body: dict[str, Any], namespace: str | None = None, **_: Any
    ) -> dict[str, Any]:
        """Server-side apply in memory: the stored object's spec replaced, or a create."""
        self._check(res, "patch")
        name = (body.get("metadata") or {}).get("name")
        for obj in self._of(res):
            meta = obj["metadata"]
            if meta.get("name") == name and (
                not res.namespaced or meta.get("namespace") == namespace
            ):
                obj["spec"] = copy.deepcopy(body.get("spec"))
                return copy.deepcopy(obj)
        return self.create(res, body, namespace)

    def dry_run_create(
        self, res: r.Resource, body: dict[str, Any], namespace: str | None
    ) -> tuple[dict[str, Any], list[str]]:
        return self.create(res, body, namespace, dry_run=True), list(self.dry_run_warnings)

    def merge_patch(
        self, res: r.Resource, name: str, namespace: str | None, patch: dict[str, Any]
    ) -> dict[str, Any]:
        self._check(res, "patch")
        obj = self._find(res, name, namespace)
        _merge(obj, patch)
        return copy.deepcopy(obj)

    def delete(self, res: r.Resource, name: str, namespace: str | None) -> dict[str, Any]:
        self._check(res, "delete")
        obj = self._find(res, name, namespace)
        self.objects.remove(obj)
        return {"kind": "Status", "status": "Success"}

    def pod_log(self, pod: str, namespace: str, **kw: Any) -> FakeLogResponse:
        self._check(r.POD, "get")
        self._find(r.POD, pod, namespace)
        lines = self.logs.get(pod, [])
        tail = kw.get("tail")
        return FakeLogResponse(lines[-tail:] if tail else lines)

    def served_resources(self, group_version: str) -> set[str] | None:
        if r.AIJOB.kind in self.missing:
            return None
        return {res.plural for res in r.GRYVIA_RESOURCES if res.kind not in self.missing}

    def server_version(self) -> dict[str, Any]:
        return {"gitVersion": "v1.36.3"}

    def whoami(self) -> tuple[str, tuple[str, ...]]:
        self.calls.append(("create", "SelfSubjectReview"))
        return self.user
