"""`gryvia submit --explain`: would this job start now, wait (and until when) or never run,
and why, before anything is created (pure).

The blocker and the estimate come from `gryvia_operator.api.blockers`, the functions the
operator writes `status.pending` / `status.estimatedStart` with, fed with what the CLI reads
(nodes, pods, jobs, quotas, catalog), so the words match what the operator later writes. The
JSON shape is documented in docs/pending.md.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from gryvia_cli.core.estimate import CostEstimate
from gryvia_cli.core.jobs import JobSummary
from gryvia_cli.core.nodes import GpuNode, free_gpus, pod_gpus, pod_holds_node, pod_slices
from gryvia_cli.errors import EXIT_NEVER_RUNS, EXIT_OK, EXIT_WOULD_WAIT
from gryvia_operator.api import GryviaGpuSku, GryviaQuota
from gryvia_operator.api.blockers import (
    Found,
    QuotaFacts,
    clean,
    never_blocker,
    node_blocker,
    quota_blocker,
    stamp,
)
from gryvia_operator.api.gputype import gpu_type_is_any
from gryvia_operator.api.jobfacts import JobFacts, job_facts
from gryvia_operator.api.mig import parse_profile, type_serves
from gryvia_operator.api.names import ANNOTATION_RESERVATION, CLI_API_VERSION
from gryvia_operator.api.pending import EstimatedStart, PendingStatus, never_fits, waiting_line
from gryvia_operator.api.reservation import (
    LABEL_RESERVED_BY,
    LABEL_RESERVED_FOR,
    reservation_blocker,
    reserved_for_others,
)

Verdict = Literal["start-now", "wait", "never"]
EXIT_OF: dict[str, int] = {"start-now": EXIT_OK, "wait": EXIT_WOULD_WAIT, "never": EXIT_NEVER_RUNS}


@dataclass(frozen=True)
class ServerCheck:
    """The API server's dry run of the create (CRD schema, CEL, the admission webhook)."""

    allowed: bool
    message: str = ""
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Explanation:
    """The outcome for one job."""

    name: str
    namespace: str
    verdict: Verdict
    blocker: dict[str, Any] | None
    estimate: dict[str, Any] | None
    nodes_now: tuple[tuple[str, int], ...]
    quotas: tuple[dict[str, Any], ...] = ()
    cost: dict[str, Any] | None = None
    server: ServerCheck | None = None
    kueue: dict[str, Any] | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def exit_code(self) -> int:
        """0 start now, 3 never runs, 4 would wait."""
        return EXIT_OF[self.verdict]

    def as_dict(self) -> dict[str, Any]:
        """One item of the documented JSON (docs/pending.md)."""
        server = self.server
        return {
            "name": self.name,
            "namespace": self.namespace,
            "verdict": self.verdict,
            "exitCode": self.exit_code,
            "serverDryRun": None
            if server is None
            else {
                "allowed": server.allowed,
                "message": server.message or None,
                "warnings": list(server.warnings),
            },
            "placement": {
                "fitsNow": self.verdict == "start-now",
                "nodes": [{"name": n, "freeGPUs": f} for n, f in self.nodes_now],
            },
            "blocker": self.blocker,
            "estimatedStart": self.estimate,
            "quotas": list(self.quotas),
            "cost": self.cost,
            "kueue": self.kueue,
            "warnings": list(self.warnings),
        }

    def lines(self) -> list[str]:
        """The explanation for people."""
        head = {
            "start-now": "would start now",
            "wait": "would wait",
            "never": "would never run",
        }[self.verdict]
        out = [f"{self.name} ({self.namespace}): {head}"]
        if self.server is not None:
            verdict = "accepted" if self.server.allowed else f"refused: {self.server.message}"
            out.append(f"  server dry run: {verdict}")
            out += [f"  server warning: {w}" for w in self.server.warnings]
        if self.nodes_now:
            shown = ", ".join(f"{n} ({f} free)" for n, f in self.nodes_now[:5])
            out.append(f"  nodes that could take a pod now: {shown}")
        if self.blocker is not None:
            pending = PendingStatus.model_validate(self.blocker)
            estimate = EstimatedStart.model_validate(self.estimate or {})
            out.append(f"  {waiting_line(pending, estimate)}")
        for quota in self.quotas:
            out.append(
                f"  quota {quota['team']}: {quota['usedGPUs']} of {quota['maxGPUs']} GPUs in use, "
                f"{quota['afterGPUs']} with this job"
            )
            budget = quota.get("budget")
            if budget:
                hard = ", hard limit" if budget["hardLimit"] else ""
                after = budget["afterUSD"]
                then = "the job is unpriced" if after is None else f"{after:.2f} after this job"
                out.append(
                    f"  budget {quota['team']}: {budget['spentUSD']:.2f} of "
                    f"{budget['monthlyUSD']:.2f} USD spent, {then}{hard}"
                )
        if self.cost is not None and self.cost.get("unpriced"):
            out.append("  cost: unpriced (no enabled GryviaGpuSku prices its GPU type)")
        elif self.cost is not None:
            text = f"  cost: {self.cost['perHour']:.2f} {self.cost['currency']}/hour"
            if self.cost.get("forTimeout") is not None:
                text += f", {self.cost['forTimeout']:.2f} for its timeout {self.cost['timeout']}"
            out.append(text)
        if self.kueue is not None:
            out.append(
                f"  Kueue: LocalQueue {self.kueue['queueName']}; the flavor is chosen at admission"
            )
        out += [f"  warning: {w}" for w in self.warnings]
        return out


