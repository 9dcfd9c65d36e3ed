"""Pure helpers of `gryvia priority`: the GryviaPriority body, table rows and details."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gryvia_cli.core.manifests import new_object
from gryvia_operator.api.priority import MAX_USER_VALUE, PRIORITY_TABLE, GryviaPriority

PRIORITY_COLUMNS = ("name", "value", "preemption", "ready", "used-by-spec.priority")
PRIORITY_WIDE_COLUMNS = (*PRIORITY_COLUMNS, "priorityclass", "description")
POLICIES = ("PreemptLowerPriority", "Never")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def name_problem(name: str) -> str:
    """Why `name` cannot name a GryviaPriority (and its PriorityClass), "" when it can."""
    if not _NAME.match(name):
        return (
            f'priority name "{name}": use lowercase letters, digits, "-" and ".", starting and '
            "ending with a letter or digit (at most 253 characters)"
        )
    if name.startswith("system-"):
        return f'priority name "{name}": the prefix "system-" is reserved for Kubernetes'
    return ""


def build_priority(
    name: str, value: int, preemption_policy: str, description: str | None
) -> dict[str, Any]:
    """The GryviaPriority to apply. Raises ValueError naming the option to fix."""
    problem = name_problem(name)
    if problem:
        raise ValueError(problem)
    if not -MAX_USER_VALUE <= value <= MAX_USER_VALUE:
        raise ValueError(
            f"--value {value}: must be between -{MAX_USER_VALUE} and {MAX_USER_VALUE} "
            "(higher values are reserved for system classes)"
        )
    if preemption_policy not in POLICIES:
        raise ValueError(f"--preemption {preemption_policy}: use one of {', '.join(POLICIES)}")
    spec: dict[str, Any] = {"value": value, "preemptionPolicy": preemption_policy}
    if description:
        spec["description"] = description
    return new_object("GryviaPriority", name, spec)


def table_range(name: str) -> str:
    """`1-29` when `spec.priority` 1..29 maps to `name`, else "-"."""
    band = next((b for b in PRIORITY_TABLE if b.name == name), None)
    return f"{band.low}-{band.high}" if band else "-"


def _ready(prio: GryviaPriority) -> str:
    conditions = prio.status.conditions if prio.status else None
    ready = next((c for c in conditions or [] if c.type == "Ready"), None)
    if ready is None:
        return "pending"
    return "yes" if ready.status == "True" else f"no ({ready.reason})"


def priority_row(prio: GryviaPriority, wide: bool = False) -> list[Any]:
    """One table row (PRIORITY_COLUMNS, or PRIORITY_WIDE_COLUMNS when `wide`)."""
    row: list[Any] = [
        prio.name,
        prio.spec.value,
        prio.spec.preemption_policy,
        _ready(prio),
        table_range(prio.name),
    ]
    if wide:
        made = prio.status.priority_class_name if prio.status else None
        row += [made or "-", prio.spec.description or ""]
    return row


def priority_details(prio: GryviaPriority, used_by: Mapping[str, int]) -> list[tuple[str, str]]:
    """(label, value) lines of `gryvia priority get`; `used_by`: namespace -> jobs naming it."""
    jobs = ", ".join(f"{ns} ({n})" for ns, n in sorted(used_by.items())) or "none"
    conditions = prio.status.conditions if prio.status else None
    ready = next((c for c in conditions or [] if c.type == "Ready"), None)
    return [
        ("Name", prio.name),
        ("Value", str(prio.spec.value)),
        ("Preemption", prio.spec.preemption_policy),
        ("Description", prio.spec.description or "-"),
        ("PriorityClass", (prio.status.priority_class_name if prio.status else None) or "-"),
        ("Ready", f"{ready.status} {ready.reason}: {ready.message}" if ready else "pending"),
        ("spec.priority", table_range(prio.name)),
        ("Jobs naming it", jobs),
    ]
