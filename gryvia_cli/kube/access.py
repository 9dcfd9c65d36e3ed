"""The CLI's one Kubernetes access seam: exactly the API calls Gryvia makes, errors translated.

It sends plain REST requests through the light client of `kube.transport` when the kubeconfig's
credentials are static (token, client certificate), else through the official client's
`ApiClient` (exec plugins, OIDC, in-cluster, proxies), and parses JSON itself instead of
building client model objects, so a 1000-object list costs one request and one `json.loads`.
Every method returns API objects as dicts and raises GryviaError subclasses (see
`gryvia_cli.kube.errors`), never ApiException.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gryvia_cli.errors import GryviaError, KubeconfigError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.config import ContextInfo
from gryvia_cli.kube.errors import (
    client_exceptions,
    selector_usage,
    translate_api_exception,
    translate_transport_error,
    transport_exceptions,
)
from gryvia_cli.kube.execcred import send_with_credentials
from gryvia_cli.kube.podlog import pod_log_query
from gryvia_cli.kube.replies import parse_reply, reply_headers, warning_texts

CONNECT_TIMEOUT = 5.0
FIELD_MANAGER = "gryvia-cli"
"""Field manager of the CLI's server-side applies."""


class KubeAccess:
    """API calls against one cluster context. Create with `connect()`."""

    def __init__(self, api: Any, context: ContextInfo, *, timeout: float = 30.0) -> None:
        self.api = api
        self.context = context
        self.timeout = timeout
        self.connect_timeout = CONNECT_TIMEOUT  # a connection and its TLS handshake (tui: 15)
        self.server = str(api.configuration.host)
        self.on_reply: Callable[[Any], None] | None = None  # each 2xx reply (the console: Date)

    def shorten_reads(self, seconds: float) -> None:
        """Wait at most `seconds` for answers from now on (long-running commands: `kube.retry`)."""
        self.timeout = min(self.timeout, seconds)

    # -- transport ---------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, Any]] = (),
        body: Any = None,
        content_type: str | None = None,
        resource: r.Resource | None = None,
        name: str | None = None,
        namespace: str | None = None,
        verb: str = "read",
        read_timeout: float | None = -1,
        compressed: bool = False,
        stream: bool = False,
    ) -> Any:
        """Send one request; return the response (2xx) or raise a GryviaError.
        `compressed`: accept a gzip body (inflated as it is read). `stream`: the caller
        reads the body as it comes (`.response`, urllib3's); else the light client reads it
        whole on `http.client` (`StaticApiClient.fetch`; the official client: urllib3)."""
        call = self.api.call_api if stream else getattr(self.api, "fetch", self.api.call_api)

        headers = {"Accept": "application/json"}
        if compressed:
            headers["Accept-Encoding"] = "gzip"
        if content_type:
            headers["Content-Type"] = content_type
        timeout = (self.connect_timeout, self.timeout if read_timeout == -1 else read_timeout)

        def send() -> Any:
            request = self.api.param_serialize(
                method=method,
                resource_path=path,
                query_params=list(query),
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            return call(*request, _request_timeout=timeout)

        try:
            response = send_with_credentials(self.api.configuration, send)
        except Exception as exc:  # the transports' classes, looked up once one has failed
            if isinstance(exc, transport_exceptions()):
                raise translate_transport_error(exc, self.server) from None
            api_exception, config_exception = client_exceptions()
            if isinstance(exc, api_exception):
                raise translate_api_exception(
                    getattr(exc, "status", 0) or 0,
                    getattr(exc, "body", None),
                    resource=resource,
                    name=name,
                    namespace=namespace,
                ) from None
            if isinstance(exc, config_exception):
                raise KubeconfigError(f"cannot refresh credentials: {exc}") from None
            raise
        if not 200 <= response.status <= 299:
            response.read()
            raise translate_api_exception(
                response.status,
                response.data,
                resource=resource,
                name=name,
                namespace=namespace,
                verb=verb,
            )
        if self.on_reply is not None:
            self.on_reply(response)
        return response

    def _read(self, response: Any) -> bytes:
        try:
            response.read()
        except transport_exceptions() as exc:
            raise translate_transport_error(exc, self.server) from None
        return bytes(response.data or b"")

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        data = self._read(self._call(method, path, **kwargs))
        if not data:
            return {}
        try:
            return parse_reply(data)
        except ValueError as exc:
            raise GryviaError(f"the API server sent a reply that is not JSON: {exc}") from None

    def _object(
        self,
        method: str,
        res: r.Resource,
        name: str | None,
        namespace: str | None,
        path: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """The one object a call on `res` answers with, at `path` (default: the object `name`
        in `namespace`): {} when the reply is empty or not an object. Raises as `_call` does."""
        where = path or res.path(namespace, name)
        data = self._json(method, where, resource=res, name=name, namespace=namespace, **kwargs)
        return data if isinstance(data, dict) else {}

    # -- objects -----------------------------------------------------------------------------

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
        """List `res` in `namespace` (None: all namespaces, or cluster-scoped); the List object.

        With `limit` the server sends at most that many items and, when more remain,
        `metadata.continue`: pass it back as `continue_token` for the next page (an expired
        token raises ExpiredError). `resource_version="0"` lets the API server answer from its
        watch cache (any version, possibly a little old, as client-go's informers list
        first); the server may then ignore `limit`. None: the latest version (a consistent read).
        """
        query: list[tuple[str, Any]] = []
        if label_selector:
            query.append(("labelSelector", label_selector))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        if limit:
            query.append(("limit", limit))
        if continue_token:
            query.append(("continue", continue_token))
        elif resource_version is not None:
            query.append(("resourceVersion", resource_version))
        with selector_usage(label_selector):
            data = self._json(  # a list of thousands is ~20x smaller gzipped: fewer reads
                "GET",
                res.path(namespace),
                query=query,
                resource=res,
                namespace=namespace,
                compressed=True,
            )
        return data if isinstance(data, dict) else {"items": []}

    def watch_objects(
        self,
        res: r.Resource,
        namespace: str | None = None,
        *,
        resource_version: str = "",
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int = 240,
    ) -> Any:
        """Open a watch of `res` from `resource_version` (with bookmarks); the server ends it
        after `timeout_seconds`. Returns the streaming urllib3 response: one JSON watch event
        per line (`kube.watch.watch_events` parses them); `stop_stream` ends it from any
        thread. Raises GryviaError when the server refuses to open it.
        """
        query: list[tuple[str, Any]] = [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", timeout_seconds),
        ]
        query += [("resourceVersion", resource_version)] if resource_version else []
        query += [("labelSelector", label_selector)] if label_selector else []
        query += [("fieldSelector", field_selector)] if field_selector else []
        response = self._call(
            "GET",
            res.path(namespace),
            query=query,
            resource=res,
            namespace=namespace,
            verb="watch",
            read_timeout=timeout_seconds + 30,
            stream=True,
        )
        return response.response

    def list_bytes(
        self, res: r.Resource, namespace: str | None = None, *, label_selector: str | None = None
    ) -> bytes:
        """The List object exactly as the API server sent it (compact JSON bytes)."""
        query = [("labelSelector", label_selector)] if label_selector else []
        with selector_usage(label_selector):
            response = self._call(
                "GET", res.path(namespace), query=query, resource=res, namespace=namespace
            )
        return self._read(response) or b"{}"

    def items(
        self, res: r.Resource, namespace: str | None = None, **kw: Any
    ) -> list[dict[str, Any]]:
        """`list_objects(...)["items"]` with the kind and apiVersion filled in on every item."""
        items = self.list_objects(res, namespace, **kw).get("items") or []
        for item in items:
            item.setdefault("kind", res.kind)
            item.setdefault("apiVersion", res.api_version)
        return items

    def get(self, res: r.Resource, name: str, namespace: str | None = None) -> dict[str, Any]:
        """Read one object; NotFoundError when it does not exist."""
        return self._object("GET", res, name, namespace)

    def create(
        self,
        res: r.Resource,
        body: Mapping[str, Any],
        namespace: str | None,
        *,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Create an object; with `dry_run` the server checks it (webhooks too), keeps nothing."""
        query = [("dryRun", "All")] if dry_run else []
        name = (body.get("metadata") or {}).get("name")
        return self._object(
            "POST",
            res,
            name,
            namespace,
            res.path(namespace),
            query=query,
            body=dict(body),
            verb="create",
        )

    def dry_run_create(
        self, res: r.Resource, body: Mapping[str, Any], namespace: str | None
    ) -> tuple[dict[str, Any], list[str]]:
        """Create with `dryRun=All` (schema, CEL and admission webhooks run; nothing is kept):
        the object the server would store and the admission warnings it sent (`Warning`
        headers, code 299). A refusal raises like `create`."""
        name = (body.get("metadata") or {}).get("name")
        response = self._call(
            "POST",
            res.path(namespace),
            query=[("dryRun", "All")],
            body=dict(body),
            resource=res,
            name=name,
            namespace=namespace,
            verb="create",
        )
        response.read()
        found_headers = reply_headers(response)
        headers = list(found_headers.getlist("Warning")) if found_headers is not None else []
        data = parse_reply(response.data) if response.data else {}
        return (data if isinstance(data, dict) else {}), warning_texts(headers)

    def merge_patch(
        self, res: r.Resource, name: str, namespace: str | None, patch: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Apply a JSON merge patch to an object and return it."""
        kind = "application/merge-patch+json"
        return self._object(
            "PATCH", res, name, namespace, body=dict(patch), content_type=kind, verb="patch"
        )

    def apply(
        self,
        res: r.Resource,
        body: Mapping[str, Any],
        namespace: str | None = None,
        *,
        field_manager: str = FIELD_MANAGER,
        force: bool = True,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Server-side apply `body` (created when missing) as `field_manager`; returns it stored."""
        name = str((body.get("metadata") or {}).get("name") or "")
        query: list[tuple[str, Any]] = [("fieldManager", field_manager)]
        query += [("force", "true")] if force else []  # take over others' fields
        query += [("dryRun", "All")] if dry_run else []  # store nothing
        kind = "application/apply-patch+yaml"
        return self._object(
            "PATCH",
            res,
            name,
            namespace,
            query=query,
            body=dict(body),
            content_type=kind,
            verb="apply",
        )

    def delete(self, res: r.Resource, name: str, namespace: str | None) -> dict[str, Any]:
        """Delete an object (children are garbage-collected in the background)."""
        options = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        return self._object("DELETE", res, name, namespace, body=options, verb="delete")

    def pod_log(
        self,
        pod: str,
        namespace: str,
        *,
        container: str | None = None,
        tail: int | None = None,
        timestamps: bool = False,
        follow: bool = False,
        since_time: str | None = None,
        previous: bool = False,
    ) -> Any:
        """Open a pod's log; returns the streaming urllib3 response (`stream_lines` reads it,
        `stop_stream` ends it from any thread). `since_time` (RFC 3339) starts at the lines
        written at or after it, instead of `tail`. `previous` reads the log of the container's
        previous instance (before its last restart; the API server answers 400 when there is
        none)."""
        response = self._call(
            "GET",
            r.POD.path(namespace, pod, "log"),
            query=pod_log_query(container, tail, timestamps, follow, since_time, previous),
            resource=r.POD,
            name=pod,
            namespace=namespace,
            read_timeout=None if follow else self.timeout,
            stream=True,
        )
        return response.response

    def pod_proxy_get(self, pod: str, namespace: str, port: int, path: str) -> bytes:
        """GET `path` from `port` of a pod through the API server's pod proxy (`pods/proxy`,
        e.g. an exporter's metrics); returns the body. Raises GryviaError."""
        where = r.POD.path(namespace, f"{pod}:{port}", f"proxy/{path.lstrip('/')}")
        return self._read(self._call("GET", where, resource=r.POD, name=pod, namespace=namespace))

    def served_resources(self, group_version: str) -> set[str] | None:
        """Plural names served under `group/version` (discovery); None when not served."""
        from gryvia_cli.errors import NotFoundError, NotInstalledError

        try:
            data = self._json("GET", f"/apis/{group_version}")
        except (NotFoundError, NotInstalledError):
            return None
        return {str(x.get("name")) for x in data.get("resources") or [] if "/" not in x["name"]}

    def whoami(self) -> tuple[str, tuple[str, ...]]:
        """(username, groups) of the kubeconfig user as the API server authenticates it
        (`kube.whoami.self_subject_review`; NotInstalledError before Kubernetes 1.28)."""
        from gryvia_cli.kube.whoami import self_subject_review

        info = self_subject_review(self)
        return info["username"], tuple(info["groups"])

    def server_version(self) -> dict[str, Any]:
        """The API server's `/version` document (gitVersion, platform, ...)."""
        data = self._json("GET", "/version")
        return data if isinstance(data, dict) else {}
