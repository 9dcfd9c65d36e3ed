"""Are the cluster's Gryvia CRDs as new as this operator?

A chart upgrade applies the CRDs of `charts/gryvia/templates/crds` with the release; CRDs
applied by hand, or kept by an older release, can lag behind. An object field the served CRD
lacks is pruned by the API server without an error, so an operator writing it would lose it
silently. `schema_gaps` is pure: the property paths of this operator's generated CRD
(`api.crd.generate`) that the served one lacks. `stale_crds` reads each CRD and, at start,
lets the operator refuse to run with one line per old or missing CRD.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gryvia_operator.controller.kubeapi import NotFound

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
FIX = "upgrade the chart (helm upgrade) or apply charts/gryvia/templates/crds"


def _paths(schema: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    """Every property path of an OpenAPI v3 schema, dotted (`spec.resources.gpus`); array
    items' properties continue the array's path (`spec.steps.name`)."""
    for name, sub in (schema.get("properties") or {}).items():
        path = f"{prefix}{name}"
        yield path
        yield from _paths(sub, f"{path}.")
        items = sub.get("items")
        if isinstance(items, Mapping):
            yield from _paths(items, f"{path}.")


def _served_schema(crd: Mapping[str, Any], version: str) -> Mapping[str, Any]:
    for v in (crd.get("spec") or {}).get("versions") or []:
        if v.get("name") == version:
            return ((v.get("schema") or {}).get("openAPIV3Schema")) or {}
    return {}


def schema_gaps(served: Mapping[str, Any], wanted: Mapping[str, Any]) -> list[str]:
    """Property paths of `wanted`'s storage version that `served` (a CRD object read from the
    cluster) lacks, sorted; a version `served` does not have at all is `<version> (not served)`.
    Both are CustomResourceDefinition dicts."""
    gaps: list[str] = []
    for version in wanted["spec"]["versions"]:
        name = version["name"]
        have = _served_schema(served, name)
        if not have:
            gaps.append(f"{name} (not served)")
            continue
        want = version["schema"]["openAPIV3Schema"]
        gaps += sorted(set(_paths(want)) - set(_paths(have)))
    return gaps


def describe(name: str, gaps: list[str], limit: int = 5) -> str:
    """One line naming the old CRD, its first missing fields and the fix."""
    shown = ", ".join(gaps[:limit]) + (
        f" and {len(gaps) - limit} more" if len(gaps) > limit else ""
    )
    return f"CRD {name} is older than this operator (it lacks {shown}): {FIX}"


async def stale_crds(api: Any, wanted: list[dict[str, Any]]) -> list[str]:
    """One line per CRD of `wanted` that the cluster lacks or serves with fewer fields.
    `api` is a KubeApi; raises KubeError when CRDs cannot be read."""
    lines: list[str] = []
    for crd in wanted:
        name = crd["metadata"]["name"]
        try:
            served = await api.get_path(f"{CRD_PATH}/{name}")
        except NotFound:
            lines.append(f"CRD {name} is not installed: {FIX}")
            continue
        gaps = schema_gaps(served, crd)
        if gaps:
            lines.append(describe(name, gaps))
    return lines
