"""`--mine` and `-u USER`: the submitters a job list is narrowed to (`core.jobs.by_submitter`
does the narrowing)."""

from __future__ import annotations

from collections.abc import Sequence

from gryvia_cli.cli.session import Session


def wanted_users(state: Session, mine: bool, users: Sequence[str] | None) -> frozenset[str] | None:
    """The usernames `-u` names (repeated or comma-separated) plus, with `--mine`, the
    current user as the API server authenticates the kubeconfig user (a SelfSubjectReview:
    `KubeAccess.whoami`); None when neither option is given (no filter)."""
    wanted = {u.strip() for value in users or [] for u in value.split(",") if u.strip()}
    if mine:
        username, _ = state.access().whoami()
        wanted.add(username)
    return frozenset(wanted) if (mine or wanted) else None
