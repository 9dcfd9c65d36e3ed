"""The platform report behind `gryvia status`: each part OK, Warning, Error or disabled.

Parts: operator, webhook, CRDs, GPU nodes and jobs; the operator and the CRDs are required.
A line about deleted job pods held by the save-log finalizer is added when some wait; it is a
required Error when no operator runs to release them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gryvia_cli.core import timefmt
from gryvia_cli.core.cells import plural
from gryvia_cli.core.finalizers import COMPONENT as FINALIZERS
from gryvia_cli.core.finalizers import finalizer_state
from gryvia_cli.core.jobs import JobSummary
from gryvia_cli.core.nodes import GpuNode
from gryvia_cli.core.phases import count_phases
from gryvia_operator.api.names import API_VERSION

OK, WARNING, ERROR, DISABLED = "OK", "Warning", "Error", "disabled"
OPERATOR_LEASE_PREFIX = "gryvia-operator"


@dataclass(frozen=True)
class Component:
    """One line of the report."""

    name: str
    state: str
    message: str
    required: bool = False

    def as_dict(self) -> dict[str, Any]:
        """JSON shape: `{name, state, message, required}`."""
        return {
            "name": self.name,
            "state": self.state,
            "message": self.message,
            "required": self.required,
        }


@dataclass
class PlatformInputs:
    """What the status command read; None marks something it could not read."""

    platform_namespace: str
    deployments: list[dict[str, Any]] | None = None
    pods: list[dict[str, Any]] | None = None
    leases: list[dict[str, Any]] | None = None
    peerings: list[dict[str, Any]] | None = None
    webhooks: list[dict[str, Any]] | None = None
    served: set[str] | None = None
    expected: Mapping[str, str] = field(default_factory=dict)
    """plural -> kind of every Gryvia kind."""
    local_webhooks: list[tuple[str, bool]] = field(default_factory=list)
    """(url, answered) of self-registered Gryvia webhooks on this machine (a local operator)."""
    gpu_nodes: list[GpuNode] | None = None
    jobs: list[JobSummary] | None = None
    job_pods: list[dict[str, Any]] | None = None
    """Pods of every namespace labelled with a job (None: not readable)."""
    read_warnings: list[str] = field(default_factory=list)


@dataclass
class PlatformReport:
    """The computed report."""

    components: list[Component]
    warnings: list[str]
    errors: list[str]
    job_phases: dict[str, int]

    @property
    def broken(self) -> bool:
        """True when a required component is in Error (the command exits 1)."""
        return any(c.required and c.state == ERROR for c in self.components)

    @property
    def overall(self) -> str:
        """`error` (a required part broken), `warn` (anything else not OK) or `ok`."""
        if self.broken:
            return "error"
        if any(c.state in (WARNING, ERROR) for c in self.components):
            return "warn"
        return "ok"

    def as_dict(self) -> dict[str, Any]:
        """JSON shape: overall, components, warnings, errors, jobs (phase -> count)."""
        return {
            "overall": self.overall,
            "components": [c.as_dict() for c in self.components],
            "warnings": self.warnings,
            "errors": self.errors,
            "jobs": self.job_phases,
        }


def _operator_from_deployments(
    deployments: Sequence[Mapping[str, Any]], ns: str
) -> Component | None:
    """The operator Deployments' line: Error when none of them has a ready replica (scaled
    to 0, or its pods not ready: nothing in the cluster runs the operator), Warning when some
    replicas are not ready, else OK; None without an operator Deployment."""
    ops = [d for d in deployments if "operator" in str((d.get("metadata") or {}).get("name", ""))]
    if not ops:
        return None
    parts, state, ready_total = [], OK, 0
    for dep in ops:
        spec, status = dep.get("spec") or {}, dep.get("status") or {}
        desired = int(spec.get("replicas", 1) or 0)
        ready, available = (
            int(status.get("readyReplicas") or 0),
            int(status.get("availableReplicas") or 0),
        )
        name = (dep.get("metadata") or {}).get("name")
        parts.append(
            f"Deployment {ns}/{name} Desired: {desired}, Ready: {ready}/{desired}, "
            f"Available: {available}/{desired}"
        )
        ready_total += ready
        if ready < desired:
            state = WARNING
    if ready_total == 0:
        state = ERROR
    return Component("Operator", state, "; ".join(parts), True)


def _operator_from_leases(leases: Sequence[Mapping[str, Any]], now: datetime) -> Component | None:
    ours = [
        lease
        for lease in leases
        if str((lease.get("metadata") or {}).get("name", "")).startswith(OPERATOR_LEASE_PREFIX)
    ]
    if not ours:
        return None
    best = max(ours, key=lambda lease: str((lease.get("spec") or {}).get("renewTime") or ""))
    spec, meta = best.get("spec") or {}, best.get("metadata") or {}
    renewed = timefmt.seconds_between(spec.get("renewTime") or spec.get("acquireTime"), now)
    ttl = int(spec.get("leaseDurationSeconds") or 30)
    holder = spec.get("holderIdentity") or "unknown"
    where = f"lease {meta.get('namespace')}/{meta.get('name')} held by {holder}"
    if renewed is None or renewed > 2 * ttl:
        ago = (
            "never renewed"
            if renewed is None
            else f"last renewed {timefmt.human_duration(renewed)} ago"
        )
        return Component("Operator", ERROR, f"local operator not running: {where}, {ago}", True)
    return Component(
        "Operator",
        OK,
        f"local operator: {where}, renewed {timefmt.human_duration(renewed)} ago",
        True,
    )


def _operator_from_peerings(
    peerings: Sequence[Mapping[str, Any]], now: datetime
) -> Component | None:
    for peering in peerings:
        if "gryvia" not in str((peering.get("metadata") or {}).get("name", "")):
            continue
        for ident, peer in (peering.get("status") or {}).items():
            seen = (
                timefmt.seconds_between((peer or {}).get("lastseen"), now)
                if isinstance(peer, dict)
                else None
            )
            if seen is not None and seen < 120:
                return Component(
                    "Operator",
                    OK,
                    f"local operator: kopf peer {ident}, seen {timefmt.human_duration(seen)} ago",
                    True,
                )
    return None


def _operator_from_local_webhook(probes: Sequence[tuple[str, bool]]) -> Component | None:
    if not probes:
        return None
    for url, answered in probes:
        if answered:
            return Component("Operator", OK, f"local operator: its webhook answers at {url}", True)
    url = probes[0][0]
    text = f"local operator not running: its webhook at {url} does not answer"
    return Component("Operator", ERROR, text, True)


def local_webhook_urls(webhooks: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """URLs of Gryvia webhooks registered with a loopback `clientConfig.url` (what an
    operator started on this machine with --webhook-self-register registers)."""
    from urllib.parse import urlparse

    urls = []
    for config in webhooks or []:
        for hook in config.get("webhooks") or []:
            url = str((hook.get("clientConfig") or {}).get("url") or "")
            rules = [res for rule in hook.get("rules") or [] for res in rule.get("resources") or []]
            host = urlparse(url).hostname or ""
            if (
                url
                and "gryviaaijobs" in rules
                and (host.startswith("127.") or host in ("localhost", "::1"))
            ):
                urls.append(url)
    return urls


def operator_component(inputs: PlatformInputs, now: datetime) -> Component:
    """The operator: a Deployment in the platform namespace with a ready replica, else a
    fresh `gryvia-operator*` Lease, a kopf peering, or a self-registered webhook on this
    machine that answers. A Deployment with 0 ready replicas is OK only when such a local
    operator answers; Error when nothing runs the operator."""
    deployed = _operator_from_deployments(inputs.deployments or [], inputs.platform_namespace)
    if deployed is not None and deployed.state != ERROR:
        return deployed
    local = next(
        (
            found
            for found in (
                _operator_from_leases(inputs.leases or [], now),
                _operator_from_peerings(inputs.peerings or [], now),
                _operator_from_local_webhook(inputs.local_webhooks),
            )
            if found is not None
        ),
        None,
    )
    if deployed is not None:
        if local is not None and local.state == OK:
            return Component("Operator", OK, f"{local.message}; {deployed.message}", True)
        why = local.message if local is not None else "no local operator answers"
        text = f"no ready operator replica: {deployed.message}; {why}"
        return Component("Operator", ERROR, text, True)
    if local is not None:
        return local
    return Component(
        "Operator",
        ERROR,
        f"not found: no operator Deployment in {inputs.platform_namespace} and no running local "
        "operator (install the chart, or run python -m gryvia_operator)",
        True,
    )


def webhook_component(webhooks: Sequence[Mapping[str, Any]] | None) -> Component:
    """OK when a ValidatingWebhookConfiguration has a rule on gryviaaijobs."""
    if webhooks is None:
        return Component("Webhook", WARNING, "could not read ValidatingWebhookConfigurations")
    for config in webhooks:
        for hook in config.get("webhooks") or []:
            for rule in hook.get("rules") or []:
                if "gryviaaijobs" in (rule.get("resources") or []) or "*" in (
                    rule.get("resources") or []
                ):
                    name = (config.get("metadata") or {}).get("name")
                    policy = hook.get("failurePolicy", "Fail")
                    return Component(
                        "Webhook", OK, f"{name} ({hook.get('name')}, failurePolicy {policy})"
                    )
    return Component(
        "Webhook",
        WARNING,
        "no validating webhook for GryviaAIJob: only the CRD schema checks new jobs",
    )


def crd_component(served: set[str] | None, expected: Mapping[str, str]) -> Component:
    """Error without GryviaAIJob, Warning when some kinds are missing, else OK."""
    if served is None:
        return Component("CRDs", ERROR, f"{API_VERSION} is not served: install the chart", True)
    missing = [kind for plural, kind in expected.items() if plural not in served]
    if "gryviaaijobs" not in served:
        return Component("CRDs", ERROR, "GryviaAIJob is not available on this cluster", True)
    if missing:
        return Component(
            "CRDs",
            WARNING,
            f"{len(expected) - len(missing)}/{len(expected)} kinds; missing: {', '.join(missing)}",
            True,
        )
    return Component("CRDs", OK, f"{len(expected)}/{len(expected)} Gryvia kinds served", True)


def nodes_component(nodes: Sequence[GpuNode] | None) -> Component:
    """GPU nodes Ready/Degraded/other, with their GPUs; Warning when any is not healthy."""
    if nodes is None:
        return Component("GPU nodes", WARNING, "could not read GPU nodes")
    if not nodes:
        return Component("GPU nodes", DISABLED, "no GPU nodes registered")
    healthy = [n for n in nodes if n.healthy]
    degraded = [n for n in nodes if n.phase == "Degraded"]
    other = len(nodes) - len(healthy) - len(degraded)
    gpus = sum(n.gpus for n in healthy)
    text = (
        f"{len(nodes)} nodes: {len(healthy)} Ready ({plural(gpus, 'GPU')}), "
        f"{len(degraded)} Degraded, {other} other"
    )
    unregistered = sum(1 for n in nodes if n.source == "Node")
    if unregistered:
        text += f"; {unregistered} not registered as GryviaGpuNode"
    return Component("GPU nodes", OK if len(healthy) == len(nodes) else WARNING, text)


def pod_errors(pods: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """`pod X: Reason` for platform pods that are not Running and Ready."""
    out = []
    for pod in pods or []:
        name = (pod.get("metadata") or {}).get("name")
        status = pod.get("status") or {}
        if status.get("phase") == "Succeeded":
            continue
        for cs in status.get("containerStatuses") or []:
            waiting = (cs.get("state") or {}).get("waiting")
            if waiting or not cs.get("ready"):
                reason = (waiting or {}).get("reason") or "not ready"
                out.append(f"pod {name}: {reason}")
                break
        else:
            if status.get("phase") not in ("Running",):
                out.append(f"pod {name}: {status.get('phase') or 'Unknown'}")
    return out


def build_report(inputs: PlatformInputs, now: datetime) -> PlatformReport:
    """Compute every component, the pod errors and the job counts."""
    jobs = inputs.jobs
    phases = count_phases(j.phase for j in jobs) if jobs is not None else {}
    if jobs is None:
        jobs_line = Component("Jobs", WARNING, "could not read GryviaAIJobs")
    else:
        shown = ", ".join(f"{n} {p.lower()}" for p, n in phases.items() if n) or "none"
        jobs_line = Component("Jobs", OK, f"{len(jobs)} jobs: {shown}")
    operator = operator_component(inputs, now)
    components = [
        operator,
        webhook_component(inputs.webhooks),
        crd_component(inputs.served, inputs.expected),
        nodes_component(inputs.gpu_nodes),
        jobs_line,
    ]
    held = finalizer_state(inputs.job_pods, operator_running=operator.state != ERROR)
    if held is not None:
        components.append(Component(FINALIZERS, *held))
    return PlatformReport(components, list(inputs.read_warnings), pod_errors(inputs.pods), phases)
