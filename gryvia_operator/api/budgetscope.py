"""Which jobs and usage records a GryviaBudget covers: one rule for the budget controller, its
enforcement, the admission gate and `gryvia submit`'s budget impact (docs/budgets.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gryvia_operator.api.attribution import tenant_namespace

if TYPE_CHECKING:  # only annotations: callers hold the validated models
    from gryvia_operator.api.budget import GryviaBudget


@dataclass(frozen=True)
class Scope:
    """Which jobs and usage records a budget covers: those of its namespaces and tenants, or
    of its users (the submitter a job's webhook stamp names, a record's `spec.user`) or its
    projects (label gryvia.io/project, a record's `spec.project`)."""

    namespaces: frozenset[str]
    tenants: frozenset[str]
    unsupported: str = ""
    """Why the scope cannot be measured (empty when it can)."""
    users: frozenset[str] = frozenset()
    projects: frozenset[str] = frozenset()

    def covers_job(self, namespace: str, user: str = "", project: str = "") -> bool:
        """True when a job in `namespace`, submitted by `user`, of `project` is in scope."""
        return (
            namespace in self.namespaces
            or (bool(user) and user in self.users)
            or (bool(project) and project in self.projects)
        )

    def covers_record(self, namespace: str, tenant: str, user: str = "", project: str = "") -> bool:
        """True when a usage record (its namespace, spec.tenant, spec.user and spec.project)
        is in scope."""
        return tenant in self.tenants or self.covers_job(namespace, user, project)


def resolve_scope(
    budget: GryviaBudget, quota_teams: Mapping[str, Iterable[str]], tenants: Iterable[str]
) -> Scope:
    """The scope of `budget`: namespace -> that namespace; tenant -> `tenant-<name>` and the
    records of that tenant; team -> the namespaces of the GryviaQuotas of that team (`quota_teams`:
    team -> namespaces) plus the tenant of that name when it exists, and records attributed
    to that team (their spec.tenant); user -> the jobs that user submitted and their records,
    in every namespace; project -> the jobs labelled gryvia.io/project=<name> and their
    records, in every namespace."""
    kind, name = budget.spec.scope.type, budget.spec.scope.name
    if kind == "user":
        return Scope(frozenset(), frozenset(), users=frozenset({name}))
    if kind == "project":
        return Scope(frozenset(), frozenset(), projects=frozenset({name}))
    if kind == "namespace":
        return Scope(frozenset({name}), frozenset())
    if kind == "tenant":
        return Scope(frozenset({tenant_namespace(name)}), frozenset({name}))
    namespaces = set(quota_teams.get(name) or ())
    if name in set(tenants):
        namespaces.add(tenant_namespace(name))
    return Scope(frozenset(namespaces), frozenset({name}))