def never_reason(
    job: JobSummary,
    namespace: str,
    nodes: Sequence[GpuNode],
    skus: Sequence[GryviaGpuSku],
    quotas: Sequence[GryviaQuota],
) -> str | None:
    """`name: why (Kind)` when the job can never fit (`api.pending.never_fits` with the
    nodes, the enabled SKUs and the smallest `maxGPUs` of the quotas covering `namespace`),
    else None: `gryvia submit`'s fail-fast check."""
    limits = [q.spec.gpu_quota.max_gpus for q in quotas if namespace in q.spec.namespaces]
    found = never_fits(
        job.gpu_type or None,
        job.gpus_per_pod,
        job.pods,
        [(n.gpu_type, n.gpus) for n in nodes],
        [s.spec.gpu_type for s in skus if s.spec.enabled],
        min(limits, default=None),
    )
    if found is None:
        return None
    return f"{job.name or 'job'}: {found.message} ({found.kind})"


def quota_facts_of(quota: GryviaQuota, jobs: Sequence[JobFacts]) -> QuotaFacts:
    """A quota's usage counted from the jobs in its namespaces (the operator's rule: jobs that
    hold GPUs count; Pending/Queued ones it has not admitted are held), its spend from status."""
    spaces = frozenset(quota.spec.namespaces)
    mine = [j for j in jobs if j.namespace in spaces and j.total]
    holding = [j for j in mine if j.holds]
    held = frozenset(j.key for j in mine if not j.holds and j.phase in ("Pending", "Queued"))
    budget, limits = quota.spec.budget, quota.spec.gpu_quota
    status = quota.status.budget_status if quota.status else None
    return QuotaFacts(
        team=quota.spec.team,
        namespaces=spaces,
        max_gpus=limits.max_gpus,
        allocated_gpus=sum(j.total for j in holding),
        running_jobs=len(holding),
        max_running_jobs=limits.max_running_jobs or 0,
        spent=Decimal(repr((status.spent_this_month if status else None) or 0.0)),
        monthly_budget=budget.monthly_budget if budget else None,
        hard_limit=bool(budget and budget.hard_limit),
        held=held,
        max_gpus_per_user=limits.max_gpus_per_user or 0,
    )


