"""Translate the kubernetes client's and urllib3's exceptions into GryviaError subclasses."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gryvia_cli.errors import (
    ApiError,
    ClusterUnreachableError,
    ConflictError,
    ForbiddenError,
    GryviaError,
    NotFoundError,
    NotInstalledError,
    RejectedError,
    UsageError,
)
from gryvia_cli.kube.resources import Resource
from gryvia_cli.kube.resources import noun as noun_of
from gryvia_operator.api.names import GROUP


class ExpiredError(ApiError):
    """410 Gone: the resourceVersion of a watch, or the continue token of a paged list, is
    older than what the API server keeps; list again to get a fresh one."""


class ConnectionLostError(ClusterUnreachableError):
    """A request got no answer: the connection was refused, reset, cut or timed out.
    Transient (see `is_transient`): the same request may work a moment later."""


class TimedOutError(ConnectionLostError):
    """A request's own timeout ended its wait (for a connection, a TLS handshake or an
    answer): the server may be slow rather than gone (`core.health.after_probe`)."""


class ServerBusyError(ApiError):
    """The API server (or a proxy before it) answered 429, 500, 502, 503 or 504: it cannot
    serve the request now. Transient (see `is_transient`)."""


BUSY_STATUSES = frozenset({429, 500, 502, 503, 504})


def is_transient(exc: BaseException) -> bool:
    """True for failures a long-running command waits out (retrying with back-off): no
    answer at all (ConnectionLostError), or an answer saying "not now" (ServerBusyError).
    False for answers that will not change by retrying (401, 403, 404, 409, 410, 422, a
    failed TLS verification) and for anything that is not a GryviaError."""
    return isinstance(exc, ConnectionLostError | ServerBusyError)


def status_of(body: Any) -> dict[str, Any]:
    """Parse an API error body as a `Status` object; {} when it is not one."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body.strip().startswith("{"):
        return {}
    try:
        parsed = json.loads(body)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def translate_api_exception(
    status: int,
    body: Any,
    *,
    resource: Resource | None,
    name: str | None = None,
    namespace: str | None = None,
    verb: str = "read",
) -> GryviaError:
    """Map an HTTP error from the API server to a GryviaError with a hint.

    404 on a named object is NotFoundError; 404 whose body is not a `NotFound` Status (the
    path is not served) is NotInstalledError for Gryvia kinds; 401/403 are ForbiddenError,
    except admission webhook denials, which are RejectedError like 422; 410 is ExpiredError.
    """
    st = status_of(body)
    message = str(st.get("message") or "").strip()
    raw = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
    details = (raw.strip()[:2000],) if raw.strip() else ()
    kind = resource.kind if resource else "resource"
    noun = noun_of(resource) if resource else "object"
    where = f' in namespace "{namespace}"' if namespace and resource and resource.namespaced else ""
    if status == 404:
        served = st.get("reason") == "NotFound" and bool((st.get("details") or {}).get("name"))
        if name and served:
            hint = f"gryvia list {noun}s" + (f" -n {namespace}" if where else "")
            return NotFoundError(f'{noun} "{name}" not found{where}', hint=hint, details=details)
        if resource is not None and resource.group == GROUP:
            return NotInstalledError(f"{kind} is not available on this cluster", details=details)
        what = f'{noun} "{name}"' if name else f"{kind} objects"
        return NotFoundError(f"{what} not found{where}", details=details)
    if status in (401, 403):
        if "admission webhook" in message:
            return RejectedError(
                _strip_webhook(message), hint=_rejected_hint(resource), details=details
            )
        if status == 401:
            return ForbiddenError(
                "the API server did not accept your credentials (401 Unauthorized)",
                hint="refresh your login or token, then retry",
                details=details,
            )
        short = message or f"cannot {verb} {kind}"
        return ForbiddenError(f"forbidden: {short}", details=details)
    if status == 409:
        if name and verb == "create":
            return ConflictError(
                f'{noun} "{name}" already exists{where}',
                hint=f"pick another name, or delete it first: gryvia delete {noun} {name}",
                details=details,
            )
        return ConflictError(message or f"conflict on {noun} {name}", details=details)
    if status in (400, 422):
        text = _strip_webhook(message) or f"the API server rejected the {noun}"
        causes = tuple(
            cause
            for c in (st.get("details") or {}).get("causes") or []
            if isinstance(c, dict)
            for cause in [f"{c.get('field', '')}: {c.get('message', '')}".strip(": ")]
            if cause not in text  # a lone cause is already the message's tail
        )
        return RejectedError(text, hint=_rejected_hint(resource), causes=causes, details=details)
    if status == 410:
        text = message or "HTTP 410"
        return ExpiredError(f"the API server failed to {verb} {kind}: {text}", details=details)
    if status == 0:
        return ConnectionLostError(f"no response from the API server: {message or raw}")
    text = message or f"HTTP {status}"
    if status in BUSY_STATUSES:
        return ServerBusyError(f"the API server failed to {verb} {kind}: {text}", details=details)
    return ApiError(f"the API server failed to {verb} {kind}: {text}", details=details)


def _rejected_hint(resource: Resource | None) -> str:
    """Jobs come from manifests (`gryvia validate` checks them offline); other objects from
    a command's flags and arguments, which the message names."""
    if resource is not None and resource.kind == "GryviaAIJob":
        return "fix the manifest; `gryvia validate FILE` checks it offline"
    return "fix the field or argument the message names, then retry"


def _strip_webhook(message: str) -> str:
    marker = "denied the request: "
    if marker in message:
        return message.split(marker, 1)[1]
    return message


def translate_transport_error(exc: BaseException, server: str) -> GryviaError:
    """Map a connection-level failure to ClusterUnreachableError: a failed TLS verification
    as such (not transient), anything else (refused, reset, timed out, a handshake cut
    short) as ConnectionLostError."""
    reason = getattr(exc, "reason", None) or exc
    text = str(reason)
    if any(mark in text for mark in _TLS_VERIFY_MARKS):
        return ClusterUnreachableError(
            f"TLS verification of {server} failed",
            hint="the kubeconfig's certificate-authority does not match the server",
            causes=(text,),
        )
    short = text.split(": ")[-1] if ": " in text else text
    lost = TimedOutError if _timed_out(exc, reason) else ConnectionLostError
    return lost(f"cannot reach the API server at {server}", causes=(short,), details=(text,))


def _timed_out(*errors: object) -> bool:
    """True when one of `errors` (the exception, its `reason`) is a timeout: urllib3's
    (connect or read: a TLS handshake that takes too long is reported as a read timeout) or
    the socket's. urllib3's NewConnectionError (refused, no route) subclasses its connect
    timeout for old callers' sake: it is no timeout."""
    if "urllib3" not in sys.modules:  # the light client: socket/ssl errors only
        return any(isinstance(e, TimeoutError) for e in errors)
    from urllib3.exceptions import NewConnectionError
    from urllib3.exceptions import TimeoutError as Urllib3Timeout

    return any(
        isinstance(e, Urllib3Timeout | TimeoutError) and not isinstance(e, NewConnectionError)
        for e in errors
    )


_TLS_VERIFY_MARKS = ("CERTIFICATE_VERIFY_FAILED", "certificate verify failed", "doesn't match")
"""How urllib3/ssl word a certificate the client does not trust (or that names another host)."""


SELECTOR_HINT = (
    "-l/--selector takes label requirements joined by commas: key=value, key!=value, "
    "key in (a,b), key notin (a,b), key, !key"
)


@contextmanager
def selector_usage(label_selector: str | None) -> Iterator[None]:
    """Around a list with the user's `label_selector`: the API server's 400 for it (it names
    no option: "found '==', expected: ...") becomes a UsageError naming `-l/--selector`."""
    try:
        yield
    except RejectedError as exc:
        if not label_selector:
            raise
        raise UsageError(
            f"invalid label selector {label_selector!r}: {exc.message}", hint=SELECTOR_HINT
        ) from None


class _NeverRaised(Exception):
    """Stands in for the official client's exceptions while that client is not loaded."""


def transport_exceptions() -> tuple[type[Exception], ...]:
    """The exceptions of a request that got no complete answer: the light client's
    `lighthttp.TransportError` and, once urllib3 is loaded (streams, the official client),
    its `HTTPError`; catching them imports neither."""
    found: list[type[Exception]] = []
    if "gryvia_cli.kube.lighthttp" in sys.modules:
        from gryvia_cli.kube.lighthttp import TransportError

        found.append(TransportError)
    if "urllib3" in sys.modules:
        from urllib3.exceptions import HTTPError

        found.append(HTTPError)
    return tuple(found) or (_NeverRaised,)


def client_exceptions() -> tuple[type[Exception], type[Exception]]:
    """(ApiException, ConfigException) of the official client; stand-ins when it was never
    imported (the light client raises neither), so a request does not import it."""
    if "kubernetes" not in sys.modules:
        return _NeverRaised, _NeverRaised
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException

    return ApiException, ConfigException
