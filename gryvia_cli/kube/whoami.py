"""Who the API server says the caller is: a SelfSubjectReview (authentication.k8s.io/v1,
served since Kubernetes 1.28). `gryvia auth whoami` prints it; `--mine` and `squeue --me`
filter by its username (through `KubeAccess.whoami`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gryvia_cli.kube.access import KubeAccess

REVIEW_PATH = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


def self_subject_review(access: KubeAccess) -> dict[str, Any]:
    """Create a SelfSubjectReview and return its `status.userInfo`: `username`, `uid`,
    `groups` (list) and `extra`, as the API server authenticated this request.

    Raises NotInstalledError naming the API when the server does not serve it, else
    GryviaError (unauthorized, unreachable, forbidden) like every call of `KubeAccess`.
    """
    from gryvia_cli.errors import NotFoundError, NotInstalledError

    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    try:
        reply = access._json(
            "POST", REVIEW_PATH, body=body, content_type="application/json", verb="create"
        )
    except (NotFoundError, NotInstalledError):
        raise NotInstalledError(
            "the API server does not serve SelfSubjectReview (authentication.k8s.io/v1, "
            "Kubernetes 1.28+), so the current user is unknown",
            hint="name the user with -u USER",
        ) from None
    info = ((reply or {}).get("status") or {}).get("userInfo") or {}
    return {
        "username": str(info.get("username") or ""),
        "uid": str(info.get("uid") or ""),
        "groups": [str(g) for g in info.get("groups") or []],
        "extra": dict(info.get("extra") or {}),
    }