def _held_by_job(
    pods: Iterable[Mapping[str, Any]], nodes: set[str], profile: str | None
) -> dict[tuple[str, str], dict[str, int]]:
    from gryvia_cli.core.jobs import job_of_pod

    out: dict[tuple[str, str], dict[str, int]] = {}
    for pod in pods:
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        job = job_of_pod(pod)
        if node not in nodes or not job or not pod_holds_node(pod):
            continue
        count = pod_slices(pod).get(profile, 0) if profile else pod_gpus(pod)
        if count:
            slots = out.setdefault((str((pod.get("metadata") or {}).get("namespace")), job), {})
            slots[node] = slots.get(node, 0) + count
    return out


def explain_job(
    obj: Mapping[str, Any],
    namespace: str,
    *,
    nodes: Sequence[GpuNode],
    allocated: Mapping[str, int],
    pods: Sequence[Mapping[str, Any]],
    jobs: Sequence[Mapping[str, Any]],
    quotas: Sequence[GryviaQuota],
    skus: Sequence[GryviaGpuSku],
    cost: CostEstimate | None,
    server: ServerCheck | None,
    now: dt.datetime,
) -> Explanation:
    """Explain one job (a manifest not yet created) going to `namespace`.

    Order, as the operator decides: the server's dry run refuses it -> never; the fail-fast
    rule -> never (NoSuchGPUType/TooLarge); a quota or budget holds it -> wait; even empty,
    it fits only with nodes other owners' reservations hold -> wait (Reservation); no set of open
    nodes takes it now -> wait (Resources); else start now. A node reserved for the
    reservation the job names (annotation gryvia.io/reservation) is open to it.
    """
    meta = dict(obj.get("metadata") or {})
    name = str(meta.get("name") or meta.get("generateName") or "job")
    body = {
        **obj,
        "metadata": {**meta, "name": name, "namespace": namespace, "creationTimestamp": stamp(now)},
        "status": {"phase": "Pending"},
    }
    me = job_facts(body)
    facts = [job_facts(j) for j in jobs]
    spec = obj.get("spec") or {}
    gpu_type = spec.get("gpuType")
    mine = [q for q in quotas if namespace in q.spec.namespaces]
    qfacts = [quota_facts_of(q, facts) for q in mine]
    amount = _amount(cost)
    quota_rows = tuple(_quota_row(q, me.total, amount) for q in qfacts)
    kueue = {"queueName": spec["queueName"], "flavor": None} if spec.get("queueName") else None

    def made(
        verdict: Verdict,
        found: Found | None = None,
        nodes_now: tuple[tuple[str, int], ...] = (),
    ) -> Explanation:
        blocker, estimate = (clean(found[0]), clean(found[1])) if found else (None, None)
        return Explanation(
            name,
            namespace,
            verdict,
            blocker,
            estimate,
            nodes_now,
            quota_rows,
            _cost(cost),
            server,
            kueue,
            tuple(cost.warnings) if cost else (),
        )

    if server is not None and not server.allowed:
        refused = {"kind": "TooLarge", "needed": me.total, "message": server.message}
        return made("never", (refused, {"unknownReason": f"refused: {server.message}"}))
    if me.total == 0:
        return made("start-now")
    sku_types = [s.spec.gpu_type for s in skus if s.spec.enabled]
    inventory = [(n.gpu_type, n.gpus) for n in nodes]
    found: Found | None = never_blocker(me, gpu_type, inventory, sku_types, qfacts)
    if found is not None:
        return made("never", found)
    usable = [
        n for n in nodes if n.usable and type_serves(n.gpu_type, gpu_type) and n.gpus >= me.per_pod
    ]
    free = {n.name: free_gpus(n, allocated) for n in usable}
    now_nodes = tuple(sorted(((n, f) for n, f in free.items() if f >= me.per_pod), key=_most))
    found = quota_blocker(me, qfacts, facts, now)
    if found is not None:
        return made("wait", found, now_nodes)
    opted = str(_map(meta.get("annotations")).get(ANNOTATION_RESERVATION) or "")
    closed = {n.name for n in usable if n.reserved_for and n.reserved_for != opted}
    open_now = tuple(item for item in now_nodes if item[0] not in closed)
    others = [n for n in usable if n.name in closed]
    # The operator's reserved_elsewhere: even empty, the open nodes cannot take the job and
    # the reserved ones would (a rule of capacity, not of what is free now).
    if others and len(usable) - len(others) < me.pods <= len(usable):
        reservation, text = reserved_for_others([(n.name, _reserved_labels(n)) for n in others])
        return made("wait", reservation_blocker(reservation, text, me.total), open_now)
    if len(open_now) >= me.pods:
        return made("start-now", None, open_now)
    usable = [n for n in usable if n.name not in closed]
    free = {name: f for name, f in free.items() if name not in closed}
    now_nodes = open_now
    profile = parse_profile(gpu_type)
    held = _held_by_job(pods, set(free), profile.name if profile else None)
    shown = "GPUs" if gpu_type_is_any(gpu_type) else str(gpu_type)
    totals = {n.name: n.gpus for n in usable}
    found = node_blocker(me, shown, free, held, facts, now, qfacts, totals)
    return made("wait", found, now_nodes)


