"""Evict one pod through the Eviction API (`POST .../pods/NAME/eviction`, policy/v1), the
way `kubectl drain` does: the API server deletes the pod only when no PodDisruptionBudget
forbids it, and answers 429 when one does (`gryvia maintenance start --drain`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gryvia_cli.core.maintenance import Outcome, PodRef, refusal_text
from gryvia_cli.kube import resources as r

if TYPE_CHECKING:
    from gryvia_cli.kube.access import KubeAccess


def evict_pod(access: KubeAccess, pod: PodRef) -> Outcome:
    """Ask the API server to evict `pod`. Returns Outcome `evicted` (accepted: the pod is
    being deleted gracefully), `gone` (404: it no longer exists), `refused` (429: a
    disruption budget allows no disruption now, retry later; `budget` names it) or `failed`
    (500 naming a budget: e.g. the pod matches two budgets, which the Eviction API refuses
    for good). Other errors raise GryviaError like every call of `KubeAccess` (403: the
    kubeconfig user may not create `pods/eviction`)."""
    from gryvia_cli.errors import ApiError, NotFoundError
    from gryvia_cli.kube.errors import ServerBusyError, status_of

    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": pod.name, "namespace": pod.namespace},
    }
    try:
        access._json(
            "POST",
            r.POD.path(pod.namespace, pod.name, "eviction"),
            body=body,
            content_type="application/json",
            resource=r.POD,
            name=pod.name,
            namespace=pod.namespace,
            verb="evict",
        )
    except NotFoundError:
        return Outcome("gone")
    except ServerBusyError as exc:
        budget, text = refusal_text(status_of(exc.details[0] if exc.details else ""), pod.namespace)
        return Outcome("refused", budget, text or exc.message)
    except ApiError as exc:
        status = status_of(exc.details[0] if exc.details else "")
        if status.get("code") == 500 and "budget" in str(status.get("message") or "").lower():
            budget, text = refusal_text(status, pod.namespace)
            return Outcome("failed", budget, text)
        raise
    return Outcome("evicted")
