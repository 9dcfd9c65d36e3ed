"""Who the API server says the caller is: a SelfSubjectReview (authentication.k8s.io/v1)."""

from __future__ import annotations

from typing import Any

from gryvia_cli.kube.access import KubeAccess

REVIEW_PATH = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


def self_subject_review(access: KubeAccess) -> dict[str, Any]:
    """Create a SelfSubjectReview and return its `status.userInfo`: `username`, `uid`,
    `groups` (list) and `extra`, as the API server authenticated this request.

    Raises GryviaError (unauthorized, unreachable, forbidden) like every call of `KubeAccess`.
    """
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    reply = access._json(
        "POST", REVIEW_PATH, body=body, content_type="application/json", verb="create"
    )
    info = (reply.get("status") or {}).get("userInfo") or {}
    return {
        "username": info.get("username", ""),
        "uid": info.get("uid", ""),
        "groups": list(info.get("groups") or []),
        "extra": dict(info.get("extra") or {}),
    }