def _reserved_labels(node: GpuNode) -> dict[str, str]:
    """The reservation labels of a node, as the Node carries them."""
    labels = {LABEL_RESERVED_FOR: node.reserved_for}
    return labels | ({LABEL_RESERVED_BY: node.reserved_by} if node.reserved_by else {})


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _most(item: tuple[str, int]) -> tuple[int, str]:
    return (-item[1], item[0])


def _amount(cost: CostEstimate | None) -> float | None:
    if cost is None:
        return 0.0
    if cost.unpriced:
        return None
    return cost.for_timeout if cost.for_timeout is not None else cost.per_hour or 0.0


def _quota_row(quota: QuotaFacts, gpus: int, amount: float | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "team": quota.team,
        "maxGPUs": quota.max_gpus,
        "usedGPUs": quota.allocated_gpus,
        "afterGPUs": quota.allocated_gpus + gpus,
        "budget": None,
    }
    if quota.monthly_budget is not None:
        row["budget"] = {
            "monthlyUSD": quota.monthly_budget,
            "spentUSD": round(float(quota.spent), 2),
            "afterUSD": None if amount is None else round(float(quota.spent) + amount, 2),
            "hardLimit": quota.hard_limit,
        }
    return row


def _cost(cost: CostEstimate | None) -> dict[str, Any] | None:
    if cost is not None and cost.unpriced:
        none = dict.fromkeys(("currency", "sku", "perHour", "forTimeout"))
        return none | {"timeout": cost.timeout or None, "unpriced": True}
    if cost is None or cost.rate is None:
        return None
    return {
        "currency": cost.rate.currency,
        "sku": cost.rate.sku,
        "perHour": round(cost.per_hour or 0.0, 4),
        "forTimeout": None if cost.for_timeout is None else round(cost.for_timeout, 4),
        "timeout": cost.timeout or None,
    }


def explain_document(items: Sequence[Explanation]) -> dict[str, Any]:
    """The whole `--explain -o json` document."""
    return {
        "apiVersion": CLI_API_VERSION,
        "kind": "Explain",
        "exitCode": overall_exit(items),
        "items": [i.as_dict() for i in items],
    }


def overall_exit(items: Sequence[Explanation]) -> int:
    """3 when any job would never run, else 4 when any would wait, else 0."""
    codes = {i.exit_code for i in items}
    for code in (EXIT_NEVER_RUNS, EXIT_WOULD_WAIT):
        if code in codes:
            return code
    return EXIT_OK
