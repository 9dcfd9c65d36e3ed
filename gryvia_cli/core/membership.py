"""Tenant membership edits for `gryvia tenant add-member|remove-member` (pure).

Each function takes the tenant's stored `spec` (a mapping, as the API server returned it) and
returns a `MembershipChange`: the JSON merge patch of `spec` that makes the edit (None when
the tenant already is that way, so the commands are idempotent) and the sentence saying what
happened. Entries are kept as stored (unknown fields, `joinedAt`); only the edited one moves.

Rules (docs/operator.md, "Tenancy and quotas"): `spec.members[]` are users with a role each
(admin, member or viewer); `spec.oidcGroups[]` all share one role, `spec.oidcGroupRole`
(viewer when unset). The operator turns both into RoleBindings `gryvia-tenant-<role>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

ROLES = ("admin", "member", "viewer")
DEFAULT_ROLE = "viewer"
MAX_NAME = 253


@dataclass(frozen=True)
class MembershipChange:
    """The `spec` merge patch of an edit (None: nothing to change) and what it did."""

    patch: dict[str, Any] | None
    message: str


def role_problem(role: str) -> str | None:
    """Why `role` is not a tenant role (the message names the allowed ones), or None."""
    if role in ROLES:
        return None
    return f'--role "{role}" is not a tenant role: use one of {", ".join(ROLES)}'


def name_problem(name: str, what: str) -> str | None:
    """Why `name` cannot be a user or group name (`what`: "user" or "group"), or None: it
    must be non-empty, at most 253 characters, without surrounding blanks."""
    if not name or name != name.strip():
        return f'{what} name "{name}" is empty or has blanks around it'
    if len(name) > MAX_NAME:
        return f"{what} name is {len(name)} characters long; at most {MAX_NAME} are allowed"
    return None


def _members(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [dict(m) for m in spec.get("members") or [] if isinstance(m, Mapping)]


def _role_of(entry: Mapping[str, Any]) -> str:
    return str(entry.get("role") or DEFAULT_ROLE)


def add_member(
    spec: Mapping[str, Any], tenant: str, user: str, role: str, now: datetime
) -> MembershipChange:
    """Add `user` with `role` (joinedAt `now`, UTC), or change the role of a member already
    there (joinedAt kept); nothing when the user already has that role. A user listed twice
    is merged into one entry."""
    members = _members(spec)
    mine = [m for m in members if m.get("username") == user]
    if len(mine) == 1 and _role_of(mine[0]) == role:
        return MembershipChange(
            None, f"{user} is already in tenant {tenant} as {role}; nothing changed"
        )
    if mine:
        first = mine[0]
        was = _role_of(first)
        kept = [m for m in members if m.get("username") != user or m is first]
        first["role"] = role
        if was == role:
            message = f"{user} is in tenant {tenant} as {role} (duplicate entries merged)"
        else:
            message = f"{user} in tenant {tenant}: role changed from {was} to {role}"
        return MembershipChange({"members": kept}, message)
    joined = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    members.append({"username": user, "role": role, "joinedAt": joined})
    return MembershipChange({"members": members}, f"{user} added to tenant {tenant} as {role}")


def remove_member(spec: Mapping[str, Any], tenant: str, user: str) -> MembershipChange:
    """Remove every entry of `user`; nothing when the user is not a member."""
    members = _members(spec)
    gone = [m for m in members if m.get("username") == user]
    if not gone:
        return MembershipChange(None, f"{user} is not in tenant {tenant}; nothing changed")
    kept = [m for m in members if m.get("username") != user]
    was = _role_of(gone[0])
    return MembershipChange(
        {"members": kept or None}, f"{user} removed from tenant {tenant} (was {was})"
    )


def group_role(spec: Mapping[str, Any]) -> str:
    """The role every OIDC group of the tenant gets: `oidcGroupRole`, viewer when unset."""
    return str(spec.get("oidcGroupRole") or DEFAULT_ROLE)


def add_group(
    spec: Mapping[str, Any], tenant: str, group: str, role: str | None
) -> MembershipChange:
    """Add OIDC group `group`; with `role`, set `oidcGroupRole` (which every group of the
    tenant shares: the message names the others whose role changes too). Nothing when the
    group is there and the role already is `role` (or none was given)."""
    groups = [str(g) for g in spec.get("oidcGroups") or []]
    current = group_role(spec)
    patch: dict[str, Any] = {}
    if group not in groups:
        patch["oidcGroups"] = [*groups, group]
    if role is not None and role != current:
        patch["oidcGroupRole"] = role
    new_role = role or current
    if not patch:
        return MembershipChange(
            None, f"group {group} is already in tenant {tenant} as {new_role}; nothing changed"
        )
    if group in groups:
        message = f"OIDC groups of tenant {tenant}: role changed from {current} to {new_role}"
    else:
        message = f"group {group} added to tenant {tenant} as {new_role}"
    others = [g for g in groups if g != group]
    if others and new_role != current:
        message += f" (also for {', '.join(others)}: OIDC groups share one role)"
    return MembershipChange(patch, message)


def remove_group(spec: Mapping[str, Any], tenant: str, group: str) -> MembershipChange:
    """Remove OIDC group `group`; nothing when the tenant does not list it."""
    groups = [str(g) for g in spec.get("oidcGroups") or []]
    if group not in groups:
        return MembershipChange(None, f"group {group} is not in tenant {tenant}; nothing changed")
    kept = [g for g in groups if g != group]
    return MembershipChange(
        {"oidcGroups": kept or None},
        f"group {group} removed from tenant {tenant} (was {group_role(spec)})",
    )
