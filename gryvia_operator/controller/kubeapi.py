"""The operator's one Kubernetes access seam, over the official client.

Exactly the calls the handlers make (create, get, merge-patch, replace, delete, list), async
through a thread pool, with API errors translated into KubeError subclasses. Kinds are looked
up in the one resource table, `gryvia_operator.api.resources` (an unknown kind raises KeyError).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Generator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from gryvia_operator.api.resources import by_kind


class KubeError(Exception):
    """An API call failed; `status` is the HTTP status (0 for a transport error)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status, self.reason, self.message = status, reason, message


class NotFound(KubeError):
    """404: the object does not exist."""


class AlreadyExists(KubeError):
    """409 AlreadyExists: a create found the name taken."""


class Conflict(KubeError):
    """409 Conflict: the object changed since it was read (resourceVersion precondition)."""


class Invalid(KubeError):
    """422: the API server refused the object."""


def load_configuration(
    kubeconfig: Path | None = None, context: str | None = None
) -> k8s_client.Configuration:
    """Client configuration: in-cluster when running in a pod and no kubeconfig is given,
    else the kubeconfig file (`$KUBECONFIG` or ~/.kube/config) and context."""
    configuration = k8s_client.Configuration()
    if kubeconfig is None and context is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        k8s_config.load_incluster_config(client_configuration=configuration)
    else:
        k8s_config.load_kube_config(
            config_file=str(kubeconfig) if kubeconfig else None,
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
    return configuration


def bearer_token(configuration: k8s_client.Configuration) -> tuple[str | None, str | None]:
    """(scheme, token) of the configuration's Authorization header, (None, None) without one."""
    header = configuration.get_api_key_with_prefix(
        "BearerToken"
    ) or configuration.get_api_key_with_prefix("authorization")
    if not header:
        return None, None
    parts = str(header).split(" ", 1)
    return (None, parts[0]) if len(parts) == 1 else (parts[0], parts[1])


def _error(status: int, reason: str, data: bytes) -> KubeError:
    message, api_reason = data.decode("utf-8", "replace")[:2000], reason
    try:
        body = json.loads(data)
        message, api_reason = body.get("message", message), body.get("reason", reason)
    except (ValueError, AttributeError):
        pass
    if status == 404:
        return NotFound(status, api_reason, message)
    if status == 409:
        cls = AlreadyExists if api_reason == "AlreadyExists" else Conflict
        return cls(status, api_reason, message)
    if status == 422:
        return Invalid(status, api_reason, message)
    return KubeError(status, api_reason, message)


class KubeApi:
    """Async create/get/patch/delete/list of raw objects (dicts) by kind name."""

    def __init__(self, configuration: k8s_client.Configuration, *, workers: int = 16) -> None:
        # room for the informers' long watches (`controller.informer`) besides the workers
        configuration.connection_pool_maxsize = max(workers, 4) + 16
        self._client = k8s_client.ApiClient(configuration)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kubeapi")
        self.timeout = 30.0

    def close(self) -> None:
        """Release the threads and connections."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Mapping[str, str] | None = None,
        content_type: str = "application/json",
        raw: bool = False,
        timeout: float | None = None,
    ) -> Any:
        headers = {"Accept": "*/*" if raw else "application/json", "Content-Type": content_type}
        _, url, headers, _, _ = self._client.param_serialize(
            method, path, header_params=headers, auth_settings=["BearerToken"]
        )
        if query:
            url += "?" + urlencode(query)
        try:
            response = self._client.rest_client.request(
                method, url, headers=headers, body=body, _request_timeout=timeout or self.timeout
            )
            data = response.read()  # a body that stops coming times out here, not above
        except k8s_client.ApiException as exc:
            raise KubeError(exc.status or 0, str(exc.reason), str(exc.body or "")) from exc
        except Exception as exc:  # urllib3 transport errors
            raise KubeError(0, type(exc).__name__, str(exc)) from exc
        if response.status >= 400:
            raise _error(response.status, str(response.reason), data or b"")
        if raw:
            return bytes(data or b"")
        return json.loads(data) if data else {}

    async def _run(self, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: self._call(*args, **kwargs))

    async def create(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Create `body` (its kind and metadata.namespace decide where)."""
        path = by_kind(str(body["kind"])).path(body.get("metadata", {}).get("namespace"))
        result: dict[str, Any] = await self._run("POST", path, dict(body))
        return result

    async def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        """Read one object; raises NotFound."""
        result: dict[str, Any] = await self._run("GET", by_kind(kind).path(namespace, name))
        return result

    async def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST `body` to a raw API path (a review such as SelfSubjectAccessReview); raises
        KubeError."""
        result: dict[str, Any] = await self._run("POST", path, dict(body))
        return result

    async def get_path(self, path: str, query: Mapping[str, str] | None = None) -> dict[str, Any]:
        """GET a raw API path (an aggregated API such as metrics.k8s.io); raises KubeError."""
        result: dict[str, Any] = await self._run("GET", path, query=query)
        return result

    async def watch_once(self, path: str, query: Mapping[str, str], timeout: float) -> bytes:
        """One watch request on a raw API path (`query` has `watch=1` and `timeoutSeconds`),
        read to its end; its events as the raw newline-separated JSON. Raises KubeError,
        status 0 for a transport failure such as no answer within `timeout` seconds."""
        result: bytes = await self._run("GET", path, query=query, raw=True, timeout=timeout)
        return result

    def stream(
        self, path: str, query: Mapping[str, str], read_timeout: float
    ) -> Generator[bytes, None, None]:
        """A long GET on a raw API path (a watch), its body's chunks as they come; blocking,
        so iterate it on a thread. A chunk that takes over `read_timeout` seconds raises
        urllib3's ReadTimeoutError; an error status raises KubeError."""
        import urllib3

        _, url, headers, _, _ = self._client.param_serialize(
            "GET", path, header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )  # fmt: skip
        response = self._client.rest_client.pool_manager.request(
            "GET", f"{url}?{urlencode(query)}", headers=headers, preload_content=False,
            timeout=urllib3.Timeout(connect=10.0, read=read_timeout),
        )  # fmt: skip
        try:
            if response.status >= 400:
                raise _error(response.status, str(response.reason), response.read() or b"")
            yield from response.stream(65536)
        finally:
            with contextlib.suppress(Exception):
                response.release_conn()

    async def list(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[dict[str, Any]]:
        """List objects (one page; the operator only lists small collections)."""
        query = {"labelSelector": label_selector} if label_selector else {}
        if field_selector:
            query["fieldSelector"] = field_selector
        result = await self._run("GET", by_kind(kind).path(namespace), query=query or None)
        return list(result.get("items") or [])

    async def patch(
        self,
        kind: str,
        name: str,
        patch: Mapping[str, Any],
        namespace: str | None = None,
        *,
        subresource: str = "",
    ) -> dict[str, Any]:
        """JSON merge patch; include metadata.resourceVersion in `patch` for a precondition."""
        path = by_kind(kind).path(namespace, name, subresource)
        result: dict[str, Any] = await self._run(
            "PATCH", path, dict(patch), content_type="application/merge-patch+json"
        )
        return result

    async def json_patch(
        self, kind: str, name: str, ops: Sequence[Mapping[str, Any]], namespace: str | None = None
    ) -> dict[str, Any]:
        """JSON patch (RFC 6902) `ops`; a failed `test` op raises Invalid (422)."""
        path = by_kind(kind).path(namespace, name)
        result: dict[str, Any] = await self._run(
            "PATCH", path, [dict(op) for op in ops], content_type="application/json-patch+json"
        )
        return result

    async def proxy_get(self, pod: str, namespace: str, port: int, path: str) -> str:
        """GET `path` from `port` of a pod through the API server's pod proxy (an exporter's
        /metrics) as text; raises KubeError."""
        where = by_kind("Pod").path(namespace, f"{pod}:{port}", f"proxy/{path.lstrip('/')}")
        data = await self._run("GET", where, raw=True)
        return bytes(data).decode("utf-8", "replace")

    async def pod_log(
        self,
        name: str,
        namespace: str,
        *,
        container: str,
        tail_lines: int | None = None,
        timestamps: bool = False,
    ) -> str:
        """The log of a pod's container as text (undecodable bytes replaced; with
        `timestamps`, each line starts with its RFC 3339 time); raises NotFound, or KubeError
        400 when the container has no log (never started)."""
        query = {"container": container}
        if tail_lines is not None:
            query["tailLines"] = str(tail_lines)
        if timestamps:
            query["timestamps"] = "true"
        data = await self._run(
            "GET", by_kind("Pod").path(namespace, name, "log"), query=query, raw=True
        )
        return bytes(data).decode("utf-8", "replace")

    async def evict(self, name: str, namespace: str) -> bool:
        """Evict a pod through the Eviction API (it gets condition DisruptionTarget); False
        when it was already gone. Raises KubeError 429 when a disruption budget refuses."""
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        try:
            await self._run("POST", by_kind("Pod").path(namespace, name, "eviction"), body)
        except NotFound:
            return False
        return True

    async def replace(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """PUT a whole object (its metadata.resourceVersion guards against lost updates)."""
        meta = body["metadata"]
        path = by_kind(str(body["kind"])).path(meta.get("namespace"), meta["name"])
        result: dict[str, Any] = await self._run("PUT", path, dict(body))
        return result

    async def delete(
        self, kind: str, name: str, namespace: str | None = None, *, propagation: str = "Background"
    ) -> bool:
        """Delete an object and its dependents; False when it was already gone."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation}
        try:
            await self._run("DELETE", by_kind(kind).path(namespace, name), body)
        except NotFound:
            return False
        return True


async def create_or_patch(api: KubeApi, body: dict[str, Any]) -> None:
    """Create `body`, or merge-patch the existing object of its kind and name towards it
    (every key but apiVersion and kind). Raises KubeError as `create` and `patch` do."""
    meta = body["metadata"]
    try:
        await api.create(body)
    except AlreadyExists:
        patch = {k: v for k, v in body.items() if k not in ("apiVersion", "kind")}
        await api.patch(body["kind"], meta["name"], patch, meta.get("namespace"))
