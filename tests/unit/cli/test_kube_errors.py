"""API error translation (no cluster)."""

from __future__ import annotations

import json

from gryvia_cli.errors import (
    ApiError,
    ClusterUnreachableError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    NotInstalledError,
    RejectedError,
)
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.errors import translate_api_exception, translate_transport_error


def status(code: int, reason: str, message: str, **details: object) -> bytes:
    return json.dumps(
        {
            "kind": "Status",
            "status": "Failure",
            "code": code,
            "reason": reason,
            "message": message,
            "details": details,
        }
    ).encode()


def test_not_found_object_vs_kind_not_served() -> None:
    body = status(
        404, "NotFound", 'gryviaaijobs.gryvia.io "x" not found', name="x", kind="gryviaaijobs"
    )
    err = translate_api_exception(404, body, resource=r.AIJOB, name="x", namespace="ml")
    assert isinstance(err, NotFoundError)
    assert (
        err.message == 'job "x" not found in namespace "ml"'
        and err.hint == "gryvia list jobs -n ml"
    )
    missing = translate_api_exception(
        404, b"404 page not found", resource=r.AIJOB, name="x", namespace="ml"
    )
    assert isinstance(missing, NotInstalledError)
    assert missing.message == "GryviaAIJob is not available on this cluster"
    assert missing.hint and missing.hint.startswith("install the chart")
    assert missing.details == ("404 page not found",)


def test_forbidden_unauthorized_and_webhook_denial() -> None:
    msg = 'gryviaaijobs.gryvia.io is forbidden: User "bob" cannot list resource "gryviaaijobs"'
    err = translate_api_exception(403, status(403, "Forbidden", msg), resource=r.AIJOB, verb="list")
    assert (
        isinstance(err, ForbiddenError)
        and err.hint == "your kubeconfig user lacks permission for this resource"
    )
    assert "bob" in err.message
    assert isinstance(translate_api_exception(401, b"", resource=r.AIJOB), ForbiddenError)
    denied = translate_api_exception(
        403,
        status(
            403,
            "Forbidden",
            'admission webhook "v.gryvia.io" denied the request: '
            "invalid GryviaAIJob: spec.image is required",
        ),
        resource=r.AIJOB,
    )
    assert (
        isinstance(denied, RejectedError)
        and denied.message == "invalid GryviaAIJob: spec.image is required"
    )


def test_conflict_invalid_and_server_errors() -> None:
    exists = translate_api_exception(
        409,
        status(409, "AlreadyExists", "exists"),
        resource=r.AIJOB,
        name="a",
        namespace="ml",
        verb="create",
    )
    assert (
        isinstance(exists, ConflictError)
        and "already exists" in exists.message
        and "gryvia delete job a" in (exists.hint or "")
    )
    invalid = translate_api_exception(
        422,
        status(
            422,
            "Invalid",
            'GryviaAIJob.gryvia.io "a" is invalid',
            causes=[{"field": "spec.gpus", "message": "must be >= 0"}],
        ),
        resource=r.AIJOB,
    )
    assert isinstance(invalid, RejectedError) and invalid.causes == ("spec.gpus: must be >= 0",)
    boom = translate_api_exception(
        500, status(500, "InternalError", "etcd down"), resource=r.AIJOB, verb="list"
    )
    assert isinstance(boom, ApiError) and "etcd down" in boom.message


def test_transport_errors_are_unreachable() -> None:
    class Refused(Exception):
        reason = ConnectionRefusedError(111, "Connection refused")

    err = translate_transport_error(Refused("x"), "https://10.0.0.1:6443")
    assert isinstance(err, ClusterUnreachableError)
    assert err.message == "cannot reach the API server at https://10.0.0.1:6443"
    assert err.hint == "check that the cluster is reachable (kubectl get nodes)"
    tls = translate_transport_error(Exception("[SSL: CERTIFICATE_VERIFY_FAILED] bad"), "https://x")
    assert "TLS verification" in tls.message


def test_a_lone_cause_already_in_the_message_is_not_repeated_and_the_hint_fits_the_kind() -> None:
    text = 'GryviaJobHook.gryvia.io "h[2]" is invalid: metadata.name: Invalid value: "h[2]": bad'
    cause = {"field": "metadata.name", "message": 'Invalid value: "h[2]": bad'}
    rejected = translate_api_exception(
        422, status(422, "Invalid", text, causes=[cause]), resource=r.JOBHOOK, verb="create"
    )
    assert isinstance(rejected, RejectedError)
    assert rejected.causes == ()
    assert "manifest" not in (rejected.hint or "")
    job = translate_api_exception(
        422, status(422, "Invalid", "x is invalid", causes=[cause]), resource=r.AIJOB
    )
    assert job.causes == ('metadata.name: Invalid value: "h[2]": bad',)
    assert "gryvia validate FILE" in (job.hint or "")
