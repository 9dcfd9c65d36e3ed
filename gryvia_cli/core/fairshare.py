"""The Kueue fair-share view of `gryvia quota`: per team and GPU type the nominal quota, the
GPUs used, borrowed from the cohort and lent to it (pure).

Source: the ClusterQueues `gryvia-<team>` the operator keeps with the Kueue integration
(docs/kueue.md): `spec.resourceGroups[].flavors[].resources[]` (nominalQuota, lendingLimit),
`status.flavorsReservation` (quota held by workloads with reserved quota, admitted or not;
`status.flavorsUsage`, quota of admitted workloads, when the reservation is absent), and the
ResourceFlavors' node label `gryvia.io/gpu` (the GPU type of a flavor).

Kueue records what a ClusterQueue borrows (`borrowed`), not from whom. Lent is therefore
derived: in each cohort and flavor, the GPUs the borrowers hold are shared among the teams with
unused lendable quota (nominal - used, at most the lending limit) in proportion to it, rounded
so that the shares add up (largest remainders first, then team name).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from gryvia_operator.api.names import LABEL_GPU, LABEL_TENANT

GPU_RESOURCE = "nvidia.com/gpu"
DEFAULT_FLAVOR = "gryvia-default"
ANY_TYPE = "any"
"""The GPU type shown for a flavor without the gryvia.io/gpu node label (gryvia-default)."""


@dataclass(frozen=True)
class FairShareRow:
    """One team's GPUs of one flavor, in GPUs (integers; Kueue quantities of nvidia.com/gpu).

    `lendable`: the part of the unused nominal quota other teams may borrow (the lending
    limit caps it); `lent`: the share of the cohort's borrowed GPUs counted against it."""

    cohort: str
    team: str
    cluster_queue: str
    gpu_type: str
    flavor: str
    nominal: int
    used: int
    borrowed: int
    lendable: int
    lent: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON shape of one `gryvia quota --fair-share -o json` item."""
        return {
            "cohort": self.cohort or None,
            "team": self.team,
            "clusterQueue": self.cluster_queue,
            "gpuType": self.gpu_type,
            "flavor": self.flavor,
            "nominal": self.nominal,
            "used": self.used,
            "borrowed": self.borrowed,
            "lent": self.lent,
            "lendable": self.lendable,
        }


def gpu_count(quantity: Any) -> int:
    """A Kueue quantity of GPUs as an int ("16", 16, "1k" -> 1000; unparsable -> 0)."""
    text = str(quantity if quantity is not None else "0").strip()
    factor = 1
    if text.endswith("k"):
        text, factor = text[:-1], 1000
    try:
        return int(float(text) * factor)
    except ValueError:
        return 0


def flavor_gpu_types(flavors: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """flavor name -> GPU type from the ResourceFlavors' node label LABEL_GPU (spec.nodeLabels)."""
    out: dict[str, str] = {}
    for flavor in flavors:
        name = str((flavor.get("metadata") or {}).get("name") or "")
        gpu = ((flavor.get("spec") or {}).get("nodeLabels") or {}).get(LABEL_GPU)
        if name and gpu:
            out[name] = str(gpu)
    return out


