"""Which jobs and usage records a GryviaBudget covers: one rule for the budget controller, its
enforcement, the admission gate and `gryvia submit`'s budget impact (docs/budgets.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.budget import GryviaBudget

UNSUPPORTED_SCOPES = frozenset({"user", "project"})
"""Scope types the metering does not count spend by yet (status reports ScopeUnsupported):
jobs record their submitter, but usage records do not carry it."""


@dataclass(frozen=True)
class Scope:
    """Which namespaces' jobs and records, and which tenants' records, a budget covers."""

    namespaces: frozenset[str]
    tenants: frozenset[str]
    unsupported: str = ""
    """Why the scope cannot be measured (empty when it can)."""

    def covers_namespace(self, namespace: str) -> bool:
        """True when jobs in `namespace` are in scope."""
        return namespace in self.namespaces

    def covers_record(self, namespace: str, tenant: str) -> bool:
        """True when a usage record (its namespace and spec.tenant) is in scope."""
        return namespace in self.namespaces or tenant in self.tenants


def resolve_scope(
    budget: GryviaBudget, quota_teams: Mapping[str, Iterable[str]], tenants: Iterable[str]
) -> Scope:
    """The scope of `budget`: namespace -> that namespace; tenant -> `tenant-<name>` and the
    records of that tenant; team -> the namespaces of the GryviaQuotas of that team (`quota_teams`:
    team -> namespaces) plus the tenant of that name when it exists, and records attributed
    to that team (their spec.tenant); user and project ->
    unsupported (jobs record neither yet)."""
    kind, name = budget.spec.scope.type, budget.spec.scope.name
    if kind in UNSUPPORTED_SCOPES:
        why = f"scope type {kind} is not supported yet: jobs record no {kind}"
        return Scope(frozenset(), frozenset(), why)
    if kind == "namespace":
        return Scope(frozenset({name}), frozenset())
    if kind == "tenant":
        return Scope(frozenset({tenant_namespace(name)}), frozenset({name}))
    namespaces = set(quota_teams.get(name) or ())
    if name in set(tenants):
        namespaces.add(tenant_namespace(name))
    return Scope(frozenset(namespaces), frozenset({name}))
