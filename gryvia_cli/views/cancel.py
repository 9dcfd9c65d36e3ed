"""Cancelling a job as `gryvia cancel` does it: the annotation gryvia.io/cancel="true" that the
operator acts on (also what the `cancel` tool of `gryvia mcp` does)."""

from __future__ import annotations

from typing import Any

from gryvia_cli.kube import resources as r


def request_cancel(access: Any, name: str, namespace: str) -> str | None:
    """Ask the operator to stop job `name` in `namespace`; return None when asked, else why
    nothing was done (the job has already ended: `core.jobs.nothing_to_cancel`). Raises
    NotFoundError when there is no such job, ForbiddenError when RBAC denies the patch."""
    from gryvia_cli.core.jobs import nothing_to_cancel, summarize_job
    from gryvia_operator.api.names import ANNOTATION_CANCEL

    summary = summarize_job(access.get(r.AIJOB, name, namespace))
    if summary.terminal:
        return nothing_to_cancel(name, summary.phase)
    patch = {"metadata": {"annotations": {ANNOTATION_CANCEL: "true"}}}
    access.merge_patch(r.AIJOB, name, namespace, patch)
    return None