def _gpu_status(status: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """flavor -> (total, borrowed) GPUs from flavorsReservation, else flavorsUsage."""
    entries = status.get("flavorsReservation") or status.get("flavorsUsage") or []
    out: dict[str, tuple[int, int]] = {}
    for flavor in entries:
        for res in flavor.get("resources") or []:
            if res.get("name") == GPU_RESOURCE:
                out[str(flavor.get("name"))] = (
                    gpu_count(res.get("total")),
                    gpu_count(res.get("borrowed")),
                )
    return out


def _team(cq: Mapping[str, Any]) -> str:
    meta = cq.get("metadata") or {}
    team = (meta.get("labels") or {}).get(LABEL_TENANT)
    name = str(meta.get("name") or "")
    return str(team) if team else name.removeprefix("gryvia-")


def queue_rows(cq: Mapping[str, Any], gpu_types: Mapping[str, str]) -> list[FairShareRow]:
    """The rows of one ClusterQueue: one per flavor that has a GPU quota, is used, or is the
    only flavor (a tenant without per-type limits has only gryvia-default); lent is 0 here."""
    spec, status = cq.get("spec") or {}, cq.get("status") or {}
    used = _gpu_status(status)
    cohort = str(spec.get("cohortName") or spec.get("cohort") or "")
    rows = []
    flavors = [f for group in spec.get("resourceGroups") or [] for f in group.get("flavors") or []]
    for flavor in flavors:
        name = str(flavor.get("name") or "")
        resources = flavor.get("resources") or []
        gpu = next((r for r in resources if r.get("name") == GPU_RESOURCE), None)
        if gpu is None:
            continue
        nominal = gpu_count(gpu.get("nominalQuota"))
        total, borrowed = used.get(name, (0, 0))
        if nominal == 0 and total == 0 and len(flavors) > 1:
            continue
        unused = max(nominal - total, 0)
        limit = gpu.get("lendingLimit")
        lendable = unused if limit is None else min(unused, gpu_count(limit))
        rows.append(
            FairShareRow(
                cohort,
                _team(cq),
                str((cq.get("metadata") or {}).get("name") or ""),
                gpu_types.get(name, ANY_TYPE if name == DEFAULT_FLAVOR else name),
                name,
                nominal,
                total,
                borrowed,
                lendable,
            )
        )
    return rows


def _shares(total: int, weights: list[tuple[str, int]]) -> dict[str, int]:
    """`total` split in proportion to the weights, integers adding up to min(total, sum)."""
    whole = sum(w for _, w in weights)
    if whole <= 0 or total <= 0:
        return {}
    total = min(total, whole)
    exact = [(key, total * w / whole) for key, w in weights]
    out = {key: int(share) for key, share in exact}
    left = total - sum(out.values())
    by_remainder = sorted(exact, key=lambda kv: (-(kv[1] - int(kv[1])), kv[0]))
    for key, _ in by_remainder[:left]:
        out[key] += 1
    return out


def fair_share(
    cluster_queues: Iterable[Mapping[str, Any]], flavors: Iterable[Mapping[str, Any]]
) -> list[FairShareRow]:
    """Every team's rows, sorted by cohort, team and GPU type, with `lent` filled in (see the
    module docstring: the cohort's borrowed GPUs of a flavor shared among its lenders)."""
    gpu_types = flavor_gpu_types(flavors)
    rows = [row for cq in cluster_queues for row in queue_rows(cq, gpu_types)]
    groups: dict[tuple[str, str], list[FairShareRow]] = {}
    for row in rows:
        if row.cohort:
            groups.setdefault((row.cohort, row.flavor), []).append(row)
    lent: dict[tuple[str, str], int] = {}
    for (_cohort, flavor), members in groups.items():
        borrowed = sum(m.borrowed for m in members)
        shares = _shares(borrowed, [(m.cluster_queue, m.lendable) for m in members])
        for queue, share in shares.items():
            lent[(queue, flavor)] = share
    out = [replace(row, lent=lent.get((row.cluster_queue, row.flavor), 0)) for row in rows]
    return sorted(out, key=lambda r: (r.cohort, r.team, r.gpu_type.lower(), r.flavor))


def borrowing_notes(rows: Iterable[FairShareRow]) -> list[str]:
    """Who borrows from whom, one sentence per borrower and GPU type, e.g. `vision borrows 8
    H100 GPUs in cohort gryvia, lent by nlp (8)`."""
    rows = list(rows)
    notes = []
    for row in rows:
        if not row.borrowed:
            continue
        lenders = [
            f"{r.team} ({r.lent})"
            for r in rows
            if r.lent and r.cohort == row.cohort and r.flavor == row.flavor
        ]
        text = f"{row.team} borrows {row.borrowed} {row.gpu_type} GPUs in cohort {row.cohort}"
        notes.append(text + (f", lent by {', '.join(lenders)}" if lenders else ""))
    return notes


FAIR_SHARE_COLUMNS = ("TEAM", "GPU TYPE", "NOMINAL", "USED", "BORROWED", "LENT", "COHORT")


def fair_share_cells(row: FairShareRow) -> list[str]:
    """The table cells of a row, in FAIR_SHARE_COLUMNS order."""
    return [
        row.team,
        row.gpu_type,
        str(row.nominal),
        str(row.used),
        str(row.borrowed),
        str(row.lent),
        row.cohort or "-",
    ]
