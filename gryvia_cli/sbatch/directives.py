"""Directives that become other GryviaAIJob fields: --qos, --requeue/--no-requeue, --signal,
--account (sbatch(1); the tables below are the documented mapping).

* `--qos` -> `spec.priority` by QOS_PRIORITY (Slurm sites name their QOS freely; the usual
  names are listed, any other QOS is reported and keeps the default priority 0).
* `--requeue` -> nothing to set: disruptions (node failure, eviction, preemption) already
  recreate the pods without counting against `spec.retryLimit`, which is what Slurm's requeue
  does; `--no-requeue` -> `spec.retryLimit: 0` (no retry after the script fails, also
  Gryvia's default). Disruptions are still retried; the report says so.
* `--signal=[{R|B}:]SIG[@TIME]` -> env GRYVIA_SLURM_SIGNAL for the in-pod runtime, which
  sends SIG to the batch script (`B:`) or its whole process group TIME seconds (default 60)
  before the time limit; without --time there is no limit to signal before.
* `--account=X` -> namespace `tenant-X` when the GryviaTenant X exists (`ImportSettings.tenants`,
  read by `submit`) and no namespace was given; otherwise reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from gryvia_cli.sbatch.model import ImportSettings, Issue, ParsedScript, unsupported, warning
from gryvia_operator.api.names import TENANT_NAMESPACE_PREFIX

QOS_PRIORITY: Final[dict[str, int]] = {
    "scavenger": 0, "preempt": 0, "preemptible": 0, "standby": 0, "free": 0,
    "low": 20, "long": 30, "normal": 50, "default": 50, "medium": 50, "short": 60,
    "debug": 70, "devel": 70, "interactive": 70, "test": 70,
    "high": 80, "priority": 80, "urgent": 90, "realtime": 90,
}  # fmt: skip
SIGNAL_ENV: Final = "GRYVIA_SLURM_SIGNAL"
DEFAULT_SIGNAL_TIME: Final = 60


@dataclass
class Extra:
    """Fields the directives set: spec fields, env, the namespace, findings, mapping notes."""

    spec: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    namespace: str | None = None
    issues: list[Issue] = field(default_factory=list)


Note = Callable[[str, str, str | None], None]


def map_directives(
    parsed: ParsedScript,
    settings: ImportSettings,
    namespace: str | None,
    time_limit: int | None,
    note: Note,
) -> Extra:
    """Read --qos, --requeue/--no-requeue, --signal and --account (see the module docstring)."""
    extra = Extra()
    qos = parsed.last("qos")
    if qos is not None and qos.value:
        priority = QOS_PRIORITY.get(qos.value.lower())
        if priority is None:
            known = ", ".join(sorted(QOS_PRIORITY))
            extra.issues.append(
                unsupported(
                    "unsupported-directive",
                    f"{qos.show()}: not a QOS name Gryvia knows ({known}); the job keeps "
                    "priority 0 (set spec.priority 0..100)",
                    qos.line,
                    qos.directive,
                )
            )
        else:
            extra.spec["priority"] = priority
            note("qos", "spec.priority", str(priority))
    last = [d.key for d in parsed.directives if d.key in ("requeue", "no-requeue")]
    if last and last[-1] == "requeue":
        note(
            "requeue",
            "pods are recreated after disruptions without counting (spec.retryLimit stays 0)",
            None,
        )
    elif last:
        note(
            "no-requeue",
            "spec.retryLimit (no retry after a failure; disruptions are still retried)",
            "0",
        )
    _signal(parsed, time_limit, extra, note)
    _account(parsed, settings, namespace, extra, note)
    return extra


def _signal(parsed: ParsedScript, time_limit: int | None, extra: Extra, note: Note) -> None:
    directive = parsed.last("signal")
    if directive is None or not directive.value:
        return
    match = re.fullmatch(r"(?:([RB]{1,2}):)?(?:SIG)?([A-Z0-9]+)(?:@(\d+))?", directive.value, re.I)
    if match is None:
        return  # policy.validate reports the bad value
    flags, name, when = match.group(1) or "", match.group(2).upper(), match.group(3)
    seconds = int(when) if when else DEFAULT_SIGNAL_TIME
    if not time_limit:
        extra.issues.append(
            warning(
                "signal-without-time-limit",
                f"{directive.show()}: the signal is sent {seconds} s before the time limit, but "
                "the script sets no --time, so it is never sent",
                directive.line,
                directive.directive,
            )
        )
        return
    target = "batch" if "B" in flags.upper() else "all"
    extra.env[SIGNAL_ENV] = f"{name}@{seconds}@{target}"
    note("signal", "the in-pod runtime's timer (env GRYVIA_SLURM_SIGNAL)", extra.env[SIGNAL_ENV])


def _account(
    parsed: ParsedScript,
    settings: ImportSettings,
    namespace: str | None,
    extra: Extra,
    note: Note,
) -> None:
    directive = parsed.last("account")
    if directive is None or not directive.value:
        return
    account = directive.value
    target = f"{TENANT_NAMESPACE_PREFIX}{account}"
    if settings.tenants is not None and account in settings.tenants and namespace is None:
        extra.namespace = target
        note("account", "metadata.namespace (the tenant's namespace)", target)
        return
    if namespace is not None:
        why = f"the namespace {namespace} was given, so the job goes there"
    elif settings.tenants is None:
        why = f"no cluster was read; submit with -n {target} if that tenant exists"
    else:
        why = f"there is no tenant {account}; the job goes to the current namespace"
    extra.issues.append(
        unsupported(
            "unsupported-directive",
            f"{directive.show()}: maps to the tenant namespace {target}, but {why}",
            directive.line,
            directive.directive,
        )
    )
