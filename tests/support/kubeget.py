"""`kubectl get ... -o json` without a kubectl process: the tests poll the API server hundreds
of times a minute, and a kubectl process per poll (a Go binary's start, its discovery cache)
costs more CPU than the operator the test waits for.

`Reader.get(args)` understands what the tests ask of `kubectl get`: comma-separated resource
names (plural, singular, short name or kind, optionally `resource.group`), object names, `-n`,
`-A`, `-l` and `--field-selector`. It answers as kubectl does: one object for one name, else
a `List` whose items carry `apiVersion` and `kind`, without managedFields; a missing object raises
`subprocess.CalledProcessError` with kubectl's `Error from server (NotFound)` text. Anything
else returns None and the caller runs kubectl itself.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Resource:
    """One served resource: its list path under `prefix` (`/api/v1` or `/apis/G/V`)."""

    prefix: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return self.prefix.removeprefix("/api/").removeprefix("/apis/")

    def path(self, namespace: str | None, name: str | None = None) -> str:
        """The URL path of the collection (in `namespace` when namespaced) or of one object."""
        where = f"/namespaces/{namespace}" if self.namespaced and namespace else ""
        tail = f"/{name}" if name else ""
        return f"{self.prefix}{where}/{self.plural}{tail}"


@dataclass(frozen=True)
class Query:
    """A parsed `kubectl get`: resources, names, namespace (None: all), selectors."""

    resources: tuple[str, ...]
    names: tuple[str, ...]
    namespace: str | None
    labels: str | None
    fields: str | None


def parse(args: Sequence[str], default_namespace: str = "default") -> Query | None:
    """The query of `kubectl get ARGS` (without `-o json`), or None where ARGS hold anything
    this reader does not do."""
    if not args or args[0] != "get":
        return None
    positional: list[str] = []
    namespace: str | None = default_namespace
    labels = fields = None
    rest = list(args[1:])
    while rest:
        arg = rest.pop(0)
        flag, eq, value = arg.partition("=")
        if flag in ("-n", "--namespace", "-l", "--selector", "--field-selector"):
            if not eq:
                if not rest:
                    return None
                value = rest.pop(0)
            if flag in ("-n", "--namespace"):
                namespace = value
            elif flag == "--field-selector":
                fields = value
            else:
                labels = value
        elif arg in ("-A", "--all-namespaces"):
            namespace = None
        elif arg.startswith("-") or "/" in arg:
            return None
        else:
            positional.append(arg)
    if not positional:
        return None
    return Query(tuple(positional[0].split(",")), tuple(positional[1:]), namespace, labels, fields)


class Reader:
    """GETs through one in-process client of the kubeconfig (discovery read once, again when
    a resource name is unknown: CRDs arrive during the session)."""

    def __init__(self, kubeconfig: Path) -> None:
        from kubernetes import config

        self.client = config.new_client_from_config(config_file=str(kubeconfig))
        self.lock = threading.Lock()
        self.names: dict[str, Resource] = {}

    def _fetch(self, path: str, query: list[tuple[str, str]] | None = None) -> Any:
        """GET `path` parsed; None for 404; RuntimeError with the body for another error."""
        request = self.client.param_serialize(
            method="GET",
            resource_path=path,
            query_params=query or [],
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        resp = self.client.call_api(*request, _request_timeout=60)
        resp.read()
        if resp.status == 404:
            return None
        if not 200 <= resp.status <= 299:
            raise RuntimeError(f"GET {path}: {resp.status} {resp.data[:500]!r}")
        return json.loads(resp.data)

    def _discover(self) -> None:
        names: dict[str, Resource] = {}
        prefixes = ["/api/v1"] + [
            f"/apis/{g['preferredVersion']['groupVersion']}" for g in self._fetch("/apis")["groups"]
        ]
        for prefix in prefixes:
            group = prefix.split("/")[2] if prefix.startswith("/apis/") else ""
            for r in self._fetch(prefix)["resources"]:
                if "/" in r["name"] or "get" not in r.get("verbs", ()):
                    continue
                res = Resource(prefix, r["name"], r["kind"], r["namespaced"])
                aliases = [r["name"], r.get("singularName") or "", r["kind"].lower()]
                aliases += r.get("shortNames") or []
                for alias in filter(None, aliases):
                    names.setdefault(alias, res)  # the first group wins, as kubectl's order
                    if group:
                        names.setdefault(f"{alias}.{group}", res)
        self.names = names

    def resource(self, name: str) -> Resource | None:
        """The resource kubectl would pick for `name`, or None if the server has none."""
        with self.lock:
            if name.lower() not in self.names:
                self._discover()
            return self.names.get(name.lower())

    def get(self, args: Sequence[str]) -> Any:
        """`kubectl ARGS -o json` parsed, or None where `parse` declines ARGS."""
        q = parse(args)
        if q is None:
            return None
        found = [self.resource(r) for r in q.resources]
        if None in found or (q.names and len(found) != 1):
            return None
        resources = [r for r in found if r is not None]
        if q.names:
            res = resources[0]
            objs = []
            for name in q.names:
                found_obj = self._fetch(res.path(q.namespace, name))
                if found_obj is None:
                    noun = f"{res.plural}.{res.api_version.split('/')[0]}"
                    noun = res.plural if res.prefix == "/api/v1" else noun
                    raise subprocess.CalledProcessError(
                        1,
                        ["kubectl", *args],
                        "",
                        f'Error from server (NotFound): {noun} "{name}" not found\n',
                    )
                objs.append(_shown(found_obj))
            return objs[0] if len(objs) == 1 else _as_list(objs)
        query = [("labelSelector", q.labels)] if q.labels else []
        query += [("fieldSelector", q.fields)] if q.fields else []
        items: list[dict[str, Any]] = []
        for res in resources:
            page = self._fetch(res.path(q.namespace), query) or {"items": []}
            for item in page["items"]:
                items.append({"apiVersion": res.api_version, "kind": res.kind, **_shown(item)})
        return _as_list(items)


def _shown(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as `kubectl get -o json` prints it: without `metadata.managedFields`
    (kubectl's `--show-managed-fields=false`)."""
    (obj.get("metadata") or {}).pop("managedFields", None)
    return obj


def _as_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
