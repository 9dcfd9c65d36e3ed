"""Listing "all namespaces" for a user who may not list across the cluster.

A tenant member's RoleBindings are in their tenants' namespaces only, so a cluster-wide LIST is
forbidden to them (kubectl answers `Forbidden`). Gryvia shows instead what they can read: the
namespace of every GryviaTenant (the chart's `gryvia-tenant-directory` ClusterRole lets every
authenticated user list tenants) plus the context's namespace, each listed on its own, skipping
the ones they cannot read, with one warning naming what was shown.
"""

from __future__ import annotations

from typing import Any

from gryvia_cli.errors import ForbiddenError, GryviaError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import warn


def readable_namespaces(access: Any, fallback: str | None) -> list[str]:
    """Namespaces worth trying when a cluster-wide list is forbidden: `fallback` (the context's
    namespace) and every tenant's `tenant-<name>`, in that order, without repeats. Tenants that
    cannot be read (no directory role) leave just the fallback."""
    from gryvia_operator.api.attribution import tenant_namespace

    names = [fallback] if fallback else []
    try:
        tenants = access.items(r.TENANT)
    except GryviaError:
        tenants = []
    names += [tenant_namespace(t["metadata"]["name"]) for t in tenants]
    return list(dict.fromkeys(names))


def list_readable(
    access: Any, res: r.Resource, fallback: str | None, **selectors: Any
) -> tuple[dict[str, Any], list[str] | None]:
    """List `res` in all namespaces; when that is forbidden, in each readable namespace.

    Returns (the List object, None) for a cluster-wide read, or (a List merging the namespaces
    read, their names) with a warning saying so. Raises ForbiddenError when not one namespace
    could be read, and any other GryviaError of the reads.
    """
    from gryvia_cli.views.reads import concurrently

    try:
        return access.list_objects(res, None, **selectors), None
    except ForbiddenError as exc:
        refused = exc
    candidates = readable_namespaces(access, fallback)

    def one(ns: str) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = access.list_objects(res, ns, **selectors)
        except ForbiddenError:
            return None
        return data

    results = concurrently(*(lambda ns=ns: one(ns) for ns in candidates))
    read = [ns for ns, got in zip(candidates, results, strict=True) if got is not None]
    if not read:
        raise refused
    plural = r.NOUNS.get(res, (res.kind.lower(), res.plural))[1]
    warn(
        f"you may not list {plural} in all namespaces; showing the namespaces you can read: "
        + ", ".join(read)
    )
    items = [item for got in results if got for item in got.get("items") or []]
    merged = {"apiVersion": res.api_version, "kind": f"{res.kind}List", "metadata": {}}
    return {**merged, "items": items}, read
