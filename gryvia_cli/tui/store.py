"""The TUI's copy of the cluster: objects per kind, kept current by batched watch updates.

Pure data (no Textual, no kubernetes). Watch threads turn raw objects into `Update`s with
`make_entry` (the costly part: summaries, slimming, validation); the UI thread applies a batch
with `ClusterStore.apply`. Derived views (GPU nodes, allocation) are cached per kind version.
A job's tenant follows the operator's rule (`api.attribution.tenant_of_object`) with the
GryviaTenants the store holds; `apply` re-attributes jobs when those tenants change.

The billing models (pydantic), the cost and the capacity cores are imported where first used
(validating such an object, a job's cost, the GPU nodes), not with this module: the console's
first frame needs none of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from gryvia_cli.core.jobs import JobSummary, summarize_job
from gryvia_cli.tui.kindnames import KINDS, Kind
from gryvia_operator.api.attribution import tenant_of_object

if TYPE_CHECKING:
    from gryvia_cli.core.nodes import GpuNode
    from gryvia_cli.core.spend import JobCost
    from gryvia_operator.api import GryviaGpuSku, GryviaQuota, GryviaTenant, GryviaUsageRecord
    from gryvia_operator.api.base import GryviaResource

log = logging.getLogger("gryvia.tui.store")

_MODELS: dict[str, type[GryviaResource]] = {}
"""The model each validated kind is kept as (filled by `_model` on first use)."""
T = TypeVar("T")


def _model(kind: Kind) -> type[GryviaResource]:
    """The pydantic model objects of `kind` are validated with (KeyError: not a model kind)."""
    if kind not in _MODELS:  # first use (watch threads may race here: each fills it whole)
        import gryvia_operator.api as api

        _MODELS.update(
            skus=api.GryviaGpuSku,
            tenants=api.GryviaTenant,
            quotas=api.GryviaQuota,
            usage=api.GryviaUsageRecord,
            budgets=api.GryviaBudget,
            reservations=api.GryviaReservation,
        )
    return _MODELS[kind]


@dataclass(frozen=True)
class JobItem:
    """A job as the views use it: the core summary, tenant (set by `ClusterStore.apply`), UID
    and the raw object."""

    summary: JobSummary
    tenant: str
    uid: str
    raw: dict[str, Any]

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.summary.namespace}/{self.summary.name}"


def object_key(obj: dict[str, Any]) -> str:
    """`namespace/name` for namespaced objects, `name` for cluster-scoped ones."""
    meta = obj.get("metadata") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{ns}/{name}" if ns else str(name)


def _slim_pod(pod: dict[str, Any]) -> dict[str, Any]:
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}

    def res(containers: Any) -> list[dict[str, Any]]:
        return [{"resources": c.get("resources") or {}} for c in containers or []]

    return {
        "metadata": {k: meta.get(k) for k in ("name", "namespace", "labels", "annotations")},
        "spec": {
            "nodeName": spec.get("nodeName"),
            "containers": res(spec.get("containers")),
            "initContainers": res(spec.get("initContainers")),
        },
        "status": {k: (pod.get("status") or {}).get(k) for k in ("phase", "startTime")},
    }


def _slim_node(node: dict[str, Any]) -> dict[str, Any]:
    meta, status = node.get("metadata") or {}, node.get("status") or {}
    return {
        "metadata": {"name": meta.get("name"), "labels": meta.get("labels") or {}},
        "spec": {"unschedulable": (node.get("spec") or {}).get("unschedulable")},
        "status": {
            "conditions": [c for c in status.get("conditions") or [] if c.get("type") == "Ready"],
            "allocatable": status.get("allocatable") or {},
        },
    }


def make_entry(kind: Kind, raw: dict[str, Any]) -> Any:
    """What the store keeps for a raw object of `kind` (None when it does not validate); a
    job's tenant is attributed as if no tenant existed until the store applies it. A job's
    `metadata.managedFields` is dropped from `raw` (in place: the object is the store's)."""
    if kind == "jobs":
        # The server's field-ownership records: about a quarter of a job's memory here, and
        # no view shows them (the YAML tab leaves them out, as `kubectl get -o yaml` does).
        (raw.get("metadata") or {}).pop("managedFields", None)
        return JobItem(
            summarize_job(raw),
            tenant_of_object(raw, ()),
            str((raw.get("metadata") or {}).get("uid") or ""),
            raw,
        )
    if kind == "pods":
        return _slim_pod(raw)
    if kind == "nodes":
        return _slim_node(raw)
    if kind == "gpunodes":
        return raw
    from pydantic import ValidationError

    model = _model(kind)
    try:
        return model.model_validate(raw)
    except (ValidationError, ValueError) as exc:
        log.warning("skipping invalid %s %s: %s", kind, object_key(raw), exc)
        return None


@dataclass(frozen=True)
class Update:
    """One change: a whole list (`entries`), one page of a list still arriving (`entries`
    put beside what the kind holds), a put of `entry` at `key`, or a delete."""

    kind: Kind
    op: Literal["list", "page", "put", "delete"]
    key: str = ""
    entry: Any = None
    entries: dict[str, Any] | None = None


def make_entries(kind: Kind, items: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """What the store keeps for raw objects of `kind`, by key (those that do not validate
    left out)."""
    entries = {}
    for raw in items:
        entry = make_entry(kind, raw)
        if entry is not None:
            entries[object_key(raw)] = entry
    return entries


def list_update(kind: Kind, items: Iterable[dict[str, Any]]) -> Update:
    """An Update replacing every object of `kind` with `items`."""
    return Update(kind, "list", entries=make_entries(kind, items))


def event_update(kind: Kind, event_type: str, raw: dict[str, Any]) -> Update:
    """An Update for one watch event."""
    if event_type == "DELETED":
        return Update(kind, "delete", object_key(raw))
    entry = make_entry(kind, raw)
    if entry is None:
        return Update(kind, "delete", object_key(raw))
    return Update(kind, "put", object_key(raw), entry)


def same_entry(old: Any, new: Any) -> bool:
    """True when `new` (fresh from a list) shows the same object as the stored `old`: a job by
    its raw object (the stored one carries the attributed tenant), anything else by equality."""
    if old is new:
        return True  # a whole list that repeats the entries its pages put
    if isinstance(old, JobItem) and isinstance(new, JobItem):
        return old.raw is new.raw or old.raw == new.raw
    return bool(old == new)


def merge_list(current: dict[str, Any], fresh: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """Merge a (re)list into what a kind holds: `(entries, changed keys)`.

    `entries` has exactly the keys of `fresh` (a relist after `410 Gone` drops what was
    deleted meanwhile and adds what was created, each key once); an unchanged object keeps
    its stored entry, so only added, removed and changed keys are reported and repainted.
    """
    merged: dict[str, Any] = {}
    changed = set(current) - set(fresh)
    for key, entry in fresh.items():
        old = current.get(key)
        if old is not None and same_entry(old, entry):
            merged[key] = old
        else:
            merged[key] = entry
            changed.add(key)
    return merged, changed


@dataclass
class Change:
    """What a batch changed: keys per kind, and the kinds that were (re)listed."""

    keys: dict[Kind, set[str]] = field(default_factory=dict)
    listed: set[Kind] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.keys) or bool(self.listed)

    @property
    def kinds(self) -> set[Kind]:
        """Every kind touched."""
        return set(self.keys) | self.listed


class ClusterStore:
    """Entries by kind and key; `versions[kind]` counts batches that changed that kind."""

    def __init__(self) -> None:
        self.objects: dict[Kind, dict[str, Any]] = {k: {} for k in KINDS}
        self.loaded: set[Kind] = set()
        self.failed: set[Kind] = set()
        self.forbidden: set[Kind] = set()
        """Kinds RBAC refuses cluster-wide: their views say "not allowed" (also in `failed`)."""
        self.paging: set[Kind] = set()
        """Kinds whose list is arriving page by page: what they hold is a part (plus, in a
        relist, objects the list may yet drop); the kind's whole list ends it."""
        self.versions: dict[Kind, int] = dict.fromkeys(KINDS, 0)
        self._cache: dict[str, tuple[tuple[int, ...], Any]] = {}
        self._attributed_with: frozenset[str] = frozenset()

    @property
    def version(self) -> int:
        """Sum of all kind versions (any change bumps it)."""
        return sum(self.versions.values())

    @property
    def jobs(self) -> dict[str, JobItem]:
        """Jobs by `namespace/name`."""
        return cast("dict[str, JobItem]", self.objects["jobs"])

    def models(self, kind: Kind, model: type[T]) -> list[T]:
        """The validated objects of a billing kind (skus, tenants, quotas, usage)."""
        return cast("list[T]", self._held(kind))

    def _held(self, kind: Kind) -> list[Any]:
        return list(self.objects[kind].values())

    def derived(self, name: str, kinds: tuple[Kind, ...], build: Callable[[], T]) -> T:
        """`build()` cached until one of `kinds` changes."""
        stamp = tuple(self.versions[k] for k in kinds)
        hit = self._cache.get(name)
        if hit is not None and hit[0] == stamp:
            return cast("T", hit[1])
        value = build()
        self._cache[name] = (stamp, value)
        return value

    def gpu_nodes(self) -> list[GpuNode]:
        """GPU nodes: GryviaGpuNodes joined with Nodes (core.nodes.gpu_nodes)."""
        from gryvia_cli.core.nodes import gpu_nodes

        return self.derived(
            "gpu_nodes",
            ("gpunodes", "nodes"),
            lambda: gpu_nodes(
                list(self.objects["gpunodes"].values()), list(self.objects["nodes"].values())
            ),
        )

    def allocated(self) -> dict[str, int]:
        """GPUs held per node: from live pods when they can be read, else from placed jobs."""
        from gryvia_cli.core.capacity import allocated_from_jobs
        from gryvia_cli.core.nodes import allocated_by_node

        if "pods" in self.loaded and "pods" not in self.failed:
            return self.derived(
                "alloc", ("pods",), lambda: allocated_by_node(self.objects["pods"].values())
            )
        return self.derived(
            "alloc_jobs",
            ("jobs",),
            lambda: allocated_from_jobs(j.summary for j in self.jobs.values()),
        )

    def skus(self) -> list[GryviaGpuSku]:
        """The GPU price catalog; the default catalog while the cluster publishes no SKU
        (what the operator prices with then)."""
        from gryvia_operator.api.pricing import default_catalog

        held: list[GryviaGpuSku] = self._held("skus")
        return held or self.derived("default_skus", (), default_catalog)

    def usage_by_job(self) -> dict[tuple[str, str], list[GryviaUsageRecord]]:
        """Usage records per (namespace, job name)."""

        def build() -> dict[tuple[str, str], list[GryviaUsageRecord]]:
            out: dict[tuple[str, str], list[GryviaUsageRecord]] = {}
            records: list[GryviaUsageRecord] = self._held("usage")
            for rec in records:
                out.setdefault((rec.namespace, rec.spec.job), []).append(rec)
            return out

        return self.derived("usage_by_job", ("usage",), build)

    def job_cost(self, item: JobItem, now: datetime) -> JobCost:
        """A job's cost so far and estimate (core.estimate rates, this store's records)."""
        from gryvia_cli.core.spend import job_cost

        records = self.usage_by_job().get((item.summary.namespace, item.summary.name), [])
        tenants: list[GryviaTenant] = self._held("tenants")
        quotas: list[GryviaQuota] = self._held("quotas")
        return job_cost(item.summary, item.uid, records, self.skus(), tenants, quotas, now)

    def tenant_names(self) -> frozenset[str]:
        """Names of the GryviaTenants the store holds (cluster-scoped, so keyed by name)."""
        return frozenset(self.objects["tenants"])

    def _attribute(self, change: Change) -> None:
        """Set the tenant of the jobs `change` put, or of every job when the tenants changed;
        jobs whose tenant moved join `change`."""
        names = self.tenant_names()
        jobs = self.jobs
        if names != self._attributed_with:
            self._attributed_with = names
            keys: Iterable[str] = list(jobs)
        elif not names:
            return  # `make_entry` attributed every put job as if no tenant existed: still true
        else:
            keys = [k for k in change.keys.get("jobs", ()) if k in jobs]
        moved = set()
        for key in keys:
            item = jobs[key]
            tenant = tenant_of_object(item.raw, names)
            if tenant != item.tenant:
                jobs[key] = replace(item, tenant=tenant)
                moved.add(key)
        if moved:
            change.keys.setdefault("jobs", set()).update(moved)

    def not_allowed(self, *kinds: Kind) -> str:
        """`not allowed: <kinds> (no cluster-wide rights)` for those of `kinds` RBAC refuses,
        else an empty string."""
        refused = [k for k in kinds if k in self.forbidden]
        return f"not allowed: {', '.join(refused)} (no cluster-wide rights)" if refused else ""

    def pods(self) -> list[dict[str, Any]] | None:
        """Live pods (slim) when readable, else None."""
        if "pods" in self.loaded and "pods" not in self.failed:
            return list(self.objects["pods"].values())
        return None

    def clear(self) -> None:
        """Forget everything (after a context or namespace switch)."""
        for kind, objs in self.objects.items():
            objs.clear()
            self.versions[kind] += 1
        self.loaded.clear()
        self.failed.clear()
        self.forbidden.clear()
        self.paging.clear()
        self._attributed_with = frozenset()

    def apply(self, updates: Iterable[Update]) -> Change:
        """Apply updates in order and return what changed."""
        change = Change()
        for up in updates:
            objs = self.objects[up.kind]
            keys = change.keys.setdefault(up.kind, set())
            if up.op == "list":
                merged, changed = merge_list(objs, up.entries or {})
                keys.update(changed)
                objs.clear()
                objs.update(merged)
                self.loaded.add(up.kind)
                self.failed.discard(up.kind)
                self.paging.discard(up.kind)
                change.listed.add(up.kind)
            elif up.op == "page":
                for key, entry in (up.entries or {}).items():
                    old = objs.get(key)
                    if old is None or not same_entry(old, entry):
                        objs[key] = entry
                        keys.add(key)
                self.paging.add(up.kind)
            elif up.op == "put":
                objs[up.key] = up.entry
                keys.add(up.key)
            else:
                objs.pop(up.key, None)
                keys.add(up.key)
        self._attribute(change)
        for kind in change.kinds:
            self.versions[kind] += 1
        return change
